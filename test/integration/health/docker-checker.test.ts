import { spawn } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { TLSSocket } from 'node:tls';
import { TlsMaterialError } from '../../../src/errors';
import { CheckTimeoutError } from '../../../src/health/abort-reasons';
import { DockerChecker, describeRequestError } from '../../../src/health/docker-checker';
import { createTestPki, type TestPki } from '../../support/pki';

let dir: string;
let counter = 0;
const closers: Array<() => Promise<void>> = [];

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'hc-'));
});
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

function socketPath(): string {
  counter += 1;
  return path.join(dir, `s${counter}.sock`);
}

const never = new AbortController().signal;

/** A fake Docker daemon on a unix socket answering with `handler`; remembers requests. */
async function fakeDaemon(handler: http.RequestListener): Promise<{ socketPath: string; requests: string[] }> {
  const where = socketPath();
  const requests: string[] = [];
  const server = http.createServer((req, res) => {
    requests.push(`${req.method} ${req.url}`);
    handler(req, res);
  });
  await new Promise<void>((resolve) => server.listen(where, resolve));
  closers.push(() => new Promise((resolve) => server.close(() => resolve())));
  return { socketPath: where, requests };
}

/** A raw unix socket server: `onConnection` does whatever a broken peer does. */
async function rawServer(onConnection: (socket: net.Socket) => void): Promise<{ socketPath: string; closed: Promise<void> }> {
  const where = socketPath();
  let markClosed!: () => void;
  const closed = new Promise<void>((resolve) => (markClosed = resolve));
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => {
      sockets.delete(socket);
      markClosed();
    });
    socket.on('error', () => undefined);
    onConnection(socket);
  });
  await new Promise<void>((resolve) => server.listen(where, resolve));
  closers.push(async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return { socketPath: where, closed };
}

function unixChecker(where: string): DockerChecker {
  return new DockerChecker({ endpoint: { kind: 'unix', socketPath: where } });
}

describe('DockerChecker over a unix socket', () => {
  it('passes when GET /_ping answers 200', async () => {
    const daemon = await fakeDaemon((_req, res) => res.end('OK'));
    await expect(unixChecker(daemon.socketPath).check(never)).resolves.toEqual({ ok: true });
    expect(daemon.requests).toEqual(['GET /_ping']);
  });

  it('fails on another status, with the daemon message from its JSON error body', async () => {
    const daemon = await fakeDaemon((_req, res) => {
      res.statusCode = 500;
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ message: 'layer store is corrupt' }));
    });
    await expect(unixChecker(daemon.socketPath).check(never)).resolves.toEqual({
      ok: false,
      reason: 'failed to ping to Docker daemon: unexpected answer HTTP 500: layer store is corrupt',
    });
  });

  it('shows a plain-text error body as it is, cut short', async () => {
    const daemon = await fakeDaemon((_req, res) => {
      res.statusCode = 503;
      res.end(`busy ${'x'.repeat(500)}`);
    });
    const result = await unixChecker(daemon.socketPath).check(never);
    expect(result).toEqual({
      ok: false,
      reason: expect.stringMatching(/^failed to ping to Docker daemon: unexpected answer HTTP 503: busy x+\.\.\. \(\d+ characters\)$/),
    });
    expect(result.ok === false && result.reason.length).toBeLessThan(300);
  });

  it('says the socket does not exist', async () => {
    const missing = socketPath();
    await expect(unixChecker(missing).check(never)).resolves.toEqual({
      ok: false,
      reason: `failed to ping to Docker daemon: socket ${missing} does not exist (is the Docker daemon running, and is its socket mounted here?)`,
    });
  });

  it('says the path is not a socket', async () => {
    const file = socketPath();
    writeFileSync(file, 'not a socket');
    await expect(unixChecker(file).check(never)).resolves.toEqual({ ok: false, reason: `failed to ping to Docker daemon: ${file} is not a socket` });
  });

  it('says the connection was refused when the socket file is left by a dead daemon', async () => {
    const stale = socketPath();
    // A process that listens and is then killed leaves its socket file behind.
    const child = spawn(process.execPath, ['-e', `require('net').createServer().listen(${JSON.stringify(stale)}, () => console.log('up'))`], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    await new Promise<void>((resolve) => child.stdout?.once('data', () => resolve()));
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
    expect(existsSync(stale)).toBe(true);
    await expect(unixChecker(stale).check(never)).resolves.toEqual({
      ok: false,
      reason: `failed to ping to Docker daemon: connection refused on socket ${stale} (nothing listens on it)`,
    });
  });

  it('says the answer is not HTTP', async () => {
    const peer = await rawServer((socket) => socket.end('SSH-2.0-OpenSSH_9.2\r\n\r\n'));
    await expect(unixChecker(peer.socketPath).check(never)).resolves.toEqual({
      ok: false,
      reason: expect.stringMatching(/^failed to ping to Docker daemon: unexpected answer from unix:\/\/.+: not HTTP \(/),
    });
  });

  it('says the peer closed the connection without an answer', async () => {
    const peer = await rawServer((socket) => socket.once('data', () => socket.destroy()));
    await expect(unixChecker(peer.socketPath).check(never)).resolves.toEqual({
      ok: false,
      reason: `failed to ping to Docker daemon: unix://${peer.socketPath} closed the connection without an answer (is it a Docker Engine API endpoint?)`,
    });
  });

  it('fails, without waiting for a timeout, when the answer is cut off half way', async () => {
    const peer = await rawServer((socket) =>
      socket.once('data', () => {
        socket.write('HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nOK');
        setImmediate(() => socket.destroy());
      }),
    );
    await expect(unixChecker(peer.socketPath).check(never)).resolves.toEqual({
      ok: false,
      reason: 'failed to ping to Docker daemon: the connection closed before the whole answer arrived (HTTP 200)',
    });
  });

  it("gives the abort's reason and closes its connection when the signal aborts", async () => {
    let connected!: () => void;
    const connectedOnce = new Promise<void>((resolve) => (connected = resolve));
    const peer = await rawServer(() => connected());
    const controller = new AbortController();
    const result = unixChecker(peer.socketPath).check(controller.signal);
    await connectedOnce;
    controller.abort(new CheckTimeoutError(2000));
    await expect(result).resolves.toEqual({ ok: false, reason: 'failed to ping to Docker daemon: timed out after 2s' });
    await peer.closed;
  });

  it('reads the engine version from GET /version', async () => {
    const daemon = await fakeDaemon((_req, res) => res.end(JSON.stringify({ Version: '20.10.24', ApiVersion: '1.41', Os: 'linux' })));
    await expect(unixChecker(daemon.socketPath).version(never)).resolves.toEqual({ version: '20.10.24', apiVersion: '1.41' });
  });

  it('refuses a /version answer that is not a Docker Engine one', async () => {
    const daemon = await fakeDaemon((_req, res) => res.end('<html>hello</html>'));
    await expect(unixChecker(daemon.socketPath).version(never)).rejects.toThrow(/unexpected answer to GET \/version: not JSON/);
  });
});

describe('DockerChecker over TCP', () => {
  let pki: TestPki;
  beforeAll(async () => {
    pki = await createTestPki();
  });
  afterAll(async () => pki.cleanup());

  async function listen(server: http.Server | https.Server): Promise<number> {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    closers.push(() => new Promise((resolve) => server.close(() => resolve())));
    return (server.address() as net.AddressInfo).port;
  }

  it('pings over plain HTTP', async () => {
    const port = await listen(http.createServer((_req, res) => res.end('OK')));
    const checker = new DockerChecker({ endpoint: { kind: 'tcp', host: '127.0.0.1', port } });
    await expect(checker.check(never)).resolves.toEqual({ ok: true });
  });

  it('says the connection was refused', async () => {
    // A port that was free a moment ago: nothing listens on it now.
    const probe = net.createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const { port } = probe.address() as net.AddressInfo;
    await new Promise<void>((resolve) => probe.close(() => resolve()));
    const checker = new DockerChecker({ endpoint: { kind: 'tcp', host: '127.0.0.1', port } });
    await expect(checker.check(never)).resolves.toEqual({
      ok: false,
      reason: `failed to ping to Docker daemon: connection refused by tcp://127.0.0.1:${port}`,
    });
  });

  it('pings over TLS with a client certificate the daemon verifies', async () => {
    const clientSubjects: string[] = [];
    const server = https.createServer(
      { cert: pki.server.certPem, key: pki.server.keyPem, ca: pki.clientCA.certPem, requestCert: true, rejectUnauthorized: true },
      (req, res) => {
        clientSubjects.push(String((req.socket as TLSSocket).getPeerCertificate().subject.CN));
        res.end('OK');
      },
    );
    const port = await listen(server);
    const checker = new DockerChecker({
      endpoint: { kind: 'tcp', host: 'localhost', port },
      tls: { caFile: pki.serverCA.cert, certFile: pki.client.cert, keyFile: pki.client.key },
    });
    await expect(checker.check(never)).resolves.toEqual({ ok: true });
    expect(clientSubjects).toEqual(['operator']);
  });

  it('says the TLS handshake failed when the daemon certificate is not trusted', async () => {
    const port = await listen(https.createServer({ cert: pki.server.certPem, key: pki.server.keyPem }, (_req, res) => res.end('OK')));
    const checker = new DockerChecker({
      endpoint: { kind: 'tcp', host: 'localhost', port },
      tls: { caFile: pki.untrustedCA.cert, certFile: '', keyFile: '' },
    });
    await expect(checker.check(never)).resolves.toEqual({
      ok: false,
      reason: expect.stringMatching(new RegExp(`^failed to ping to Docker daemon: TLS handshake with tcp://localhost:${port} failed: `)),
    });
  });

  it('refuses TLS files that cannot be read, naming the path', () => {
    const missing = path.join(dir, 'no-such-ca.pem');
    const create = (): DockerChecker =>
      new DockerChecker({ endpoint: { kind: 'tcp', host: 'localhost', port: 2376 }, tls: { caFile: missing, certFile: '', keyFile: '' } });
    expect(create).toThrow(TlsMaterialError);
    expect(create).toThrow(`cannot read the Docker TLS CA file ${missing}`);
  });

  it('refuses a client certificate without its key', () => {
    expect(
      () => new DockerChecker({ endpoint: { kind: 'tcp', host: 'localhost', port: 2376 }, tls: { caFile: '', certFile: pki.client.cert, keyFile: '' } }),
    ).toThrow(/needs both a client certificate and its key/);
  });
});

describe('describeRequestError', () => {
  const unix = { kind: 'unix', socketPath: '/var/run/docker.sock' } as const;
  const errno = (code: string, message = code): NodeJS.ErrnoException => Object.assign(new Error(message), { code });

  it('explains permission denied (as a non-root user outside the docker group gets it)', () => {
    expect(describeRequestError(errno('EACCES'), unix)).toBe(
      'permission denied on socket /var/run/docker.sock (the process needs read and write access to it)',
    );
  });

  it('explains an unknown host and an unreachable network over TCP', () => {
    const tcp = { kind: 'tcp', host: 'docker.invalid', port: 2376 } as const;
    expect(describeRequestError(errno('ENOTFOUND'), tcp)).toBe('cannot resolve host docker.invalid');
    expect(describeRequestError(errno('EHOSTUNREACH'), tcp)).toBe('tcp://docker.invalid:2376 is unreachable (EHOSTUNREACH)');
  });

  it('keeps the message of anything else', () => {
    expect(describeRequestError(new Error('something odd'), unix)).toBe('something odd');
  });
});
