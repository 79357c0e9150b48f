import { mkdtemp, rm } from 'node:fs/promises';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { startOperationsSystem, type OperationsSystem } from '../../../src';
import { testConfig } from '../../support/config';
import { request } from '../../support/http';
import { LogCapture } from '../../support/log-capture';
import { waitFor } from '../../support/wait';

const jsonEnv = { FABRIC_LOGGING_FORMAT: 'json' };

/** A unix socket that accepts connections and never answers; counts what reaches it. */
class SilentRuntime {
  connections = 0;
  pingRequests = 0;
  private readonly sockets = new Set<net.Socket>();
  private readonly closeWaiters: Array<() => void> = [];

  private constructor(
    readonly socketPath: string,
    private readonly server: net.Server,
  ) {}

  static async start(socketPath: string): Promise<SilentRuntime> {
    const server = net.createServer();
    const runtime = new SilentRuntime(socketPath, server);
    server.on('connection', (socket) => runtime.accept(socket));
    await new Promise<void>((resolve) => server.listen(socketPath, resolve));
    return runtime;
  }

  private accept(socket: net.Socket): void {
    this.connections += 1;
    this.sockets.add(socket);
    socket.on('data', (chunk: Buffer) => {
      this.pingRequests += chunk.toString('latin1').split('GET /_ping ').length - 1;
    });
    socket.on('error', () => undefined);
    socket.on('close', () => {
      this.sockets.delete(socket);
      for (const wake of this.closeWaiters.splice(0)) wake();
    });
  }

  get openConnections(): number {
    return this.sockets.size;
  }

  /** Resolves once no connection is open any more. */
  async allClosed(): Promise<void> {
    while (this.sockets.size > 0) await new Promise<void>((resolve) => this.closeWaiters.push(resolve));
  }

  async stop(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

async function startWith(type: 'docker' | 'cri', socketPath: string, timeoutMs: number): Promise<OperationsSystem> {
  return startOperationsSystem({
    config: testConfig({ health: { timeoutMs, containerRuntime: { type, endpoint: `unix://${socketPath}`, requiredConditions: ['RuntimeReady'] } } }),
    env: jsonEnv,
    logStream: new LogCapture(),
  });
}

describe('a container runtime that accepts and never answers', () => {
  let dir: string;
  let runtime: SilentRuntime;

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'hang-'));
    runtime = await SilentRuntime.start(path.join(dir, 'rt.sock'));
  });
  afterAll(async () => {
    await runtime?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  describe('as the Docker daemon', () => {
    let system: OperationsSystem;
    beforeAll(async () => {
      system = await startWith('docker', runtime.socketPath, 2000);
    });
    afterAll(async () => system?.stop());

    it('answers 503 with a reason that says the ping timed out, and leaves no connection open', async () => {
      const started = performance.now();
      // The client gives up after 5 s: an answer after the 2 s timeout plus a small margin passes.
      const answer = await request(`${system.url}/healthz`, { timeoutMs: 5000 });
      const elapsedMs = performance.now() - started;
      expect(answer.status).toBe(503);
      expect(answer.json).toEqual({
        status: 'Service Unavailable',
        time: expect.any(String),
        failed_checks: [{ component: 'docker', reason: 'failed to ping to Docker daemon: timed out after 2s' }],
      });
      await runtime.allClosed();
      process.stdout.write(`[health-timeout] /healthz answered after ${elapsedMs.toFixed(0)} ms with a 2000 ms checker timeout\n`);
    });

    it('serves 200 concurrent /healthz requests from one ping of the runtime', async () => {
      const before = { connections: runtime.connections, pings: runtime.pingRequests };
      const answers = await Promise.all(Array.from({ length: 200 }, () => request(`${system.url}/healthz`, { timeoutMs: 15_000 })));
      for (const answer of answers) {
        expect(answer.status).toBe(503);
        expect(answer.json).toMatchObject({ failed_checks: [{ component: 'docker', reason: 'failed to ping to Docker daemon: timed out after 2s' }] });
      }
      expect(runtime.connections - before.connections).toBe(1);
      expect(runtime.pingRequests - before.pings).toBe(1);
      await runtime.allClosed();
    });
  });

  describe('when the only client waiting disconnects', () => {
    let system: OperationsSystem;
    beforeAll(async () => {
      // A timeout far beyond the test's own: only the disconnect can end the ping.
      system = await startWith('docker', runtime.socketPath, 600_000);
    });
    afterAll(async () => system?.stop());

    it('stops the ping at once, and the next request starts a new one', async () => {
      const before = runtime.connections;
      const client = http.get(`${system.url}/healthz`, { agent: false });
      client.on('error', () => undefined);
      await waitFor('the ping to connect to the runtime', () => runtime.connections !== before, { everyMs: 10 });
      expect(runtime.openConnections).toBe(1);
      client.destroy();
      await runtime.allClosed();

      const second = http.get(`${system.url}/healthz`, { agent: false });
      second.on('error', () => undefined);
      await waitFor('a new ping to connect to the runtime', () => runtime.connections !== before + 1, { everyMs: 10 });
      expect(runtime.connections).toBe(before + 2);
      second.destroy();
      await runtime.allClosed();
    });

    it('stops the ping too when the client was on a keep-alive connection with answered requests before it', async () => {
      const before = runtime.connections;
      const socket = net.connect(system.address.port, '127.0.0.1');
      socket.on('error', () => undefined);
      socket.setEncoding('utf8');
      let received = '';
      socket.on('data', (chunk: string) => (received += chunk));
      socket.write('GET /version HTTP/1.1\r\nHost: localhost\r\n\r\n');
      await waitFor('the answer to GET /version', () => received.startsWith('HTTP/1.1 200 '));
      socket.write('GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n');
      await waitFor('the ping to connect to the runtime', () => runtime.connections !== before, { everyMs: 10 });
      socket.destroy();
      await runtime.allClosed();
      expect(runtime.connections).toBe(before + 1);
    });
  });

  describe('as a CRI runtime', () => {
    let system: OperationsSystem;
    beforeAll(async () => {
      system = await startWith('cri', runtime.socketPath, 1000);
    });
    afterAll(async () => system?.stop());

    it('answers 503 with a reason that says the status call timed out', async () => {
      const answer = await request(`${system.url}/healthz`, { timeoutMs: 5000 });
      expect(answer.status).toBe(503);
      expect(answer.json).toMatchObject({
        failed_checks: [{ component: 'cri', reason: `failed to get the CRI runtime status from unix://${runtime.socketPath}: timed out after 1s` }],
      });
    });
  });
});
