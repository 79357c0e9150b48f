import { ConfigError } from '../../../src/errors';
import { formatRuntimeEndpoint, grpcTarget, parseRuntimeEndpoint } from '../../../src/health/endpoint';

describe('parseRuntimeEndpoint', () => {
  it.each([
    ['unix:///var/run/docker.sock', { kind: 'unix', socketPath: '/var/run/docker.sock' }],
    ['/run/containerd/containerd.sock', { kind: 'unix', socketPath: '/run/containerd/containerd.sock' }],
    ['tcp://127.0.0.1:2376', { kind: 'tcp', host: '127.0.0.1', port: 2376 }],
    ['http://docker.example:2375', { kind: 'tcp', host: 'docker.example', port: 2375 }],
    ['https://docker.example:2376/', { kind: 'tcp', host: 'docker.example', port: 2376 }],
    ['tcp://[::1]:2375', { kind: 'tcp', host: '::1', port: 2375 }],
  ])('reads %s', (text, endpoint) => {
    expect(parseRuntimeEndpoint(text)).toEqual(endpoint);
  });

  it.each([
    ['unix://relative.sock', /must be absolute/],
    ['docker.sock', /is not an endpoint/],
    ['tcp://host', /is not an endpoint/],
    ['tcp://host:0', /port 0 is not in 1..65535/],
    ['tcp://host:70000', /port 70000 is not in 1..65535/],
    ['tcp://[nothost]:2375', /is not an IPv6 address/],
    ['npipe:////./pipe/docker_engine', /is not an endpoint/],
  ])('refuses %s with a ConfigError naming it', (text, message) => {
    expect(() => parseRuntimeEndpoint(text)).toThrow(ConfigError);
    expect(() => parseRuntimeEndpoint(text)).toThrow(message);
    expect(() => parseRuntimeEndpoint(text)).toThrow(JSON.stringify(text));
  });

  it('formats endpoints for messages and for gRPC', () => {
    expect(formatRuntimeEndpoint({ kind: 'unix', socketPath: '/a.sock' })).toBe('unix:///a.sock');
    expect(formatRuntimeEndpoint({ kind: 'tcp', host: '::1', port: 2375 })).toBe('tcp://[::1]:2375');
    expect(grpcTarget({ kind: 'unix', socketPath: '/a.sock' })).toBe('unix:///a.sock');
    expect(grpcTarget({ kind: 'tcp', host: '127.0.0.1', port: 10010 })).toBe('127.0.0.1:10010');
  });
});
