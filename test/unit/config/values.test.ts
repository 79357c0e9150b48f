import { parseEndpoint, parseGoDuration, parseHostPort, parsePositiveDurationMs } from '../../../src/config/values';

describe('Go durations', () => {
  it.each([
    ['300ms', 300e6],
    ['10s', 10e9],
    ['1m30s', 90e9],
    ['1h', 3600e9],
    ['1.5s', 1.5e9],
    ['.5s', 0.5e9],
    ['2h45m0.5s', (2 * 3600 + 45 * 60 + 0.5) * 1e9],
    ['500us', 500e3],
    ['500µs', 500e3],
    ['7ns', 7],
    ['0', 0],
    ['-1s', -1e9],
  ])('%s is %d ns', (text, nanoseconds) => {
    expect(parseGoDuration(text)).toBeCloseTo(nanoseconds);
  });

  it.each(['10', '', 's', '1.s.', '1d', '1 s', 'ten seconds', '1S', '5m junk', '.s'])('%j is not a duration', (text) => {
    expect(parseGoDuration(text)).toBeNull();
  });

  it('gives whole milliseconds for a positive duration', () => {
    expect(parsePositiveDurationMs('1m30s')).toEqual({ ok: true, value: 90000 });
    expect(parsePositiveDurationMs('1.5ms')).toEqual({ ok: true, value: 2 });
  });

  it('refuses zero, negative and sub-millisecond durations, and non-durations, saying which', () => {
    expect(parsePositiveDurationMs('10')).toEqual({ ok: false, problem: '"10" is not a duration (e.g. 10s, 1m30s, 500ms)' });
    expect(parsePositiveDurationMs('0s')).toEqual({ ok: false, problem: 'must be greater than 0; got "0s"' });
    expect(parsePositiveDurationMs('-5s')).toEqual({ ok: false, problem: 'must be greater than 0; got "-5s"' });
    expect(parsePositiveDurationMs('10us')).toEqual({ ok: false, problem: 'must be at least 1ms; got "10us"' });
  });
});

describe('host:port', () => {
  it.each([
    ['127.0.0.1:9443', '127.0.0.1', 9443],
    [':9443', '', 9443],
    ['[::1]:9443', '::1', 9443],
    ['[::]:0', '::', 0],
    ['peer0.org1.example.com:9443', 'peer0.org1.example.com', 9443],
    ['0.0.0.0:65535', '0.0.0.0', 65535],
  ])('%s is host %j port %d', (text, host, port) => {
    expect(parseHostPort(text, 0)).toEqual({ ok: true, value: { host, port } });
  });

  it.each(['9443', '', '127.0.0.1', '127.0.0.1:', 'host:port', 'http://h:1', 'a b:1', '[::1]9443', '[::1'])('%j is not host:port', (text) => {
    expect(parseHostPort(text, 0)).toEqual({ ok: false, problem: `${JSON.stringify(text)} is not host:port` });
  });

  it('tells how to write an IPv6 host', () => {
    expect(parseHostPort('::1:9443', 0)).toEqual({ ok: false, problem: '"::1:9443" is not host:port (write an IPv6 host in brackets: [::1]:9443)' });
    expect(parseHostPort('[notipv6]:1', 0)).toEqual({ ok: false, problem: '"[notipv6]:1" is not host:port ("notipv6" in brackets is not an IPv6 address)' });
  });

  it('checks the port range, with port 0 allowed only when asked', () => {
    expect(parseHostPort('127.0.0.1:0', 0)).toEqual({ ok: true, value: { host: '127.0.0.1', port: 0 } });
    expect(parseHostPort('127.0.0.1:0', 1)).toEqual({ ok: false, problem: 'port 0 in "127.0.0.1:0" is not in 1..65535' });
    expect(parseHostPort('127.0.0.1:65536', 0)).toEqual({ ok: false, problem: 'port 65536 in "127.0.0.1:65536" is not in 0..65535' });
  });
});

describe('container runtime endpoints', () => {
  it.each([
    ['unix:///var/run/docker.sock', 'unix', 'unix:///var/run/docker.sock'],
    ['/run/containerd/containerd.sock', 'unix', 'unix:///run/containerd/containerd.sock'],
    ['tcp://127.0.0.1:2375', 'tcp', 'tcp://127.0.0.1:2375'],
    ['http://localhost:2375', 'tcp', 'tcp://localhost:2375'],
    ['https://localhost:2376/', 'tcp', 'tcp://localhost:2376'],
    ['tcp://[::1]:2375', 'tcp', 'tcp://[::1]:2375'],
  ])('%s is a %s endpoint %s', (text, kind, url) => {
    expect(parseEndpoint(text)).toEqual({ ok: true, value: { kind, url } });
  });

  it.each([
    [
      'unix://var/run/docker.sock',
      '"unix://var/run/docker.sock" is not an absolute socket path (use unix:///path/to.sock, /path/to.sock, or tcp://host:port (docker only))',
    ],
    ['docker.sock', '"docker.sock" is not an endpoint (use unix:///path/to.sock, /path/to.sock, or tcp://host:port (docker only))'],
    [
      'npipe:////./pipe/docker_engine',
      '"npipe:////./pipe/docker_engine" is not an endpoint (use unix:///path/to.sock, /path/to.sock, or tcp://host:port (docker only))',
    ],
    ['tcp://localhost', '"tcp://localhost" is not an endpoint: "localhost" is not host:port'],
    ['tcp://:2375', '"tcp://:2375" is not an endpoint: the host is missing'],
    ['tcp://h:0', '"tcp://h:0" is not an endpoint: port 0 in "h:0" is not in 1..65535'],
  ])('%j is refused', (text, problem) => {
    expect(parseEndpoint(text)).toEqual({ ok: false, problem });
  });
});
