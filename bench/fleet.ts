/**
 * Benchmark (not a test): GET /fleet/healthz over 500 simulated nodes on loopback, one of them
 * hung (accepts, never answers). Prints the round's latency against the per-node timeout, how
 * many node calls 100 concurrent callers cause, and the fleet server's memory.
 *
 *   node_modules/.bin/tsc -p tsconfig.json --outDir .tmp/bench-build \
 *     && $(scripts/node24.sh) --expose-gc .tmp/bench-build/bench/fleet.js [--nodes 500] [--timeout 1s] [--concurrency 16,64] [--rounds 6]
 *
 * The nodes run in a child process (one process, 500 HTTPS ports, each answering /healthz and
 * /version as Fabric does, counting its calls), so the fleet server's memory is its own.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import https from 'node:https';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { parseArgs } from 'node:util';
import { fleetConfigFrom, fleetExtension } from '../src/fleet';
import { OperationsSystem } from '../src/system';
import { testConfig } from '../test/support/config';
import { createTestPki, type TestPki } from '../test/support/pki';

type ToChild = { type: 'counts' } | { type: 'reset' };
type FromChild = { type: 'ready'; ports: number[]; hungPort: number } | { type: 'counts'; counts: number[] };

/** The child: `count` HTTPS nodes and one hung TCP port. */
async function serveNodes(count: number, certPem: string, keyPem: string): Promise<void> {
  const counts = new Array<number>(count).fill(0);
  const ports: number[] = [];
  for (let index = 0; index < count; index += 1) {
    const server = https.createServer({ cert: certPem, key: keyPem }, (req, res) => {
      counts[index] = (counts[index] ?? 0) + 1;
      const body = req.url === '/version' ? { Version: '2.5.12', CommitSHA: 'af0b647' } : { status: 'OK', time: new Date().toISOString() };
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify(body));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    ports.push((server.address() as net.AddressInfo).port);
  }
  const hung = net.createServer(() => undefined);
  await new Promise<void>((resolve) => hung.listen(0, '127.0.0.1', resolve));
  process.on('message', (message: ToChild) => {
    if (message.type === 'reset') counts.fill(0);
    process.send?.({ type: 'counts', counts } satisfies FromChild);
  });
  process.send?.({ type: 'ready', ports, hungPort: (hung.address() as net.AddressInfo).port } satisfies FromChild);
}

function ask(child: ChildProcess, message: ToChild): Promise<number[]> {
  return new Promise((resolve) => {
    child.once('message', (reply: FromChild) => resolve(reply.type === 'counts' ? reply.counts : []));
    child.send(message);
  });
}

function get(url: string, pki: TestPki): Promise<{ status: number; ms: number; body: string }> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const req = https.request(url, { ca: pki.serverCA.certPem, cert: pki.client.certPem, key: pki.client.keyPem, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, ms: performance.now() - started, body: Buffer.concat(chunks).toString() }));
    });
    req.on('error', reject);
    req.end();
  });
}

const mb = (bytes: number): string => `${(bytes / 1024 / 1024).toFixed(0)} MB`;
const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? NaN;

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      nodes: { type: 'string', default: '500' },
      timeout: { type: 'string', default: '1s' },
      concurrency: { type: 'string', default: '16,64' },
      rounds: { type: 'string', default: '6' },
    },
  });
  const nodeCount = Number(values.nodes);
  const pki = await createTestPki();
  const child = fork(__filename, ['--serve-nodes', String(nodeCount)], {
    env: { ...process.env, BENCH_CERT: pki.server.certPem, BENCH_KEY: pki.server.keyPem },
  });
  const ready = await new Promise<Extract<FromChild, { type: 'ready' }>>((resolve) =>
    child.once('message', (message: FromChild) => message.type === 'ready' && resolve(message)),
  );
  const stateDir = await mkdtemp(path.join(os.tmpdir(), 'fabric-ops-bench-fleet-'));
  console.log(
    `fleet benchmark: ${nodeCount} simulated nodes + 1 hung on loopback (one child process), per-node timeout ${values.timeout}, ${os.cpus().length} CPUs`,
  );
  console.log('Each line: one fleet server; its /fleet/healthz asked --rounds times in a row (the first warms the call order), then by 100 callers at once.');
  console.log('RSS is the fleet process (which also runs the callers); heap is after a full GC (node --expose-gc).');
  const heap = (): string => {
    (globalThis as { gc?: () => void }).gc?.();
    return mb(process.memoryUsage().heapUsed);
  };
  try {
    for (const concurrency of values.concurrency.split(',').map(Number)) {
      for (const minRoundInterval of ['0s', '1s']) {
        const config = fleetConfigFrom(
          {
            stateDirectory: stateDir,
            nodeTimeout: values.timeout,
            concurrency,
            pollInterval: '0s',
            minRoundInterval,
            healthy: { minShare: 0.99 },
            groups: { sim: { tls: { caFiles: [pki.serverCA.cert], certFile: pki.client.cert, keyFile: pki.client.key } } },
            nodes: [
              ...ready.ports.map((port, index) => ({ name: `node${index}`, url: `https://127.0.0.1:${port}`, group: 'sim' })),
              { name: 'hung', url: `https://127.0.0.1:${ready.hungPort}`, group: 'sim' },
            ],
          },
          path.join(stateDir, 'fleet.yaml'),
        );
        const fleet = await OperationsSystem.start({
          config: testConfig({
            operations: { tls: { enabled: true, certFile: pki.server.cert, keyFile: pki.server.key, clientRootCAFiles: [pki.clientCA.cert] } },
          }),
          logStream: new Writable({ write: (_c, _e, done) => done() }),
          extensions: [fleetExtension(config)],
        });
        try {
          const heapStarted = heap();
          const rssStarted = process.memoryUsage().rss;
          const alone: number[] = [];
          let status = 0;
          for (let round = 0; round < Number(values.rounds); round += 1) {
            // Past the reuse window, so that each request is a round.
            if (config.minRoundIntervalMs > 0) await new Promise((resolve) => setTimeout(resolve, config.minRoundIntervalMs + 50));
            const answer = await get(`${fleet.url}/fleet/healthz`, pki);
            if (round > 0) alone.push(answer.ms);
            status = answer.status;
          }
          const heapRounds = heap();
          const rssRounds = process.memoryUsage().rss;
          if (config.minRoundIntervalMs > 0) await new Promise((resolve) => setTimeout(resolve, config.minRoundIntervalMs + 50));
          await ask(child, { type: 'reset' });
          const callers = await Promise.all(Array.from({ length: 100 }, () => get(`${fleet.url}/fleet/healthz`, pki)));
          const counts = await ask(child, { type: 'counts' });
          const calls = counts.reduce((sum, value) => sum + value, 0);
          const callerMs = callers.map((answer) => answer.ms);
          console.log(
            `concurrency ${concurrency}, minRoundInterval ${minRoundInterval}: /fleet/healthz ${median(alone).toFixed(0)} ms median of ${alone.length} (status ${status}; timeout + 100 ms = ${config.nodeTimeoutMs + 100} ms);` +
              ` 100 callers: ${calls} node calls for ${nodeCount} nodes (max ${Math.max(...counts)} per node), caller p50 ${median(callerMs).toFixed(0)} ms, max ${Math.max(...callerMs).toFixed(0)} ms;` +
              ` RSS ${mb(rssStarted)} -> ${mb(rssRounds)} after the rounds -> ${mb(process.memoryUsage().rss)} after the callers; heap ${heapStarted} -> ${heapRounds} -> ${heap()}`,
          );
        } finally {
          await fleet.stop(0);
        }
      }
    }
  } finally {
    child.kill();
    await rm(stateDir, { recursive: true, force: true });
    await pki.cleanup();
  }
}

if (process.argv[2] === '--serve-nodes') {
  void serveNodes(Number(process.argv[3]), process.env.BENCH_CERT ?? '', process.env.BENCH_KEY ?? '');
} else {
  main().catch((error: unknown) => {
    console.error(error);
    process.exit(1);
  });
}
