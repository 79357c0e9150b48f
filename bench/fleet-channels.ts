/**
 * Benchmark (not a test): GET /fleet/channels over 500 simulated nodes on loopback, each serving a
 * realistic /metrics of about 285 KB with 20 channels: the recorded /metrics of a real Fabric
 * 3.1.5 peer (../shared/fixtures/fabric-recorded, peer0.org1 step 1) with every series of its
 * channel ch1 repeated for 20 channels, its heights moving one block per read (a few nodes 10
 * blocks behind, one stalled). Prints each round's latency against the bound (nodeTimeout + 1 s),
 * the bytes read of each /metrics, the statuses, and the fleet process's RSS at rounds 10, 30 and 50
 * and at the last round (100 by default).
 *
 *   node_modules/.bin/tsc -p tsconfig.json --outDir .tmp/bench-build \
 *     && $(scripts/node24.sh) --expose-gc .tmp/bench-build/bench/fleet-channels.js [--nodes 500] [--timeout 2s] [--concurrency 16] [--rounds 100]
 *
 * The nodes run in a child process (one process, 500 HTTPS ports), so the fleet server's memory is
 * its own. BENCH_VERBOSE=1 prints every round with process.memoryUsage().
 */
import { fork } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import https from 'node:https';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { parseArgs } from 'node:util';
import { fleetConfigFrom, fleetExtension, type FleetChannelReport } from '../src/fleet';
import { OperationsSystem } from '../src/system';
import { testConfig } from '../test/support/config';
import { createTestPki, type TestPki } from '../test/support/pki';

const channelCount = 20;

/** The recorded peer's /metrics: $FABRIC_RECORDED, else shared/fixtures/fabric-recorded in a folder above this file. */
function recordedMetrics(): string {
  const relative = path.join('3.1.5', 'nodes', 'peer0.org1', 'metrics-1.txt');
  const candidates = process.env.FABRIC_RECORDED !== undefined ? [process.env.FABRIC_RECORDED] : [];
  for (let dir = __dirname; path.dirname(dir) !== dir; dir = path.dirname(dir)) candidates.push(path.join(dir, 'shared', 'fixtures', 'fabric-recorded'));
  const found = candidates.find((dir) => existsSync(path.join(dir, relative)));
  if (found === undefined) throw new Error(`no recorded Fabric /metrics (${relative}) under ${candidates.join(', ')}; set FABRIC_RECORDED`);
  return readFileSync(path.join(found, relative), 'utf8');
}

/**
 * The recording widened to 20 channels: every line of ch1 repeated for ch1..ch20 (those of ch2
 * dropped), in place, so that each family keeps its lines together and the families their order.
 * The height samples are cut out: `before` and `after` them, made per read.
 */
function widenedMetrics(): { before: Buffer; after: Buffer } {
  const lines = recordedMetrics().split('\n');
  const out: string[] = [];
  let heightsAt = -1;
  for (const line of lines) {
    if (line.startsWith('ledger_blockchain_height{')) {
      if (heightsAt < 0) heightsAt = out.length;
      continue;
    }
    if (line.includes('channel="ch2"')) continue;
    if (line.includes('channel="ch1"')) for (let index = 1; index <= channelCount; index += 1) out.push(line.replace('channel="ch1"', `channel="ch${index}"`));
    else out.push(line);
  }
  return { before: Buffer.from(out.slice(0, heightsAt).join('\n') + '\n'), after: Buffer.from(out.slice(heightsAt).join('\n')) };
}

/** The child: `count` HTTPS nodes; node i's heights move one block per read, a few lag 10 blocks, node 7 is stalled. */
async function serveNodes(count: number, certPem: string, keyPem: string): Promise<void> {
  const { before, after } = widenedMetrics();
  const reads = new Array<number>(count).fill(0);
  const ports: number[] = [];
  for (let index = 0; index < count; index += 1) {
    const server = https.createServer({ cert: certPem, key: keyPem }, (req, res) => {
      if (req.url !== '/metrics') {
        res.writeHead(404).end();
        return;
      }
      reads[index] = (reads[index] ?? 0) + 1;
      const top = 1000 + (reads[index] ?? 0);
      const height = index === 7 ? 1001 : index % 50 === 0 ? top - 10 : top;
      let heights = '';
      for (let channel = 1; channel <= channelCount; channel += 1) heights += `ledger_blockchain_height{channel="ch${channel}"} ${height + channel}\n`;
      res.writeHead(200, { 'Content-Type': 'text/plain; version=0.0.4; charset=utf-8' });
      res.write(before);
      res.write(heights);
      res.end(after);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    ports.push((server.address() as net.AddressInfo).port);
  }
  process.send?.({ ports, bytes: before.length + after.length + 20 * 45 });
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
      timeout: { type: 'string', default: '2s' },
      concurrency: { type: 'string', default: '16' },
      rounds: { type: 'string', default: '100' },
    },
  });
  const nodeCount = Number(values.nodes);
  const rounds = Number(values.rounds);
  const pki = await createTestPki();
  const child = fork(__filename, ['--serve-nodes', String(nodeCount)], {
    env: { ...process.env, BENCH_CERT: pki.server.certPem, BENCH_KEY: pki.server.keyPem },
  });
  const ready = await new Promise<{ ports: number[]; bytes: number }>((resolve) =>
    child.once('message', (message: { ports: number[]; bytes: number }) => resolve(message)),
  );
  const stateDir = await mkdtemp(path.join(os.tmpdir(), 'fabric-ops-bench-fleet-channels-'));
  const config = fleetConfigFrom(
    {
      stateDirectory: stateDir,
      nodeTimeout: values.timeout,
      concurrency: Number(values.concurrency),
      pollInterval: '0s',
      minRoundInterval: '0s',
      groups: { sim: { tls: { caFiles: [pki.serverCA.cert], certFile: pki.client.cert, keyFile: pki.client.key } } },
      nodes: ready.ports.map((port, index) => ({ name: `peer${index}`, url: `https://127.0.0.1:${port}`, group: 'sim', dialect: 'peer' })),
    },
    path.join(stateDir, 'fleet.yaml'),
  );
  const bound = config.nodeTimeoutMs + 1000;
  console.log(
    `fleet channels benchmark: ${nodeCount} simulated nodes on loopback (one child process), each /metrics ${(ready.bytes / 1024).toFixed(0)} KB with ${channelCount} channels ` +
      `(the recorded 3.1.5 peer widened), per-node timeout ${values.timeout}, concurrency ${values.concurrency}, ${rounds} rounds, ${os.cpus().length} CPUs`,
  );
  const fleet = await OperationsSystem.start({
    config: testConfig({
      operations: { tls: { enabled: true, certFile: pki.server.cert, keyFile: pki.server.key, clientRootCAFiles: [pki.clientCA.cert] } },
    }),
    logStream: new Writable({ write: (_c, _e, done) => done() }),
    extensions: [fleetExtension(config)],
  });
  const heap = (): string => {
    (globalThis as { gc?: () => void }).gc?.();
    return mb(process.memoryUsage().heapUsed);
  };
  try {
    const latencies: number[] = [];
    const roundMs: number[] = [];
    const rss: Record<number, string> = {};
    let last: FleetChannelReport | undefined;
    const rssStart = mb(process.memoryUsage().rss);
    for (let round = 1; round <= rounds; round += 1) {
      const answer = await get(`${fleet.url}/fleet/channels`, pki);
      if (answer.status !== 200) throw new Error(`/fleet/channels answered ${answer.status}: ${answer.body.slice(0, 200)}`);
      last = JSON.parse(answer.body) as FleetChannelReport;
      latencies.push(answer.ms);
      roundMs.push(last.round.durationMs);
      // Rounds 10, 30 and 50 as well as the last: RSS climbs to a plateau over the first 30-40 rounds (native memory of
      // the TLS connections, not the heap: the heap after GC is the same at every mark), then stays there.
      if ([10, 30, 50].includes(round) || round === rounds) {
        const used = heap();
        const memory = process.memoryUsage();
        rss[round] = `${mb(memory.rss)} (after GC: heap ${used} used of ${mb(memory.heapTotal)}, external ${mb(memory.external)})`;
      }
      if (process.env.BENCH_VERBOSE !== undefined || round === 1 || round % 10 === 0)
        console.log(
          `  round ${round}: /fleet/channels ${answer.ms.toFixed(0)} ms (the round ${last.round.durationMs} ms, cut ${last.round.cut}), RSS ${mb(process.memoryUsage().rss)}${process.env.BENCH_VERBOSE !== undefined ? ` ${JSON.stringify(process.memoryUsage())}` : ''}`,
        );
    }
    if (last === undefined) throw new Error('no round ran');
    const read = last.nodes.map((node) => node.bytesRead ?? 0);
    const over = roundMs.filter((ms) => ms > bound).length;
    console.log(
      `rounds: the fleet's round median ${median(roundMs).toFixed(0)} ms, max ${Math.max(...roundMs).toFixed(0)} ms; /fleet/channels answered in median ${median(latencies).toFixed(0)} ms, max ${Math.max(...latencies).toFixed(0)} ms ` +
        `(bound: nodeTimeout + 1 s = ${bound} ms; ${over} of ${roundMs.length} rounds over it)`,
    );
    console.log(
      `last round: ${last.summary.nodes} nodes, ${last.summary.channels} channels: ${last.summary.ok} ok, ${last.summary.behind} behind, ${last.summary.stalled} stalled, ${last.summary.unreadable} not read; ` +
        `bytes read of each /metrics: median ${(median(read) / 1024).toFixed(0)} KB of ${(ready.bytes / 1024).toFixed(0)} KB (the read stops after the height family)`,
    );
    const marks = Object.keys(rss)
      .map(Number)
      .sort((a, b) => a - b)
      .map((round) => `${rss[round]} at round ${round}`);
    console.log(`fleet process RSS: ${rssStart} at start, ${marks.join(', ')}`);
  } finally {
    await fleet.stop(0);
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
