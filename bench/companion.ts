/**
 * Benchmark (not a test): the companion's footprint (issue 29, "Performance"; docs/companion.md,
 * "Footprint"), side by side in one run:
 *
 *   - `node:https alone`: bench/http-servers/healthz-only.js, node:https answering /healthz and
 *     nothing else loaded: the floor of any Node.js process serving HTTPS on this machine;
 *   - `fabric-ops`: the command without a configuration file (CORE_* variables, provider prometheus,
 *     runtime checker none), as bench/http.ts starts it;
 *   - `fabric-ops companion`: the command as a sidecar runs it, with the recorded Fabric 2.5.12
 *     sample core.yaml unchanged (`--config`), `CORE_OPERATIONS_COMPANION_ENABLED=true`, its own TLS,
 *     the recorded peer0.org1's MSP, a data folder of its own (the disk figures), beside the double
 *     of that recorded peer (test/support/fabric-double.ts: its operations TLS, the operator's client
 *     certificate), which it calls on its /healthz;
 *   - the real Fabric peer (`peer node start` on its release's sampleconfig, as bench/http.ts) when
 *     FABRIC_HOMES (or FABRIC_HOME, or peer on the PATH) names a release; else the column is left
 *     out, and said so.
 *
 * Figures, min / median / max over the rounds:
 *   - start to the first 200 on /healthz over TLS (wall, from spawn) and the server's CPU time until
 *     then (all its threads), in start-only rounds (--start-rounds, default 10) in turns, after one
 *     start of each to make its caches (the command writes its code cache 1 s after its start);
 *   - resident memory (VmRSS) and its private, anonymous part (RssAnon: the heap, malloc; the rest is
 *     the mapped node binary and libraries, which the kernel shares between processes of the same
 *     image) 2 s after the first 200 and --idle seconds (default 60) after it, no request meanwhile
 *     (--idle-rounds, default 1: the contenders idle side by side, each started in turn);
 *   - with --traffic-seconds N (default 0: none): RSS after N s of a sidecar's traffic, a /metrics
 *     scrape (with the client certificate) and a /healthz each second, on the fabric-ops contenders:
 *     code that runs again and again is optimised by V8 in time, which the idle figures do not show;
 *   - with --load-seconds N (default 3; 0: none) and wrk on the PATH: requests/s and server CPU per
 *     request of the fabric-ops contenders (plain HTTP: wrk presents no client certificate) on
 *     keep-alive `/version` and on `/metrics`, the throughput any V8 flag of the command's must not
 *     give back.
 *
 * FABRIC_OPS_DIST (default ./dist) names the build to measure; BENCH_BASELINE_DIST adds the companion
 * of a second build (before/after in one run); `--companion-dist <dist>` (repeatable) the companion of
 * another; `--companion-flags "<node flags>"` (repeatable) the companion started with those node
 * flags (what was tried). Servers run under `taskset -c 0`, wrk under `taskset -c 1`. It prints
 * figures and asserts nothing.
 *
 *   make bench    (or, after `npm run build` and compiling bench/ into .tmp/bench-build:)
 *   $(scripts/node24.sh) .tmp/bench-build/bench/companion.js [--start-rounds 10] [--idle 60] [--idle-rounds 1] [--load-seconds 3] [--traffic-seconds 120]
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import http from 'node:http';
import https from 'node:https';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { FabricNetwork, releaseDir, type FabricDouble } from '../test/support/fabric-double';
import { fabricHome, writeNodeConfig } from '../test/support/fabric-reference';
import { createTestPki, type TestPki } from '../test/support/pki';
import { freeTcpPort } from '../test/support/ports';
import { fabricReleases } from '../test/support/real-binaries';

function option(name: string, fallback: number): number {
  const index = process.argv.indexOf(`--${name}`);
  const value = index >= 0 ? Number(process.argv[index + 1]) : NaN;
  return Number.isFinite(value) && value >= 0 ? value : fallback;
}

function options(name: string): string[] {
  const found: string[] = [];
  process.argv.forEach((arg, index) => {
    const value = process.argv[index + 1];
    if (arg === `--${name}` && value !== undefined) found.push(value);
  });
  return found;
}

const startRounds = Math.max(1, option('start-rounds', 10));
const idleSeconds = Math.max(3, option('idle', 60));
const idleRounds = Math.max(1, option('idle-rounds', 1));
const loadSeconds = option('load-seconds', 3);
const trafficSeconds = option('traffic-seconds', 0);
const serverCpu = process.env.BENCH_SERVER_CPU ?? '0';
const loadCpu = process.env.BENCH_LOAD_CPU ?? '1';
const clockTicks = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout.trim()) || 100;
const haveWrk = !spawnSync('wrk', ['-v'], { encoding: 'utf8' }).error;

type Kind = 'floor' | 'fabric-ops' | 'companion' | 'fabric-peer';
interface Contender {
  name: string;
  kind: Kind;
  dist?: string;
  nodeFlags?: string[];
}

const dist = resolve(process.env.FABRIC_OPS_DIST ?? 'dist');
const contenders: Contender[] = [
  { name: 'node:https alone', kind: 'floor' },
  { name: 'fabric-ops', kind: 'fabric-ops', dist },
  { name: 'fabric-ops companion', kind: 'companion', dist },
];
if (process.env.BENCH_BASELINE_DIST) {
  contenders.push({ name: 'companion (baseline)', kind: 'companion', dist: resolve(process.env.BENCH_BASELINE_DIST) });
}
for (const other of options('companion-dist')) contenders.push({ name: `companion ${other}`, kind: 'companion', dist: resolve(other) });
for (const flags of options('companion-flags')) {
  contenders.push({ name: `companion ${flags}`, kind: 'companion', dist, nodeFlags: flags.split(/\s+/).filter((flag) => flag !== '') });
}
const peerHome = ((): { home: string } | { missing: string } => {
  try {
    const { homes, missing } = fabricReleases();
    const first = homes[0];
    return first === undefined ? { missing: missing ?? 'no Fabric release named' } : { home: fabricHome(first) };
  } catch (error) {
    return { missing: (error as Error).message };
  }
})();
if ('home' in peerHome) contenders.push({ name: 'Fabric peer', kind: 'fabric-peer' });

/** The watched node, the companion's configuration and data folders, the peer's starts. */
interface World {
  pki: TestPki;
  node: FabricDouble;
  dir: string;
  coreYaml: string;
  mspDir: string;
  dataDir: string;
  peerStarts: number;
}

const running = new Set<ChildProcess>();
process.on('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

async function launchSpec(contender: Contender, tls: boolean, port: number, world: World): Promise<{ argv: string[]; env: NodeJS.ProcessEnv }> {
  const { pki } = world;
  const base: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: process.env.HOME };
  const node = [process.execPath, ...(contender.nodeFlags ?? [])];
  if (contender.kind === 'floor') {
    const env: NodeJS.ProcessEnv = { ...base, BENCH_PORT: String(port) };
    if (tls) Object.assign(env, { BENCH_TLS_CERT: pki.server.cert, BENCH_TLS_KEY: pki.server.key, BENCH_TLS_CA: pki.clientCA.cert });
    return { argv: [...node, join(__dirname, 'http-servers', 'healthz-only.js')], env };
  }
  if (contender.kind === 'fabric-peer') {
    if (!('home' in peerHome)) throw new Error('no Fabric release');
    world.peerStarts += 1;
    const config = await writeNodeConfig(join(world.dir, 'peer', String(world.peerStarts)), {
      kind: 'peer',
      home: peerHome.home,
      vmEndpoint: '',
      metrics: { provider: 'prometheus' },
      tls: { cert: pki.server.cert, key: pki.server.key, clientAuthRequired: false, clientRootCAs: [pki.clientCA.cert] },
    });
    return { argv: [join(peerHome.home, 'bin', 'peer'), 'node', 'start'], env: { ...base, ...config.env, CORE_OPERATIONS_LISTENADDRESS: `127.0.0.1:${port}` } };
  }
  const cli = join(contender.dist ?? dist, 'cli.js');
  if (contender.kind === 'fabric-ops') {
    const env: NodeJS.ProcessEnv = {
      ...base,
      CORE_OPERATIONS_LISTENADDRESS: `127.0.0.1:${port}`,
      CORE_METRICS_PROVIDER: 'prometheus',
      CORE_OPERATIONS_HEALTHCHECK_CONTAINERRUNTIME_TYPE: 'none',
    };
    if (tls) {
      Object.assign(env, {
        CORE_OPERATIONS_TLS_ENABLED: 'true',
        CORE_OPERATIONS_TLS_CERT_FILE: pki.server.cert,
        CORE_OPERATIONS_TLS_KEY_FILE: pki.server.key,
        CORE_OPERATIONS_TLS_CLIENTROOTCAS_FILES: pki.clientCA.cert,
        CORE_OPERATIONS_TLS_CLIENTAUTHREQUIRED: 'false',
      });
    }
    return { argv: [...node, cli], env };
  }
  // The companion: the node's core.yaml as Fabric ships it, the node's settings from CORE_*
  // variables (as a sidecar gets the node's environment), and its own switch, address and TLS.
  const { node: watched } = world;
  const env: NodeJS.ProcessEnv = {
    ...base,
    CORE_OPERATIONS_COMPANION_ENABLED: 'true',
    CORE_OPERATIONS_COMPANION_LISTENADDRESS: `127.0.0.1:${port}`,
    CORE_OPERATIONS_LISTENADDRESS: `0.0.0.0:${new URL(watched.url).port}`,
    CORE_OPERATIONS_TLS_ENABLED: 'true',
    CORE_OPERATIONS_TLS_CERT_FILE: watched.certFile,
    CORE_OPERATIONS_TLS_KEY_FILE: watched.keyFile,
    CORE_OPERATIONS_TLS_CLIENTROOTCAS_FILES: watched.caFile,
    CORE_OPERATIONS_COMPANION_NODE_ROOTCAS_FILES: watched.caFile,
    CORE_OPERATIONS_COMPANION_NODE_CLIENTCERT_FILE: watched.clientCertFile,
    CORE_OPERATIONS_COMPANION_NODE_CLIENTKEY_FILE: watched.clientKeyFile,
    CORE_PEER_MSPCONFIGPATH: world.mspDir,
    CORE_PEER_FILESYSTEMPATH: world.dataDir,
    CORE_LEDGER_SNAPSHOTS_ROOTDIR: join(world.dataDir, 'snapshots'),
  };
  if (tls) {
    Object.assign(env, {
      CORE_OPERATIONS_COMPANION_TLS_ENABLED: 'true',
      CORE_OPERATIONS_COMPANION_TLS_CERT_FILE: pki.server.cert,
      CORE_OPERATIONS_COMPANION_TLS_KEY_FILE: pki.server.key,
      CORE_OPERATIONS_COMPANION_TLS_CLIENTROOTCAS_FILES: pki.clientCA.cert,
      CORE_OPERATIONS_COMPANION_TLS_CLIENTAUTHREQUIRED: 'false',
    });
  }
  return { argv: [...node, cli, '--config', world.coreYaml], env };
}

function get(url: string, path: string, timeoutMs = 2000, clientPair?: { cert: Buffer; key: Buffer }): Promise<{ status: number; body: string }> {
  return new Promise((resolveGet, reject) => {
    const client = url.startsWith('https:') ? https : http;
    const req = client.get(`${url}${path}`, { agent: false, rejectUnauthorized: false, timeout: timeoutMs, ...clientPair }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolveGet({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', reject);
  });
}

interface Instance {
  contender: Contender;
  child: ChildProcess;
  pid: number;
  url: string;
  startMs: number;
  startCpuMs: number;
  /** performance.now() at the first 200. */
  readyAt: number;
}

async function startInstance(contender: Contender, tls: boolean, world: World): Promise<Instance> {
  const port = await freeTcpPort();
  const { argv, env } = await launchSpec(contender, tls, port, world);
  const url = `${tls ? 'https' : 'http'}://127.0.0.1:${port}`;
  const stderr: string[] = [];
  const started = performance.now();
  const child = spawn('taskset', ['-c', serverCpu, ...argv], { env, stdio: ['ignore', 'ignore', 'pipe'] });
  running.add(child);
  child.stderr?.on('data', (chunk: Buffer) => {
    if (stderr.length < 200) stderr.push(chunk.toString('utf8'));
  });
  let exited = null as string | null;
  child.on('exit', (code, signal) => {
    exited = `exited with ${code ?? signal}`;
    running.delete(child);
  });
  const deadline = started + 30_000;
  let last = '';
  for (;;) {
    if (exited !== null) throw new Error(`${contender.name} ${exited} before answering:\n${stderr.join('')}`);
    if (performance.now() > deadline) throw new Error(`${contender.name} did not answer /healthz 200 in time (last: ${last}):\n${stderr.join('')}`);
    try {
      const { status, body } = await get(url, '/healthz', 1000);
      if (status === 200 && /"status":"OK"/.test(body)) {
        const readyAt = performance.now();
        return { contender, child, pid: child.pid ?? 0, url, startMs: readyAt - started, startCpuMs: scheduledCpuMs(child.pid ?? 0), readyAt };
      }
      last = `${status} ${body.slice(0, 300)}`;
    } catch (error) {
      last = (error as Error).message;
    }
    await sleep(1);
  }
}

async function stopInstance(instance: Instance): Promise<void> {
  const { child } = instance;
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolveExit) => child.once('exit', () => resolveExit()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
  await exited;
  clearTimeout(timer);
}

/** VmRSS and RssAnon of a process, in MB. */
function memory(pid: number): { rss: number; anon: number } {
  const text = readFileSync(`/proc/${pid}/status`, 'utf8');
  const field = (name: string): number => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(text)?.[1] ?? NaN) / 1024;
  return { rss: field('VmRSS'), anon: field('RssAnon') };
}

function scheduledCpuMs(pid: number): number {
  let total = 0;
  for (const task of readdirSync(`/proc/${pid}/task`)) total += Number(readFileSync(`/proc/${pid}/task/${task}/schedstat`, 'utf8').split(' ')[0]) / 1e6;
  return total;
}

function cpuSeconds(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / clockTicks;
  } catch {
    return 0;
  }
}

/** figure -> contender name -> values */
const figures = new Map<string, { unit: string; values: Map<string, number[]> }>();

function record(figure: string, unit: string, contender: Contender, value: number): void {
  const entry = figures.get(figure) ?? { unit, values: new Map<string, number[]>() };
  figures.set(figure, entry);
  entry.values.set(contender.name, [...(entry.values.get(contender.name) ?? []), value]);
}

function orderOf(list: Contender[], index: number): Contender[] {
  return list.map((_, i) => list[(i + index) % list.length] as Contender);
}

async function starts(world: World): Promise<void> {
  for (const contender of contenders) {
    const instance = await startInstance(contender, true, world);
    await sleep(1500);
    await stopInstance(instance);
  }
  for (let index = 0; index < startRounds; index += 1) {
    process.stderr.write(`start round ${index + 1}/${startRounds}\r`);
    for (const contender of orderOf(contenders, index)) {
      const instance = await startInstance(contender, true, world);
      record('start to first 200 on /healthz (TLS)', 'ms', contender, instance.startMs);
      record('start: server CPU time until the first 200', 'ms', contender, instance.startCpuMs);
      await stopInstance(instance);
    }
  }
  process.stderr.write('\n');
}

async function idle(world: World, round: number): Promise<void> {
  process.stderr.write(`idle round ${round + 1}/${idleRounds}: ${idleSeconds} s\n`);
  const instances: Instance[] = [];
  try {
    for (const contender of orderOf(contenders, round)) {
      const instance = await startInstance(contender, true, world);
      instances.push(instance);
      await sleep(2000);
      const { rss, anon } = memory(instance.pid);
      record('RSS 2 s after the first 200', 'MB', contender, rss);
      record('private (RssAnon) 2 s after the first 200', 'MB', contender, anon);
    }
    for (const instance of instances) {
      const wait = instance.readyAt + idleSeconds * 1000 - performance.now();
      if (wait > 0) await sleep(wait);
      const { rss, anon } = memory(instance.pid);
      record(`RSS ${idleSeconds} s after the first 200`, 'MB', instance.contender, rss);
      record(`private (RssAnon) ${idleSeconds} s after the first 200`, 'MB', instance.contender, anon);
    }
  } finally {
    await Promise.all(instances.map(stopInstance));
  }
}

async function traffic(world: World): Promise<void> {
  const served = contenders.filter((contender) => contender.kind === 'fabric-ops' || contender.kind === 'companion');
  process.stderr.write(`sidecar traffic: ${trafficSeconds} s\n`);
  const clientPair = { cert: readFileSync(world.pki.client.cert), key: readFileSync(world.pki.client.key) };
  const instances: Instance[] = [];
  try {
    for (const contender of served) instances.push(await startInstance(contender, true, world));
    const end = performance.now() + trafficSeconds * 1000;
    while (performance.now() < end) {
      for (const instance of instances) {
        for (const path of ['/metrics', '/healthz']) {
          const { status } = await get(instance.url, path, 5000, clientPair);
          if (status !== 200) throw new Error(`${instance.contender.name}: ${path} answered ${status}`);
        }
      }
      await sleep(1000);
    }
    for (const instance of instances) {
      const { rss, anon } = memory(instance.pid);
      record(`RSS after ${trafficSeconds} s of a /metrics and a /healthz each second`, 'MB', instance.contender, rss);
      record(`private (RssAnon) after ${trafficSeconds} s of that traffic`, 'MB', instance.contender, anon);
    }
  } finally {
    await Promise.all(instances.map(stopInstance));
  }
}

async function wrk(instance: Instance, path: string, connections: number): Promise<{ rps: number; cpuPerRequestUs: number }> {
  const args = ['-c', loadCpu, 'wrk', '-t1', `-c${connections}`, `-d${loadSeconds}s`, '--timeout', '5s', `${instance.url}${path}`];
  const before = cpuSeconds(instance.pid);
  const child = spawn('taskset', args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  const code = await new Promise<number | null>((resolveExit) => child.on('exit', (exitCode) => resolveExit(exitCode)));
  const used = cpuSeconds(instance.pid) - before;
  const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(output)?.[1] ?? NaN);
  const requests = Number(/(\d+) requests in/.exec(output)?.[1] ?? NaN);
  const non2xx = Number(/Non-2xx or 3xx responses:\s+(\d+)/.exec(output)?.[1] ?? 0);
  if (code !== 0 || !Number.isFinite(rps) || non2xx > 0)
    throw new Error(`wrk ${path} against ${instance.contender.name} failed (${code}, ${non2xx} non-2xx):\n${output}`);
  return { rps, cpuPerRequestUs: (used * 1e6) / requests };
}

async function loads(world: World): Promise<void> {
  const loaded = contenders.filter((contender) => contender.kind === 'fabric-ops' || contender.kind === 'companion');
  for (const contender of loaded) {
    const instance = await startInstance(contender, false, world);
    try {
      await sleep(1500);
      for (const [path, connections] of [
        ['/version', 8],
        ['/metrics', 2],
      ] as const) {
        await wrk(instance, path, connections); // warm-up
        const { rps, cpuPerRequestUs } = await wrk(instance, path, connections);
        record(`keep-alive ${path} (plain, -c${connections}), requests/s`, 'req/s', contender, rps);
        record(`keep-alive ${path}, server CPU per request`, 'us', contender, cpuPerRequestUs);
      }
      record(`RSS after the loads`, 'MB', contender, memory(instance.pid).rss);
    } finally {
      await stopInstance(instance);
    }
  }
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

function format(value: number, unit: string): string {
  return unit === 'req/s' || unit === 'us' ? Math.round(value).toLocaleString('en-US') : value.toFixed(1);
}

function report(): void {
  const width = Math.max(...contenders.map((c) => c.name.length)) + 2;
  for (const [figure, { unit, values }] of figures) {
    console.log(`\n${figure} (${unit})`);
    console.log(`  ${''.padEnd(width)}${'min'.padStart(9)}${'median'.padStart(9)}${'max'.padStart(9)}`);
    for (const contender of contenders) {
      const list = values.get(contender.name);
      if (list === undefined) continue;
      console.log(
        `  ${contender.name.padEnd(width)}${format(Math.min(...list), unit).padStart(9)}${format(median(list), unit).padStart(9)}${format(Math.max(...list), unit).padStart(9)}`,
      );
    }
  }
  const value = (figure: string, name: string): number => median(figures.get(figure)?.values.get(name) ?? [NaN]);
  const companion = 'fabric-ops companion';
  const idleFigure = `RSS ${idleSeconds} s after the first 200`;
  const start = 'start to first 200 on /healthz (TLS)';
  console.log('\nissue 29 (medians, this run):');
  const peer = contenders.find((contender) => contender.kind === 'fabric-peer');
  const line = (label: string, ours: number, goal: number, goalText: string, unit: string): void =>
    console.log(`  ${label.padEnd(46)}${ours.toFixed(1).padStart(8)} ${unit}   goal <= ${goalText}: ${ours <= goal ? 'met' : 'NOT met'}`);
  // Without the peer beside it, the recorded figures (../shared/fixtures/fabric-recorded/README.md):
  // a 2.5.12 peer idles at 34-45 MB and answers its first /healthz about 100 ms after its start.
  const peerIdle = peer ? value(idleFigure, peer.name) : 40;
  const peerStart = peer ? value(start, peer.name) : 100;
  const source = peer ? 'the peer, this run' : 'the recorded peer';
  line(`companion idle RSS (${idleSeconds} s)`, value(idleFigure, companion), peerIdle, `${peerIdle.toFixed(0)} MB (${source})`, 'MB');
  line('companion idle RSS (2 s)', value('RSS 2 s after the first 200', companion), peerIdle, `${peerIdle.toFixed(0)} MB (${source})`, 'MB');
  line('companion start to first /healthz 200', value(start, companion), peerStart, `${peerStart.toFixed(0)} ms (${source})`, 'ms');
  const floor = value(idleFigure, 'node:https alone');
  console.log(
    `  (Node.js itself, node:https alone: ${floor.toFixed(1)} MB idle; the companion adds ${(value(idleFigure, companion) - floor).toFixed(1)} MB to it)`,
  );
}

async function main(): Promise<void> {
  // The recordings: $FABRIC_RECORDED, else shared/fixtures/fabric-recorded in a folder above this
  // file (test/support/fabric-double.ts looks beside its own file, compiled into .tmp/bench-build).
  if (process.env.FABRIC_RECORDED === undefined) {
    for (let dir = __dirname; dirname(dir) !== dir; dir = dirname(dir)) {
      const candidate = join(dir, 'shared', 'fixtures', 'fabric-recorded');
      if (existsSync(join(candidate, 'README.md'))) {
        process.env.FABRIC_RECORDED = candidate;
        break;
      }
    }
  }
  const pki = await createTestPki();
  const network = await FabricNetwork.open('2.5.12');
  const dir = await mkdtemp(join(tmpdir(), 'fabric-ops-bench-companion-'));
  try {
    const node = network.node('peer0.org1');
    await node.start();
    const coreYaml = join(dir, 'core.yaml');
    copyFileSync(join(releaseDir('2.5.12'), 'sampleconfig', 'core.yaml'), coreYaml);
    const dataDir = join(dir, 'production');
    mkdirSync(join(dataDir, 'snapshots'), { recursive: true });
    const mspDir = join(releaseDir('2.5.12'), 'crypto', 'peerOrganizations', 'org1', 'peers', 'peer0.org1', 'msp');
    if (!existsSync(mspDir)) throw new Error(`the recorded MSP is missing: ${mspDir}`);
    const world: World = { pki, node, dir, coreYaml, mspDir, dataDir, peerStarts: 0 };

    console.log(
      'Companion footprint (issue 29): fabric-ops in companion mode beside the double of a recorded Fabric 2.5.12 peer, with Node.js alone and the real peer',
    );
    if ('home' in peerHome)
      console.log(`  Fabric peer: ${join(peerHome.home, 'bin', 'peer')} node start, on its sampleconfig (no Docker checker, operations TLS)`);
    else console.log(`  no Fabric peer column: ${peerHome.missing}; its recorded figures stand in (../shared/fixtures/fabric-recorded/README.md)`);
    console.log(`  node ${process.version} (${process.execPath}); load average at start ${loadavg()[0]?.toFixed(2)} (other work on the machine adds noise)`);
    console.log(
      `  servers pinned with \`taskset -c ${serverCpu}\`; ${startRounds} start rounds in turns after one start of each; ${idleRounds} idle round(s) of ${idleSeconds} s; ` +
        (loadSeconds > 0 && haveWrk
          ? `loads of ${loadSeconds} s with wrk under \`taskset -c ${loadCpu}\``
          : `no loads (${haveWrk ? '--load-seconds 0' : 'wrk is not installed'})`),
    );
    for (const contender of contenders) {
      if (contender.dist || contender.nodeFlags) console.log(`  ${contender.name}: ${contender.dist ?? ''} ${(contender.nodeFlags ?? []).join(' ')}`);
    }
    await starts(world);
    for (let round = 0; round < idleRounds; round += 1) await idle(world, round);
    if (trafficSeconds > 0) await traffic(world);
    if (loadSeconds > 0 && haveWrk) await loads(world);
    report();
  } finally {
    await network.close();
    await pki.cleanup();
    await rm(dir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? (error.stack ?? error.message) : String(error));
  process.exitCode = 1;
});
