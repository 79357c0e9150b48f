/**
 * Benchmark (not a test): GET /fleet/channels over 500 simulated nodes on loopback, each serving a
 * realistic /metrics of about 285 KB with 20 channels: the recorded /metrics of a real Fabric
 * 3.1.5 peer (../shared/fixtures/fabric-recorded, peer0.org1 step 1) with every series of its
 * channel ch1 repeated for 20 channels, its heights moving one block per read (a few nodes 10
 * blocks behind, one stalled). Prints each round's latency against the bound (nodeTimeout + 1 s),
 * the bytes read of each /metrics, the statuses, the process's CPU a round, and the fleet process's
 * RSS at rounds 10, 30 and 50 and at the last round (100 by default), before and after a full GC,
 * with where it is (the main thread's malloc heap, V8's heap pages against V8's own count, files),
 * the young generation V8 ran with, and issue 33's goal (RSS at the last round no worse than at round 10).
 *
 *   node_modules/.bin/tsc -p tsconfig.json --outDir .tmp/bench-build \
 *     && $(scripts/node24.sh) --expose-gc .tmp/bench-build/bench/fleet-channels.js [--nodes 500] [--timeout 2s] [--concurrency 16] [--rounds 100]
 *
 * The nodes run in a child process (one process, 500 HTTPS ports), so the fleet server's memory is
 * its own. BENCH_VERBOSE=1 prints every round with that split. V8's options go before the script:
 * `--scavenger-max-new-space-capacity-mb=8` (or `--max-semi-space-size=16`) caps the young generation
 * that makes RSS climb on a large machine; `--max-heap-size=128` sizes V8 as in a 256 MiB container
 * (docs/fleet-channels.md, "Scale").
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
import v8 from 'node:v8';
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

/** What the process's memory was at a moment (Linux: from /proc/self/smaps; the split is 0 elsewhere). */
interface MemoryFigures {
  rss: number;
  /** The main thread's malloc heap ([heap]): OpenSSL's and Node's native allocations, the Buffers' bytes. */
  brk: number;
  /** Every other anonymous mapping: V8's heap pages, the other threads' malloc arenas, large mmapped allocations. */
  anonymous: number;
  /** Of `anonymous`, the mappings of V8's heap pages (256 KiB-aligned, not code): what V8's pages really hold resident. */
  v8Pages: number;
  /** Mapped files: node's binary and libraries. */
  file: number;
  heapUsed: number;
  external: number;
  arrayBuffers: number;
  /** V8's heap: committed, and what V8 counts of it as resident. */
  v8Committed: number;
  v8Physical: number;
  /** Each space's resident / committed size. */
  spaces: string;
}

/** A mark: the figures at the round's end, then after a full GC. */
interface Mark {
  before: MemoryFigures;
  after: MemoryFigures;
}

/** V8's heap pages are 256 KiB, allocated at 256 KiB-aligned addresses; glibc's thread arenas start at 64 MiB-aligned ones. */
const v8PageBytes = 256 * 1024;
const arenaBytes = 64 * 1024 * 1024;

function memoryFigures(): MemoryFigures {
  let brk = 0;
  let anonymous = 0;
  let v8Pages = 0;
  let file = 0;
  try {
    let name = '';
    let v8Page = false;
    for (const line of readFileSync('/proc/self/smaps', 'utf8').split('\n')) {
      const mapping = /^([0-9a-f]+)-([0-9a-f]+) (\S+) \S+ \S+ \d+\s*(.*)$/.exec(line);
      if (mapping !== null) {
        name = mapping[4] ?? '';
        const start = Number.parseInt(mapping[1] ?? '', 16);
        const size = Number.parseInt(mapping[2] ?? '', 16) - start;
        v8Page = start % v8PageBytes === 0 && size % v8PageBytes === 0 && start % arenaBytes !== 0 && !(mapping[3] ?? '').includes('x');
      } else if (line.startsWith('Rss:')) {
        const bytes = Number(line.split(/\s+/)[1]) * 1024;
        if (name === '[heap]') brk += bytes;
        else if (name === '') {
          anonymous += bytes;
          if (v8Page) v8Pages += bytes;
        } else if (name.startsWith('/')) file += bytes;
      }
    }
  } catch {
    // not Linux: no split
  }
  const memory = process.memoryUsage();
  const heap = v8.getHeapStatistics();
  const spaces = v8
    .getHeapSpaceStatistics()
    .filter((space) => space.space_size > 0)
    .map((space) => `${space.space_name.replace('_space', '')} ${mb(space.physical_space_size)}/${mb(space.space_size)}`)
    .join(', ');
  return {
    rss: memory.rss,
    brk,
    anonymous,
    v8Pages,
    file,
    heapUsed: memory.heapUsed,
    external: memory.external,
    arrayBuffers: memory.arrayBuffers,
    v8Committed: heap.total_heap_size,
    v8Physical: heap.total_physical_size,
    spaces,
  };
}

function describeMemory(figures: MemoryFigures): string {
  return (
    `RSS ${mb(figures.rss)} = malloc heap ${mb(figures.brk)} + anonymous ${mb(figures.anonymous)} (V8's heap pages ${mb(figures.v8Pages)}; V8 counts ${mb(figures.v8Physical)} of its ` +
    `${mb(figures.v8Committed)} committed as resident) + files ${mb(figures.file)}; heap used ${mb(figures.heapUsed)}, external ${mb(figures.external)} ` +
    `(array buffers ${mb(figures.arrayBuffers)}); spaces resident by V8's count/committed: ${figures.spaces}`
  );
}

/**
 * The young generation this process ran with: its size is what makes RSS climb over the first rounds (docs/fleet-channels.md,
 * "Scale"). V8 sizes it from the memory Node reports (the host's, or the container's limit) unless --max-semi-space-size is given.
 */
function youngGeneration(): string {
  const newSpace = v8.getHeapSpaceStatistics().find((space) => space.space_name === 'new_space');
  const memory = process.constrainedMemory() > 0 ? Math.min(process.constrainedMemory(), os.totalmem()) : os.totalmem();
  const flags = [...process.execArgv, ...(process.env.NODE_OPTIONS ?? '').split(/\s+/)].filter((flag) => flag !== '');
  return (
    `V8's young generation: new space ${mb(newSpace?.space_size ?? 0)} committed at the end (two semi-spaces); memory Node sized the heap from ${mb(memory)}; ` +
    `node options: ${flags.length > 0 ? flags.join(' ') : 'none'}`
  );
}

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
  const fullGc = (): void => (globalThis as { gc?: () => void }).gc?.();
  try {
    const latencies: number[] = [];
    const roundMs: number[] = [];
    const cpuMs: number[] = [];
    const rssByRound: number[] = [];
    const marks = new Map<number, Mark>();
    let last: FleetChannelReport | undefined;
    const rssStart = process.memoryUsage.rss();
    for (let round = 1; round <= rounds; round += 1) {
      const cpuBefore = process.cpuUsage();
      const answer = await get(`${fleet.url}/fleet/channels`, pki);
      const cpu = process.cpuUsage(cpuBefore);
      cpuMs.push((cpu.user + cpu.system) / 1000);
      if (answer.status !== 200) throw new Error(`/fleet/channels answered ${answer.status}: ${answer.body.slice(0, 200)}`);
      last = JSON.parse(answer.body) as FleetChannelReport;
      latencies.push(answer.ms);
      roundMs.push(last.round.durationMs);
      rssByRound.push(process.memoryUsage.rss());
      // Rounds 10, 30 and 50 as well as the last: with V8's default young generation on a large machine (two 64 MB
      // semi-spaces), RSS climbs over the first 30-40 rounds as the young generation's pages become resident
      // (docs/fleet-channels.md, "Scale"); the heap after a full GC is the same at every mark.
      if ([10, 30, 50].includes(round) || round === rounds) {
        const before = memoryFigures();
        fullGc();
        marks.set(round, { before, after: memoryFigures() });
      }
      if (process.env.BENCH_VERBOSE !== undefined || round === 1 || round % 10 === 0)
        console.log(
          `  round ${round}: /fleet/channels ${answer.ms.toFixed(0)} ms (the round ${last.round.durationMs} ms, cut ${last.round.cut}, CPU ${cpuMs[cpuMs.length - 1]?.toFixed(0)} ms), ` +
            (process.env.BENCH_VERBOSE !== undefined ? describeMemory(memoryFigures()) : `RSS ${mb(process.memoryUsage.rss())}`),
        );
    }
    if (last === undefined) throw new Error('no round ran');
    const read = last.nodes.map((node) => node.bytesRead ?? 0);
    const over = roundMs.filter((ms) => ms > bound).length;
    console.log(
      `rounds: the fleet's round median ${median(roundMs).toFixed(0)} ms, max ${Math.max(...roundMs).toFixed(0)} ms; /fleet/channels answered in median ${median(latencies).toFixed(0)} ms, max ${Math.max(...latencies).toFixed(0)} ms ` +
        `(bound: nodeTimeout + 1 s = ${bound} ms; ${over} of ${roundMs.length} rounds over it); the process's CPU (user + system, all its threads) median ${median(cpuMs).toFixed(0)} ms a round`,
    );
    console.log(
      `last round: ${last.summary.nodes} nodes, ${last.summary.channels} channels: ${last.summary.ok} ok, ${last.summary.behind} behind, ${last.summary.stalled} stalled, ${last.summary.unreadable} not read; ` +
        `bytes read of each /metrics: median ${(median(read) / 1024).toFixed(0)} KB of ${(ready.bytes / 1024).toFixed(0)} KB (the read stops after the height family)`,
    );
    const markRounds = [...marks.keys()].sort((a, b) => a - b);
    console.log(
      `fleet process RSS: ${mb(rssStart)} at start, ` +
        markRounds
          .map((round) => `${mb(marks.get(round)?.before.rss ?? 0)} at round ${round} (after a full GC ${mb(marks.get(round)?.after.rss ?? 0)})`)
          .join(', '),
    );
    for (const round of markRounds) {
      const mark = marks.get(round);
      if (mark !== undefined) console.log(`  round ${round}, after a full GC: ${describeMemory(mark.after)}`);
    }
    console.log(youngGeneration());
    const first = marks.get(10);
    const final = marks.get(rounds);
    if (first !== undefined && final !== undefined && rounds > 10) {
      const verdict = (from: number, to: number): string =>
        `${mb(to)} at round ${rounds} against ${mb(from)} at round 10: ${to <= from ? 'met' : `not met (${mb(to - from)} more)`}`;
      const lastTen = rssByRound.slice(-10);
      console.log(
        `issue 33, RSS no worse at round ${rounds} than at round 10: ${verdict(first.before.rss, final.before.rss)}; after a full GC ${verdict(first.after.rss, final.after.rss)}; ` +
          `RSS over the last 10 rounds between ${mb(Math.min(...lastTen))} and ${mb(Math.max(...lastTen))}`,
      );
    }
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
