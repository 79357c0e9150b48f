import { startOperationsSystem, type OperationsSystem } from '../../../src/system';
import { testConfig } from '../../support/config';
import { request } from '../../support/http';
import { LogCapture } from '../../support/log-capture';
import { createTestPki, type TestPki, serverTls } from '../../support/pki';
import { rawExchange, type RawOptions } from '../../support/raw-http';

/** Issue 18 item 14, the HTTP parts: transfer codings, bounded echoes, GET's spec PUT back, which header limit. */
const put = 'PUT /logspec HTTP/1.1\r\nHost: localhost\r\nContent-Length: 16\r\n\r\n{"spec":"debug"}';
const manyFields = `GET /version HTTP/1.1\r\nHost: localhost\r\n${'h: v\r\n'.repeat(1000)}\r\n`;
const bigField = `GET /version HTTP/1.1\r\nHost: localhost\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`;

/** `a1,a2,...,aN=debug`: short to send, about twice as long once normalised (`a1=debug:a2=debug:...`). */
function fanOutSpec(loggers: number): string {
  return `${Array.from({ length: loggers }, (_, index) => `l${index}`).join(',')}=debug`;
}

describe('HTTP bounds (plain HTTP)', () => {
  let system: OperationsSystem;
  beforeAll(async () => {
    system = await startOperationsSystem({ config: testConfig(), env: {}, logStream: new LogCapture() });
  });
  afterAll(async () => system.stop());
  beforeEach(() => system.setLogSpec('info'));

  it.each(['gzip, chunked', 'deflate,chunked', 'identity, chunked'])(
    'Transfer-Encoding %s: 501 and the connection closed (as Go), the pipelined PUT not run',
    async (codings) => {
      const exchange = await rawExchange(system.address.port, {
        send: `PUT /logspec HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: ${codings}\r\n\r\n10\r\n{"spec":"debug"}\r\n0\r\n\r\n${put}`,
        giveUpMs: 5000,
      });
      expect(exchange.responses.map((response) => response.status)).toEqual([501]);
      expect(exchange.responses[0]?.json).toEqual({ error: expect.stringContaining('only chunked') });
      expect(exchange.responses[0]?.headers.connection).toBe('close');
      expect(exchange.gaveUp).toBe(false);
      expect(system.getLogSpec()).toBe('info');
    },
  );

  it('Transfer-Encoding chunked alone is still read', async () => {
    const exchange = await rawExchange(system.address.port, {
      send: 'PUT /logspec HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n10\r\n{"spec":"debug"}\r\n0\r\n\r\n',
      giveUpMs: 5000,
    });
    expect(exchange.responses[0]?.status).toBe(204);
    expect(system.getLogSpec()).toBe('debug');
  });

  it('an invalid 16 KB spec gets a short error, not the spec echoed twice', async () => {
    const spec = `${'x'.repeat(16_000)}`;
    const answer = await request(`${system.url}/logspec`, { method: 'PUT', body: JSON.stringify({ spec }) });
    expect(answer.status).toBe(400);
    const { error } = answer.json as { error: string };
    expect(error).toMatch(/^invalid logging specification 'x{100}'\.\.\. \(16000 characters\): bad segment 'x{100}'\.\.\. \(16000 characters\)$/);
    expect(Buffer.byteLength(error)).toBeLessThan(400);
  });

  it("a short invalid spec still gets Fabric's message, whole", async () => {
    const answer = await request(`${system.url}/logspec`, { method: 'PUT', body: JSON.stringify({ spec: 'a=debug:b=nope' }) });
    expect(answer.json).toEqual({ error: "invalid logging specification 'a=debug:b=nope': bad segment 'b=nope'" });
  });

  it('a spec under 16 KiB whose normalised form would not fit a PUT body is refused (400, saying so), nothing changes', async () => {
    const spec = fanOutSpec(2300);
    expect(Buffer.byteLength(JSON.stringify({ spec }))).toBeLessThan(16 * 1024);
    const answer = await request(`${system.url}/logspec`, { method: 'PUT', body: JSON.stringify({ spec }) });
    expect(answer.status).toBe(400);
    expect(answer.json).toEqual({ error: expect.stringMatching(/characters once normalised .* at most 16373 are accepted/) });
    expect(system.getLogSpec()).toBe('info');
  });

  it('what GET /logspec returns, PUT /logspec accepts (the largest fan-out that is accepted)', async () => {
    // 1,380 loggers normalise to just under the limit.
    const first = await request(`${system.url}/logspec`, { method: 'PUT', body: JSON.stringify({ spec: fanOutSpec(1380) }) });
    expect(first.status).toBe(204);
    const got = await request(`${system.url}/logspec`);
    expect(got.body.length).toBeGreaterThan(15_000);
    const again = await request(`${system.url}/logspec`, { method: 'PUT', body: got.body });
    expect(again.status).toBe(204);
    expect(system.getLogSpec()).toBe((got.json as { spec: string }).spec);
  });

  it('a long unknown path is echoed bounded in the 404', async () => {
    const answer = await request(`${system.url}/${'p'.repeat(8000)}`);
    expect(answer.status).toBe(404);
    expect(Buffer.byteLength((answer.json as { error: string }).error)).toBeLessThan(300);
  });

  it('1,000 five-byte headers: the 431 says the field count was exceeded', async () => {
    const exchange = await rawExchange(system.address.port, { send: manyFields, giveUpMs: 5000 });
    expect(exchange.responses[0]?.status).toBe(431);
    expect(exchange.responses[0]?.json).toEqual({ error: 'request has more than 1000 header fields' });
  });

  it('999 five-byte headers besides Host pass', async () => {
    const exchange = await rawExchange(system.address.port, {
      send: `GET /version HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n${'h: v\r\n'.repeat(998)}\r\n`,
      giveUpMs: 5000,
    });
    expect(exchange.responses[0]?.status).toBe(200);
  });

  it('one 20 KB header: the 431 says the size was exceeded', async () => {
    const exchange = await rawExchange(system.address.port, { send: bigField, giveUpMs: 5000 });
    expect(exchange.responses[0]?.status).toBe(431);
    expect(exchange.responses[0]?.json).toEqual({ error: 'request headers are larger than 16384 bytes' });
  });

  it('a 20 KB header behind a keep-alive request: still the size', async () => {
    const exchange = await rawExchange(system.address.port, { send: `GET /version HTTP/1.1\r\nHost: localhost\r\n\r\n${bigField}`, giveUpMs: 5000 });
    expect(exchange.responses.map((response) => response.status)).toEqual([200, 431]);
    expect(exchange.responses[1]?.json).toEqual({ error: 'request headers are larger than 16384 bytes' });
  });
});

describe('HTTP bounds (TLS)', () => {
  let pki: TestPki;
  let system: OperationsSystem;
  let tls: RawOptions['tls'];
  beforeAll(async () => {
    pki = await createTestPki();
    system = await startOperationsSystem({
      config: testConfig({
        operations: {
          tls: serverTls(pki),
        },
      }),
      env: {},
      logStream: new LogCapture(),
    });
    tls = { ca: pki.serverCA.certPem, cert: pki.client.certPem, key: pki.client.keyPem };
  });
  afterAll(async () => {
    await system.stop();
    await pki.cleanup();
  });

  it('the 431 names the field count or the size over TLS too', async () => {
    const many = await rawExchange(system.address.port, { send: manyFields, giveUpMs: 5000, tls });
    expect(many.responses[0]?.json).toEqual({ error: 'request has more than 1000 header fields' });
    const big = await rawExchange(system.address.port, { send: bigField, giveUpMs: 5000, tls });
    expect(big.responses[0]?.json).toEqual({ error: 'request headers are larger than 16384 bytes' });
  });

  it('Transfer-Encoding gzip, chunked: 501 and close over TLS, the PUT not run', async () => {
    const exchange = await rawExchange(system.address.port, {
      send: `PUT /logspec HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: gzip, chunked\r\n\r\n10\r\n{"spec":"debug"}\r\n0\r\n\r\n${put}`,
      giveUpMs: 5000,
      tls,
    });
    expect(exchange.responses.map((response) => response.status)).toEqual([501]);
    expect(system.getLogSpec()).toBe('info');
  });
});
