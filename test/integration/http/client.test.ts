/**
 * The one outbound request (src/http-client.ts), against real servers on 127.0.0.1 and on a unix
 * socket: what it sends, the answer whole or read as it comes, and each failure's reason with the
 * facts its callers word it from. TLS is exercised through its callers (the fleet's node client
 * in fleet/reasons and fleet/real-nodes, the Docker checker over TLS in health/docker-checker).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { isTlsError, outboundRequest, type OutboundFailure, type OutboundResult } from '../../../src/http-client';
import { FakeScheduler } from '../../support/fake-scheduler';
import { waitFor } from '../../support/wait';

const closers: Array<() => Promise<void>> = [];
let dir: string;

beforeAll(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'fabric-ops-http-client-'));
});
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

interface Seen {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** An HTTP server on 127.0.0.1 (or on `socketPath`) that records what it is asked and answers with `handler`. */
async function server(handler: (req: http.IncomingMessage, res: http.ServerResponse) => void, socketPath?: string): Promise<{ url: string; seen: Seen[] }> {
  const seen: Seen[] = [];
  const srv = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      handler(req, res);
    });
  });
  await new Promise<void>((resolve) => (socketPath === undefined ? srv.listen(0, '127.0.0.1', resolve) : srv.listen(socketPath, resolve)));
  closers.push(async () => {
    srv.closeAllConnections();
    await new Promise<void>((resolve) => srv.close(() => resolve()));
  });
  return { url: socketPath === undefined ? `http://127.0.0.1:${(srv.address() as net.AddressInfo).port}` : 'http://localhost', seen };
}

/** A TCP server on 127.0.0.1 that does whatever a broken peer does; `open` counts the connections not yet closed. */
async function rawServer(onConnection: (socket: net.Socket) => void): Promise<{ url: string; connections: () => number; open: () => number }> {
  let connections = 0;
  const sockets = new Set<net.Socket>();
  const srv = net.createServer((socket) => {
    connections += 1;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
    onConnection(socket);
  });
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  closers.push(async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise<void>((resolve) => srv.close(() => resolve()));
  });
  return { url: `http://127.0.0.1:${(srv.address() as net.AddressInfo).port}`, connections: () => connections, open: () => sockets.size };
}

function failure(result: OutboundResult): OutboundFailure {
  if (result.ok) throw new Error(`expected a failure, got HTTP ${result.status}: ${result.text}`);
  return result;
}

describe('outboundRequest: the answer', () => {
  test('sends the method, headers and body as given (nothing added but what HTTP needs) and gives the status, headers, text and JSON', async () => {
    const api = await server((_req, res) => {
      res.writeHead(201, 'Made', { 'Content-Type': 'application/json', 'X-Answer': 'yes' });
      res.end('{"made":true}');
    });
    const answer = await outboundRequest({
      url: `${api.url}/things?x=1`,
      method: 'PUT',
      headers: { 'Content-Type': 'application/json', 'X-Asked': 'by-test' },
      body: '{"spec":"debug"}',
      maxBytes: 1024,
      json: true,
    });
    expect(answer).toMatchObject({
      ok: true,
      status: 201,
      statusMessage: 'Made',
      text: '{"made":true}',
      json: { value: { made: true } },
      answered: true,
      handshakeDone: false,
    });
    expect(answer.ok && answer.headers['x-answer']).toBe('yes');
    expect(api.seen).toHaveLength(1);
    expect(api.seen[0]).toMatchObject({ method: 'PUT', url: '/things?x=1', body: '{"spec":"debug"}' });
    expect(api.seen[0]?.headers).toMatchObject({ 'content-type': 'application/json', 'x-asked': 'by-test' });
    expect(api.seen[0]?.headers.accept).toBeUndefined();
  });

  test('any status is an answer; JSON that does not parse says why, and an empty body has no JSON', async () => {
    const api = await server((req, res) => {
      res.statusCode = req.url === '/empty' ? 204 : 500;
      res.end(req.url === '/empty' ? undefined : '<html>oops</html>');
    });
    const bad = await outboundRequest({ url: `${api.url}/bad`, maxBytes: 1024, json: true });
    expect(bad).toMatchObject({ ok: true, status: 500, text: '<html>oops</html>', json: { problem: expect.stringContaining('JSON') } });
    const empty = await outboundRequest({ url: `${api.url}/empty`, maxBytes: 1024, json: true });
    expect(empty).toMatchObject({ ok: true, status: 204, text: '' });
    expect(empty.ok && 'json' in empty).toBe(false);
    // Not asked for JSON: none parsed.
    const plain = await outboundRequest({ url: `${api.url}/bad`, maxBytes: 1024 });
    expect(plain.ok && 'json' in plain).toBe(false);
  });

  test('over a unix socket: the URL gives the path and the Host header', async () => {
    const socketPath = path.join(dir, 'api.sock');
    const api = await server((_req, res) => res.end('OK'), socketPath);
    const answer = await outboundRequest({ url: `${api.url}/_ping`, socketPath, maxBytes: 1024 });
    expect(answer).toMatchObject({ ok: true, status: 200, text: 'OK' });
    expect(api.seen[0]).toMatchObject({ method: 'GET', url: '/_ping' });
    expect(api.seen[0]?.headers.host).toBe('localhost');
  });

  test('a reader takes the body as it comes; `done` ends the request there and closes the connection', async () => {
    const peer = await rawServer((socket) =>
      socket.once('data', () => {
        socket.write('HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\n\r\n');
        socket.write('5\r\nfirst\r\n');
        // The rest never comes: the reader must not need it.
      }),
    );
    const pieces: string[] = [];
    const answer = await outboundRequest({
      url: `${peer.url}/metrics`,
      maxBytes: 1,
      reader: (head) => {
        expect(head).toMatchObject({ status: 200, headers: { 'content-type': 'text/plain' } });
        return {
          write: (chunk) => {
            pieces.push(chunk.toString('utf8'));
            return 'done';
          },
          end: () => ({ value: pieces.join('') }),
        };
      },
    });
    // The byte cap is for a body kept whole: the reader bounds its own.
    expect(answer).toMatchObject({ ok: true, status: 200, read: 'first', text: '' });
    await waitFor('the connection closed', () => peer.open() === 0, { timeoutMs: 5_000, everyMs: 10 });
  });

  test("a reader refuses the head, a piece of the body or the end: bad_response with the reader's problem", async () => {
    const api = await server((_req, res) => res.end('line one\nline two\n'));
    const refusedHead = failure(await outboundRequest({ url: api.url, maxBytes: 1024, reader: () => ({ problem: 'not text/plain' }) }));
    expect(refusedHead).toMatchObject({ reason: 'bad_response', kind: 'refused-head', status: 200, answered: true });
    expect(refusedHead.error).toEqual(new Error('not text/plain'));
    const refusedBody = failure(
      await outboundRequest({ url: api.url, maxBytes: 1024, reader: () => ({ write: () => ({ problem: 'a line too long' }), end: () => ({ value: 0 }) }) }),
    );
    expect(refusedBody).toMatchObject({ reason: 'bad_response', kind: 'refused-body', error: new Error('a line too long') });
    const refusedEnd = failure(
      await outboundRequest({ url: api.url, maxBytes: 1024, reader: () => ({ write: () => null, end: () => ({ problem: 'no heights in it' }) }) }),
    );
    expect(refusedEnd).toMatchObject({ reason: 'bad_response', kind: 'refused-end', status: 200, error: new Error('no heights in it') });
    // null: this answer is kept whole.
    const whole = await outboundRequest({ url: api.url, maxBytes: 1024, reader: () => null });
    expect(whole).toMatchObject({ ok: true, text: 'line one\nline two\n' });
  });
});

describe('outboundRequest: the byte cap', () => {
  test('a declared Content-Length over the cap is refused before the body is read, with the status', async () => {
    const api = await server((_req, res) => {
      res.writeHead(200, { 'Content-Length': '2048' });
      res.end('x'.repeat(2048));
    });
    const result = failure(await outboundRequest({ url: api.url, maxBytes: 1024 }));
    expect(result).toMatchObject({ reason: 'too_large', declaredBytes: 2048, status: 200, answered: true });
    expect(result.error).toEqual(new Error('answer of 2048 bytes is over the 1024-byte limit'));
  });

  test('a body that grows over the cap is cut there', async () => {
    const api = await server((_req, res) => {
      res.writeHead(503);
      res.write('x'.repeat(600));
      setTimeout(() => res.end('y'.repeat(600)), 20);
    });
    const result = failure(await outboundRequest({ url: api.url, maxBytes: 1024 }));
    expect(result).toMatchObject({ reason: 'too_large', status: 503 });
    expect('declaredBytes' in result).toBe(false);
    expect(result.error).toEqual(new Error('answer over the 1024-byte limit'));
  });
});

describe('outboundRequest: failures', () => {
  test('one timer over the whole request, on the given scheduler; the connection is closed', async () => {
    // It reads (and never answers), so it sees the client close the connection.
    const peer = await rawServer((socket) => socket.resume());
    const scheduler = new FakeScheduler();
    const pending = outboundRequest({ url: peer.url, maxBytes: 1024, timeoutMs: 5_000, scheduler });
    await waitFor('the connection', () => peer.connections() === 1, { timeoutMs: 5_000, everyMs: 10 });
    let settled = false;
    void pending.then(() => (settled = true));
    scheduler.advance(4_999);
    await new Promise((resolve) => setImmediate(resolve));
    expect(settled).toBe(false);
    scheduler.advance(1);
    const result = failure(await pending);
    expect(result).toMatchObject({ reason: 'timeout', answered: false });
    expect(result.error).toEqual(new Error('no complete answer within 5000 ms'));
    await waitFor('the connection closed', () => peer.open() === 0, { timeoutMs: 5_000, everyMs: 10 });
    expect(scheduler.pending).toBe(0);
  });

  test("an abort during the request ends it with the signal's reason; aborted already, nothing is sent", async () => {
    // It reads (and never answers), so it sees the client close the connection.
    const peer = await rawServer((socket) => socket.resume());
    const controller = new AbortController();
    const pending = outboundRequest({ url: peer.url, maxBytes: 1024, signal: controller.signal });
    await waitFor('the connection', () => peer.connections() === 1, { timeoutMs: 5_000, everyMs: 10 });
    const why = new Error('stopping');
    controller.abort(why);
    expect(failure(await pending)).toMatchObject({ reason: 'aborted', error: why, answered: false });
    await waitFor('the connection closed', () => peer.open() === 0, { timeoutMs: 5_000, everyMs: 10 });
    expect(failure(await outboundRequest({ url: peer.url, maxBytes: 1024, signal: controller.signal }))).toMatchObject({ reason: 'aborted', error: why });
    expect(peer.connections()).toBe(1);
  });

  test("unreachable: nothing listens, or no socket at the path (Node's error, its code)", async () => {
    const probe = net.createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const { port } = probe.address() as net.AddressInfo;
    await new Promise<void>((resolve) => probe.close(() => resolve()));
    const refused = failure(await outboundRequest({ url: `http://127.0.0.1:${port}/`, maxBytes: 1024 }));
    expect(refused).toMatchObject({ reason: 'unreachable', error: { code: 'ECONNREFUSED' }, answered: false, handshakeDone: false });
    const missing = failure(await outboundRequest({ url: 'http://localhost/_ping', socketPath: path.join(dir, 'none.sock'), maxBytes: 1024 }));
    expect(missing).toMatchObject({ reason: 'unreachable', error: { code: 'ENOENT' } });
  });

  test('a URL or header Node refuses: unreachable, with its error, nothing sent', async () => {
    const api = await server((_req, res) => res.end('OK'));
    const badUrl = failure(await outboundRequest({ url: 'not a url', maxBytes: 1024 }));
    expect(badUrl).toMatchObject({ reason: 'unreachable', error: { code: 'ERR_INVALID_URL' } });
    const badHeader = failure(await outboundRequest({ url: api.url, headers: { 'X-Bad': 'a\nb' }, maxBytes: 1024 }));
    expect(badHeader).toMatchObject({ reason: 'unreachable', error: { code: 'ERR_INVALID_CHAR' } });
    expect(api.seen).toHaveLength(0);
  });

  test('bad_response: the peer does not speak HTTP (not-http), or the answer breaks off (cut, with the status)', async () => {
    const ssh = await rawServer((socket) => socket.end('SSH-2.0-OpenSSH_9.2\r\n\r\n'));
    const notHttp = failure(await outboundRequest({ url: ssh.url, maxBytes: 1024 }));
    expect(notHttp).toMatchObject({ reason: 'bad_response', kind: 'not-http', answered: false, error: { code: expect.stringMatching(/^HPE_/) } });

    const cutting = await rawServer((socket) =>
      socket.once('data', () => {
        socket.write('HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nOK');
        setImmediate(() => socket.destroy());
      }),
    );
    const cut = failure(await outboundRequest({ url: cutting.url, maxBytes: 1024 }));
    expect(cut).toMatchObject({ reason: 'bad_response', kind: 'cut', status: 200, answered: true });
  });

  test('isTlsError: by the code, as Node and OpenSSL name TLS failures', () => {
    for (const code of [
      'ERR_TLS_CERT_ALTNAME_INVALID',
      'ERR_SSL_WRONG_VERSION_NUMBER',
      'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
      'CERT_HAS_EXPIRED',
      'DEPTH_ZERO_SELF_SIGNED_CERT',
      'SELF_SIGNED_CERT_IN_CHAIN',
      'HOSTNAME_MISMATCH',
      'EPROTO',
    ]) {
      expect([code, isTlsError({ code })]).toEqual([code, true]);
    }
    for (const code of ['ECONNREFUSED', 'ECONNRESET', 'ENOENT', 'HPE_INVALID_CONSTANT', 'EPROTONOSUPPORT', undefined]) {
      expect([code, isTlsError({ code })]).toEqual([code, false]);
    }
  });
});
