/**
 * Benchmark (not a test): /healthz requests per second and latency with a healthy Docker
 * checker, over plain HTTP and over TLS, on kept-alive connections and on a new connection per
 * request (as kubelet probes do), and how many requests reached the Docker engine meanwhile.
 *
 * Run (needs dockerd and openssl; starts its own private Docker engine, never touches the
 * shared one at /var/run/docker.sock):
 *
 *   cd /work/main && node_modules/.bin/tsc -p tsconfig.json --outDir .tmp/bench-build \
 *     && $(scripts/node24.sh) .tmp/bench-build/bench/health.js [--seconds 5] [--concurrency 1,32]
 *
 * The load comes from a worker thread (its own event loop), so client and server do not share
 * one. Each Docker ping goes through a counting unix-socket relay in front of the engine.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { startOperationsSystem } from '../src';
import { PrivateDockerd } from '../test/support/dockerd';
import { testConfig } from '../test/support/config';
import { createTestPki } from '../test/support/pki';

interface Scenario {
  tls: boolean;
  keepAlive: boolean;
  concurrency: number;
}

interface LoadResult {
  requests: number;
  errors: number;
  statuses: Record<string, number>;
  seconds: number;
  latenciesMs: number[];
}

/** Relays a unix socket to the engine's and counts connections and `GET /_ping` requests. */
class CountingRelay {
  connections = 0;
  pings = 0;
  private readonly server: net.Server;
  private readonly open = new Set<net.Socket>();

  constructor(
    readonly socketPath: string,
    target: string,
  ) {
    this.server = net.createServer((client) => {
      this.connections += 1;
      const upstream = net.connect(target);
      this.open.add(client).add(upstream);
      client.on('data', (chunk: Buffer) => {
        this.pings += chunk.toString('latin1').split('GET /_ping ').length - 1;
      });
      client.pipe(upstream).pipe(client);
      const end = (): void => {
        client.destroy();
        upstream.destroy();
        this.open.delete(client);
        this.open.delete(upstream);
      };
      client.on('error', end).on('close', end);
      upstream.on('error', end).on('close', end);
    });
  }

  listen(): Promise<void> {
    return new Promise((resolve) => this.server.listen(this.socketPath, resolve));
  }

  close(): Promise<void> {
    for (const socket of this.open) socket.destroy();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

/** Plain JavaScript for the load worker: `concurrency` loops of GET /healthz until the deadline. */
const loadWorkerSource = `
const { parentPort, workerData } = require('node:worker_threads');
const http = require('node:http');
const https = require('node:https');
const { url, ca, keepAlive, concurrency, seconds } = workerData;
const target = new URL(url + '/healthz');
const lib = target.protocol === 'https:' ? https : http;
const agent = keepAlive ? new lib.Agent({ keepAlive: true, maxSockets: concurrency }) : false;
const latenciesMs = [];
const statuses = {};
let errors = 0;
const started = performance.now();
const deadline = started + seconds * 1000;
function once() {
  return new Promise((resolve) => {
    const t0 = performance.now();
    const req = lib.request(target, { agent, ca, servername: 'localhost', headers: keepAlive ? {} : { connection: 'close' } }, (res) => {
      res.resume();
      res.on('end', () => {
        latenciesMs.push(performance.now() - t0);
        statuses[res.statusCode] = (statuses[res.statusCode] || 0) + 1;
        resolve();
      });
    });
    req.on('error', () => { errors += 1; resolve(); });
    req.end();
  });
}
async function loop() { while (performance.now() < deadline) await once(); }
Promise.all(Array.from({ length: concurrency }, loop)).then(() => {
  if (agent) agent.destroy();
  parentPort.postMessage({ requests: latenciesMs.length, errors, statuses, seconds: (performance.now() - started) / 1000, latenciesMs });
});
`;

function runLoad(url: string, ca: string | undefined, scenario: Scenario, seconds: number): Promise<LoadResult> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(loadWorkerSource, {
      eval: true,
      workerData: { url, ca, keepAlive: scenario.keepAlive, concurrency: scenario.concurrency, seconds },
    });
    worker.once('message', (result: LoadResult) => {
      resolve(result);
      void worker.terminate();
    });
    worker.once('error', reject);
  });
}

function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const index = Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1);
  return sorted[Math.max(0, index)] ?? Number.NaN;
}

function argument(name: string, fallback: string): string {
  const index = process.argv.indexOf(`--${name}`);
  return index >= 0 ? (process.argv[index + 1] ?? fallback) : fallback;
}

async function main(): Promise<void> {
  const seconds = Number(argument('seconds', '5'));
  const concurrencies = argument('concurrency', '1,32')
    .split(',')
    .map((text) => Number(text));
  const pki = await createTestPki();
  const dockerd = await PrivateDockerd.start();
  const relayDir = await mkdtemp(path.join(os.tmpdir(), 'hb-'));
  const relay = new CountingRelay(path.join(relayDir, 'relay.sock'), dockerd.socketPath);
  await relay.listen();

  const rows: string[] = [];
  try {
    for (const tls of [false, true]) {
      const system = await startOperationsSystem({
        config: testConfig({
          operations: tls ? { tls: { enabled: true, certFile: pki.server.cert, keyFile: pki.server.key, clientAuthRequired: false } } : {},
          health: { containerRuntime: { type: 'docker', endpoint: `unix://${relay.socketPath}` } },
        }),
        env: { FABRIC_LOGGING_SPEC: 'warn' },
      });
      try {
        for (const keepAlive of [true, false]) {
          for (const concurrency of concurrencies) {
            const scenario: Scenario = { tls, keepAlive, concurrency };
            const before = { connections: relay.connections, pings: relay.pings };
            const result = await runLoad(system.url, tls ? pki.serverCA.certPem : undefined, scenario, seconds);
            const pings = relay.pings - before.pings;
            const sorted = [...result.latenciesMs].sort((a, b) => a - b);
            rows.push(
              [
                tls ? 'https' : 'http ',
                keepAlive ? 'keep-alive' : 'new conn  ',
                String(concurrency).padStart(4),
                (result.requests / result.seconds).toFixed(0).padStart(7),
                percentile(sorted, 50).toFixed(2).padStart(7),
                percentile(sorted, 99).toFixed(2).padStart(7),
                String(result.requests).padStart(7),
                String(pings).padStart(6),
                (result.requests / Math.max(pings, 1)).toFixed(1).padStart(8),
                Object.entries(result.statuses)
                  .map(([status, count]) => `${status}:${count}`)
                  .join(' ') + (result.errors > 0 ? ` errors:${result.errors}` : ''),
              ].join(' | '),
            );
            process.stderr.write(`done: ${rows[rows.length - 1]}\n`);
          }
        }
      } finally {
        await system.stop();
      }
    }
  } finally {
    await relay.close();
    await rm(relayDir, { recursive: true, force: true });
    await dockerd.dispose();
    await pki.cleanup();
  }

  const header = 'proto | connection | conc | req/s   | p50 ms  | p99 ms  | requests | pings | req/ping | statuses';
  process.stdout.write(`/healthz with a healthy Docker checker, ${seconds} s per row, Node ${process.version}, ${os.cpus().length} CPUs\n`);
  process.stdout.write(`${header}\n${rows.join('\n')}\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`bench/health: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
