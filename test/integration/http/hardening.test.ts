import dgram from 'node:dgram';
import type { IncomingMessage, ServerResponse } from 'node:http';
import net from 'node:net';
import { gzipSync } from 'node:zlib';
import { Router } from 'express';
import { startOperationsSystem, type OperationsSystem } from '../../../src/system';
import { testConfig } from '../../support/config';
import { request } from '../../support/http';
import { LogCapture } from '../../support/log-capture';
import { createTestPki, type TestPki, serverTls } from '../../support/pki';
import { delay, waitFor } from '../../support/wait';
import { rawExchange, silentConnection, writeUntilClosed, type RawExchange, type RawResponse } from '../../support/raw-http';

const GiB = 1024 * 1024 * 1024;
const chunk64k = Buffer.alloc(64 * 1024, 'a');

/** A JSON error answer as the README promises: {"error": "..."} with X-Request-Id. */
function expectJsonError(response: RawResponse | undefined, status: number): void {
  expect(response).toBeDefined();
  expect(response?.status).toBe(status);
  expect(response?.headers['content-type']).toMatch(/^application\/json/);
  expect(response?.json).toEqual({ error: expect.any(String) });
  expect(response?.headers['x-request-id']).toMatch(/\S/);
}

/** Log lines that carry a stack trace or an internal error. */
function internalErrors(logs: LogCapture): string[] {
  return logs.matching(/request failed|internal error|RangeError|\bat .+:\d+:\d+/);
}

/** A request with a huge declared body whose client keeps writing until the server closes. */
function hugeBody(port: number, head: string, giveUpMs = 20_000): Promise<RawExchange> {
  return rawExchange(port, { send: head, feed: (socket) => writeUntilClosed(socket, chunk64k, GiB), giveUpMs });
}

describe('HTTP hardening (plain HTTP)', () => {
  let system: OperationsSystem;
  let logs: LogCapture;
  let port: number;
  let url: string;
  // Scenarios that take the read limit run side by side from the start.
  let slowHeaders: Promise<RawExchange>;
  beforeAll(async () => {
    logs = new LogCapture();
    // A short read limit (injected) so the slow-headers scenario does not wait out the real 10 s.
    system = await startOperationsSystem({
      config: testConfig({ metrics: { provider: 'prometheus' } }),
      env: {},
      logStream: logs,
      httpLimits: { readTimeoutMs: 2000 },
    });
    port = system.address.port;
    url = system.url;
    slowHeaders = rawExchange(port, { send: 'GET /healthz HTTP/1.1\r\nHost: localhost\r\n' });
  });
  afterAll(async () => system.stop());
  beforeEach(() => system.setLogSpec('info'));

  describe('defect 1: a body that cannot be described in full still gets a 4xx', () => {
    it.each([
      ['a spec nested 8,000 arrays deep', `{"spec":${'['.repeat(8000)}${']'.repeat(8000)}}`],
      ['a spec nested 4,000 objects deep', `{"spec":${'{"a":'.repeat(2500)}1${'}'.repeat(2500)}}`],
      ['an extra property nested deep', `{"spec":"debug","x":${'['.repeat(5000)}${']'.repeat(5000)}}`],
      ['a top-level array nested deep', `${'['.repeat(8000)}${']'.repeat(8000)}`],
      ['hundreds of long extra property names', `{${Array.from({ length: 120 }, (_, i) => `"${'k'.repeat(100)}${i}":1`).join(',')}}`],
      ['a spec that is a long string array', `{"spec":[${Array.from({ length: 1400 }, () => '"abcdefgh"').join(',')}]}`],
    ])('%s: 400 with a short JSON error, nothing changes, nothing logged as internal', async (_name, body) => {
      expect(Buffer.byteLength(body)).toBeLessThanOrEqual(16 * 1024);
      const answer = await request(`${url}/logspec`, { method: 'PUT', body });
      expect(answer.status).toBe(400);
      expect(answer.json).toEqual({ error: expect.any(String) });
      expect((answer.json as { error: string }).error.length).toBeLessThan(400);
      expect(system.getLogSpec()).toBe('info');
      expect(internalErrors(logs)).toEqual([]);
    });
  });

  describe('defect 2: a Content-Encoding is refused with 415 (bodies are never decoded), never 500', () => {
    const valid = '{"spec":"debug"}';
    const compressed = gzipSync(valid);
    it.each([
      ['gzip', Buffer.from(valid)],
      ['GZIP', Buffer.from(valid)],
      ['deflate', Buffer.from(valid)],
      ['Deflate', Buffer.from('not deflate at all')],
      ['br', Buffer.from(valid)],
      ['BR', Buffer.from([0xff, 0xfe, 0x00])],
      ['x-gzip', Buffer.from(valid)],
      ['compress', Buffer.from(valid)],
      ['gzip (truncated)', compressed.subarray(0, compressed.length - 6)],
      ['gzip (really compressed)', compressed],
      ['identity, gzip', compressed],
      ['zstd', Buffer.from(valid)],
    ])('Content-Encoding %s: 415 JSON with Accept-Encoding: identity; nothing changes', async (encoding, body) => {
      const answer = await request(`${url}/logspec`, {
        method: 'PUT',
        headers: { 'content-encoding': encoding.replace(/ \(.*\)$/, '') },
        body,
      });
      expect(answer.status).toBe(415);
      expect(answer.json).toEqual({ error: expect.stringContaining('Content-Encoding') });
      expect(answer.headers['accept-encoding']).toBe('identity');
      expect(system.getLogSpec()).toBe('info');
      expect(internalErrors(logs)).toEqual([]);
    });

    it('Content-Encoding identity is the plain body: accepted', async () => {
      const answer = await request(`${url}/logspec`, { method: 'PUT', headers: { 'content-encoding': 'Identity' }, body: valid });
      expect(answer.status).toBe(204);
      expect(system.getLogSpec()).toBe('debug');
    });

    it('a body that is not UTF-8 is a 400, not a guess', async () => {
      const answer = await request(`${url}/logspec`, {
        method: 'PUT',
        body: Buffer.from([0x7b, 0x22, 0x73, 0x70, 0x65, 0x63, 0x22, 0x3a, 0x22, 0xc3, 0x28, 0x22, 0x7d]),
      });
      expect(answer.status).toBe(400);
      expect(answer.json).toEqual({ error: expect.stringContaining('UTF-8') });
      expect(system.getLogSpec()).toBe('info');
    });
  });

  describe('defect 4: oversized bodies are refused without reading them', () => {
    it('Content-Length of 1 GiB: 413 at once, connection closed, the body not read', async () => {
      const exchange = await hugeBody(port, `PUT /logspec HTTP/1.1\r\nHost: localhost\r\nContent-Length: ${GiB}\r\n\r\n`);
      expectJsonError(exchange.responses[0], 413);
      expect(exchange.responses[0]?.headers.connection).toBe('close');
      expect(exchange.gaveUp).toBe(false);
      expect(exchange.closedAfterMs).toBeLessThan(3000);
      // What the client could write is what loopback buffers take, not the gigabyte.
      expect(exchange.bytesWritten).toBeLessThan(256 * 1024 * 1024);
      expect(system.getLogSpec()).toBe('info');
    });

    it('Expect: 100-continue with a Content-Length over the limit: 413 and no 100 Continue', async () => {
      const exchange = await rawExchange(port, {
        send: `PUT /logspec HTTP/1.1\r\nHost: localhost\r\nExpect: 100-continue\r\nContent-Length: ${GiB}\r\n\r\n`,
        giveUpMs: 5000,
      });
      expect(exchange.received).not.toMatch(/100 Continue/);
      expectJsonError(exchange.responses[0], 413);
      expect(exchange.gaveUp).toBe(false);
    });

    it('Expect: 100-continue with a small body: 100 Continue, then the body is read', async () => {
      const socket = net.connect(port, '127.0.0.1');
      let received = '';
      socket.setEncoding('latin1');
      socket.on('data', (data: string) => (received += data));
      socket.write('PUT /logspec HTTP/1.1\r\nHost: localhost\r\nExpect: 100-continue\r\nContent-Length: 16\r\n\r\n');
      await waitFor('100 Continue', () => received.includes('100 Continue'), { everyMs: 20 });
      socket.write('{"spec":"debug"}');
      await waitFor('204 No Content', () => /204 No Content/.test(received), { everyMs: 20 });
      socket.destroy();
      expect(system.getLogSpec()).toBe('debug');
    });

    it('a chunked body is cut as soon as it passes 16 KiB: 413 and close, without waiting for its end', async () => {
      const piece = `1000\r\n${'a'.repeat(4096)}\r\n`;
      const exchange = await rawExchange(port, {
        send: `PUT /logspec HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: chunked\r\n\r\n${piece.repeat(5)}`,
        giveUpMs: 8000,
      });
      expectJsonError(exchange.responses[0], 413);
      expect(exchange.gaveUp).toBe(false);
      expect(exchange.closedAfterMs).toBeLessThan(3000);
    });

    it.each([
      ['404', 'PUT /no-such-path', 404],
      ['405', 'POST /logspec', 405],
      ['405 on a GET-only path', 'DELETE /version', 405],
    ])('an early %s on a keep-alive connection with a 1 GiB body closes the connection instead of draining it', async (_name, requestLine, status) => {
      const exchange = await hugeBody(port, `${requestLine} HTTP/1.1\r\nHost: localhost\r\nConnection: keep-alive\r\nContent-Length: ${GiB}\r\n\r\n`);
      expectJsonError(exchange.responses[0], status);
      expect(exchange.responses[0]?.headers.connection).toBe('close');
      expect(exchange.gaveUp).toBe(false);
      expect(exchange.closedAfterMs).toBeLessThan(3000);
      expect(exchange.bytesWritten).toBeLessThan(256 * 1024 * 1024);
    });

    it('an early answer to a small body keeps the connection (pipelining still works)', async () => {
      const exchange = await rawExchange(port, {
        send: 'POST /version HTTP/1.1\r\nHost: localhost\r\nContent-Length: 2\r\n\r\nxxGET /version HTTP/1.1\r\nHost: localhost\r\n\r\n',
        giveUpMs: 1500,
      });
      expect(exchange.responses.map((r) => r.status)).toEqual([405, 200]);
      expect(exchange.gaveUp).toBe(true);
    });
  });

  describe('errors written below the router are JSON too', () => {
    it.each([
      ['a malformed header line', 'GET /version HTTP/1.1\r\nHost: localhost\r\nBad Header\r\n\r\n', 400],
      ['a malformed request line', 'NOT HTTP AT ALL\r\n\r\n', 400],
      ['headers over 16 KiB', `GET /version HTTP/1.1\r\nHost: localhost\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`, 431],
      ['an unknown Expect', 'GET /version HTTP/1.1\r\nHost: localhost\r\nExpect: something-else\r\n\r\n', 417],
      ['CONNECT', 'CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n', 405],
      ['two Host headers', 'GET /version HTTP/1.1\r\nHost: localhost\r\nHost: evil.example\r\n\r\n', 400],
      ['two Host headers, spelled in other cases', 'GET /version HTTP/1.1\r\nhost: localhost\r\nHOST: evil.example\r\n\r\n', 400],
      ['a Host header and a Hostname one, no second Host', 'GET /nope HTTP/1.1\r\nhOsT: localhost\r\nHostname: evil.example\r\nConnection: close\r\n\r\n', 404],
      ['no Host header in HTTP/1.1', 'GET /version HTTP/1.1\r\n\r\n', 400],
      ['a bad chunk size', 'PUT /logspec HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n', 400],
    ])('%s: a JSON error with X-Request-Id, and the connection closed', async (_name, text, status) => {
      const exchange = await rawExchange(port, { send: text, giveUpMs: 5000 });
      expectJsonError(exchange.responses[0], status);
      expect(exchange.gaveUp).toBe(false);
    });

    it('slow headers: the 408 is JSON too', async () => {
      const exchange = await slowHeaders;
      expectJsonError(exchange.responses[0], 408);
    });

    it('answers given below the router are counted in operations_requests, each once', async () => {
      const metrics = await request(`${url}/metrics`);
      expect(metrics.body).toMatch(/operations_requests_total\{route="unmatched",code="431"\} [1-9]/);
      // The one unknown Expect and the one CONNECT above: the 417 is written on the request's
      // response, the 405 on the bare socket; each is counted once.
      expect(metrics.body).toMatch(/^operations_requests_total\{route="unmatched",code="417"\} 1$/m);
      expect(metrics.body).toMatch(/^operations_requests_total\{route="unmatched",code="405"\} 1$/m);
    });
  });
});

/**
 * A connection with a request read in full and not yet answered: the cap cannot make room by
 * closing it (one whose body is still to come it closes, answering 408: connection-cap.test.ts).
 */
function busyConnection(port: number): net.Socket {
  const socket = net.connect(port, '127.0.0.1', () => socket.write('GET /stuck HTTP/1.1\r\nHost: localhost\r\n\r\n'));
  socket.on('error', () => undefined);
  return socket;
}

/** Requests /stuck holds now: taken in, their connection not closed yet. */
let stuckRequests = 0;
/** Mounts /stuck, whose requests are never answered (until the client goes). */
const stuck = () => ({
  path: '/stuck',
  handler: (_request: IncomingMessage, response: ServerResponse) => {
    stuckRequests += 1;
    response.once('close', () => (stuckRequests -= 1));
  },
  stop: () => Promise.resolve(),
});

describe('defect 3: the connection cap', () => {
  it('refuses connections over operations.maxConnections, each with a request in progress, at once and counts them (Prometheus)', async () => {
    const system = await startOperationsSystem({
      config: testConfig({ operations: { maxConnections: 3 }, metrics: { provider: 'prometheus' } }),
      env: {},
      logStream: new LogCapture(),
      extensions: [stuck],
    });
    try {
      const { port } = system.address;
      const before = stuckRequests;
      const held = [1, 2, 3].map(() => busyConnection(port));
      await waitFor('the three held requests in progress at /stuck', () => stuckRequests === before + 3);
      const refused = await rawExchange(port, { send: 'GET /version HTTP/1.1\r\nHost: localhost\r\n\r\n', giveUpMs: 5000 });
      expect(refused.received).toBe('');
      expect(refused.closedAfterMs).toBeLessThan(1000);
      for (const socket of held) socket.destroy();
      // Until the server has let them go: a scrape before that would itself be refused, and counted.
      await waitFor('the held connections closed on the server', () => stuckRequests === before);
      const body = await waitFor(
        'the refusal counted in /metrics',
        async () => {
          const { body: scraped } = await request(`${system.url}/metrics`);
          return /operations_connections_refused_total 1\b/.test(scraped) && scraped;
        },
        { timeoutMs: 5000, everyMs: 100 },
      );
      expect(body).toMatch(/operations_connections_refused_total 1\b/);
    } finally {
      await system.stop();
    }
  });

  it('counts refusals in StatsD too', async () => {
    const daemon = dgram.createSocket('udp4');
    const lines: string[] = [];
    daemon.on('message', (message) => lines.push(...message.toString().split('\n')));
    await new Promise<void>((resolve) => daemon.bind(0, '127.0.0.1', resolve));
    const udpPort = daemon.address().port;
    const system = await startOperationsSystem({
      config: testConfig({
        operations: { maxConnections: 1 },
        metrics: { provider: 'statsd', statsd: { network: 'udp', address: { host: '127.0.0.1', port: udpPort }, writeIntervalMs: 100, prefix: '' } },
      }),
      env: {},
      logStream: new LogCapture(),
      extensions: [stuck],
    });
    try {
      const before = stuckRequests;
      const held = busyConnection(system.address.port);
      await waitFor('the held request in progress at /stuck', () => stuckRequests === before + 1);
      const refused = await silentConnection(system.address.port, 5000);
      expect(refused.closedAfterMs).toBeLessThan(1000);
      held.destroy();
      await waitFor('the refusal counted over StatsD', () => lines.includes('operations.connections_refused:1|c'), { everyMs: 20 });
    } finally {
      await system.stop();
      daemon.close();
    }
  });
});

describe('defect 3: TLS handshakes are bounded by the handshake limit (injected: 1 s; default the 10 s read limit)', () => {
  let pki: TestPki;
  let system: OperationsSystem;
  let silent: Promise<Array<{ closedAfterMs: number; gaveUp: boolean }>>;
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
      httpLimits: { handshakeTimeoutMs: 1000 },
    });
    silent = Promise.all(Array.from({ length: 20 }, () => silentConnection(system.address.port, 16_000)));
  });
  afterAll(async () => {
    await system.stop();
    await pki.cleanup();
  });

  it('a connection that never sends a ClientHello is closed at the limit, not before', async () => {
    for (const connection of await silent) {
      expect(connection.gaveUp).toBe(false);
      expect(connection.closedAfterMs).toBeGreaterThan(900);
      expect(connection.closedAfterMs).toBeLessThan(8000);
    }
  });

  it('an early 401 on a TLS connection with a 1 GiB body closes the connection', async () => {
    const exchange = await rawExchange(system.address.port, {
      tls: { ca: pki.serverCA.certPem },
      send: `PUT /logspec HTTP/1.1\r\nHost: localhost\r\nContent-Length: ${GiB}\r\n\r\n`,
      feed: (socket) => writeUntilClosed(socket, chunk64k, GiB),
    });
    expectJsonError(exchange.responses[0], 401);
    expect(exchange.responses[0]?.headers.connection).toBe('close');
    expect(exchange.gaveUp).toBe(false);
    expect(exchange.closedAfterMs).toBeLessThan(3000);
  });
});

describe('stop (SIGTERM) with a request still uploading', () => {
  it('answers it 408 at the grace deadline instead of cutting it', async () => {
    const system = await startOperationsSystem({ config: testConfig(), env: {}, logStream: new LogCapture() });
    const uploading = rawExchange(system.address.port, {
      send: 'PUT /logspec HTTP/1.1\r\nHost: localhost\r\nContent-Length: 100\r\n\r\n{"spec":',
      giveUpMs: 15_000,
    });
    // Time for the server to read the head: a request waiting for its body shows nothing to poll.
    await delay(300);
    const started = Date.now();
    await system.stop(2000);
    expect(Date.now() - started).toBeLessThan(4000);
    const exchange = await uploading;
    expectJsonError(exchange.responses[0], 408);
    expect(exchange.gaveUp).toBe(false);
    expect(system.getLogSpec()).toBe('info');
  });
});

describe("an extension's router: express's request and response, and its errors", () => {
  let system: OperationsSystem;
  let logs: LogCapture;
  beforeAll(async () => {
    logs = new LogCapture();
    const router = Router({ caseSensitive: true, strict: true });
    // express's own request and response: req.path relative to the mount, res.status, res.json, res.locals.
    router.get('/who', (req, res) => {
      res.locals.seen = req.path;
      res.status(201).json({ path: req.path, baseUrl: req.baseUrl, seen: res.locals.seen as string });
    });
    router.get('/throws', () => {
      throw new Error('extension failed before answering');
    });
    router.get('/throws-late', (_req, res) => {
      res.writeHead(200, { 'Content-Type': 'text/plain', 'Content-Length': '100' });
      res.write('partial');
      throw new Error('extension failed after its answer began');
    });
    system = await startOperationsSystem({
      config: testConfig({ metrics: { provider: 'prometheus' } }),
      env: {},
      logStream: logs,
      extensions: [() => ({ path: '/ext', handler: router, stop: () => Promise.resolve() })],
    });
  });
  afterAll(async () => system.stop());

  it('gets express request and response under its path, counted under its full route', async () => {
    const answer = await request(`${system.url}/ext/who`);
    expect(answer.status).toBe(201);
    expect(JSON.parse(answer.body)).toEqual({ path: '/who', baseUrl: '/ext', seen: '/who' });
    const metrics = await request(`${system.url}/metrics`);
    expect(metrics.body).toContain('operations_requests_total{route="/ext/who",code="201"} 1\n');
  });

  it('a throw before answering is a 500 JSON error, logged with its message', async () => {
    const exchange = await rawExchange(system.address.port, {
      send: 'GET /ext/throws HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n',
      giveUpMs: 5000,
    });
    expectJsonError(exchange.responses[0], 500);
    expect(exchange.responses[0]?.json).toEqual({ error: 'internal error; see the server log' });
    expect(logs.matching(/request failed.*extension failed before answering/)).toHaveLength(1);
  });

  it('a throw once the answer has begun closes the connection and is logged', async () => {
    const exchange = await rawExchange(system.address.port, { send: 'GET /ext/throws-late HTTP/1.1\r\nHost: localhost\r\n\r\n', giveUpMs: 5000 });
    expect(exchange.gaveUp).toBe(false);
    expect(exchange.received).toMatch(/^HTTP\/1\.1 200 OK\r\n[\s\S]*\r\n\r\npartial$/);
    expect(logs.matching(/request failed after its answer began.*extension failed after its answer began/)).toHaveLength(1);
    // The server goes on answering.
    expect((await request(`${system.url}/healthz`)).status).toBe(200);
  });
});
