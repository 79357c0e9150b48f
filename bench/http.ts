/**
 * Benchmark (not a test): fabric-ops side by side with a bare node:http(s) server and a minimal
 * express 5 app serving the same /healthz JSON and prom-client's /metrics, in one run.
 *
 *   - start to the first 200 on /healthz over TLS (from spawn) and the server's CPU time until then,
 *     in start-only rounds of their own (--start-rounds, default 15) after one start of each to make
 *     their caches; idle RSS, peak RSS under load;
 *   - keep-alive /healthz, plain and HTTPS; a new TLS connection per request (`Connection: close`);
 *   - /metrics with 10,000 extra series (requests/s, p50 and p99 latency).
 *
 * fabric-ops is the compiled command (`<dist>/cli.js`) started from CORE_* variables with provider
 * prometheus and runtime checker none; for /metrics it is the compiled library (the command cannot
 * add series). Every server runs under `taskset -c 0`, the load generator (wrk, one thread) under
 * `taskset -c 1`; this process only starts them and polls. Several rounds, in turns (the order
 * rotates every round), so noise is visible as min / median / max. It prints figures and asserts nothing.
 *
 *   make bench    (or, after `npm run build` and compiling bench/ into .tmp/bench-build:)
 *   $(scripts/node24.sh) .tmp/bench-build/bench/http.js [--rounds 3] [--seconds 3] [--connections 32]
 *
 * FABRIC_OPS_DIST (default ./dist) names the build to measure; BENCH_BASELINE_DIST adds a second
 * build as another contender (before/after in one run). The real Fabric peer (`peer node start` on
 * its release's sampleconfig: the first of FABRIC_HOMES, else FABRIC_HOME, else peer on the PATH) is measured for its start
 * and idle memory only, beside the others; without the release the column is left out, and said so.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import http from 'node:http';
import https from 'node:https';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { fabricHome, writeNodeConfig } from '../test/support/fabric-reference';
import { createTestPki, type TestPki } from '../test/support/pki';
import { fabricReleases } from '../test/support/real-binaries';
import { freeTcpPort } from '../test/support/ports';

function option(name: string, fallback: number): number {
  const index = process.argv.indexOf(`--${name}`);
  const value = index >= 0 ? Number(process.argv[index + 1]) : NaN;
  return Number.isFinite(value) && value > 0 ? value : fallback;
}

const rounds = option('rounds', 3);
const startRounds = option('start-rounds', 15);
const seconds = option('seconds', 3);
const connections = option('connections', 32);
const newConnectionConnections = option('new-connections', 8);
const metricsConnections = 4;
const series = 10_000;
const serverCpu = process.env.BENCH_SERVER_CPU ?? '0';
const loadCpu = process.env.BENCH_LOAD_CPU ?? '1';
const clockTicks = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout.trim()) || 100;

type Kind = 'bare' | 'express' | 'fabric-ops' | 'go' | 'fabric-peer';
type Mode = 'tls' | 'plain' | 'metrics' | 'metrics-large';
/** Series of the large /metrics figure (issue 20): fewer connections and one load per round. */
const largeSeries = option('large-series', 100_000);
/** The name of the large /metrics figures. */
const large = `/metrics with ${largeSeries.toLocaleString('en-US')} series`;
const seriesIn = (mode: Mode): number => (mode === 'metrics' ? series : mode === 'metrics-large' ? largeSeries : 0);

interface Contender {
  name: string;
  kind: Kind;
  /** fabric-ops only: the compiled tree (cli.js, index.js). */
  dist?: string;
}

/**
 * Fabric's own stack (bench/go/main.go: Go net/http + client_golang shaped like Fabric's operations
 * server), built by `make bench` into BENCH_GO_SERVER; without it the column is left out, and said so.
 */
const goServer = resolve(process.env.BENCH_GO_SERVER ?? '.tmp/bench-build/go-ops-server');
const haveGo = existsSync(goServer);
const contenders: Contender[] = [
  ...(haveGo ? [{ name: 'Go net/http', kind: 'go' as const }] : []),
  { name: 'bare node:http(s)', kind: 'bare' },
  { name: 'express 5', kind: 'express' },
  { name: 'fabric-ops', kind: 'fabric-ops', dist: resolve(process.env.FABRIC_OPS_DIST ?? 'dist') },
];
if (process.env.BENCH_BASELINE_DIST) {
  contenders.push({ name: 'fabric-ops (baseline)', kind: 'fabric-ops', dist: resolve(process.env.BENCH_BASELINE_DIST) });
}
/** The real Fabric peer: its release folder, or why there is no peer column. */
const peerHome = ((): { home: string } | { missing: string } => {
  try {
    // The first release FABRIC_HOMES (or FABRIC_HOME, or peer on the PATH) names: the project has no
    // Fabric binaries of its own (test/support/real-binaries.ts); without one there is no peer column.
    const { homes, missing } = fabricReleases();
    const first = homes[0];
    return first === undefined ? { missing: missing ?? 'no Fabric release named' } : { home: fabricHome(first) };
  } catch (error) {
    return { missing: (error as Error).message };
  }
})();
const fabricPeer = 'Fabric peer';
if ('home' in peerHome) contenders.push({ name: fabricPeer, kind: 'fabric-peer' });
/** Where each start of the Fabric peer gets its configuration and ledger (removed at the end). */
let peerRoot: string | null = null;
let peerStarts = 0;

interface Instance {
  contender: Contender;
  mode: Mode;
  child: ChildProcess;
  pid: number;
  url: string;
  startMs: number;
  /** CPU time the server used until its first 200, all its threads (nanosecond clock). */
  startCpuMs: number;
  stderr: string[];
}

const running = new Set<ChildProcess>();
process.on('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

/** The command line of a contender's server (node and a script, the Go binary or the peer) and its environment. */
async function launchSpec(contender: Contender, mode: Mode, port: number, pki: TestPki): Promise<{ argv: string[]; env: NodeJS.ProcessEnv }> {
  const base: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: process.env.HOME };
  if (contender.kind === 'fabric-peer') {
    if (!('home' in peerHome) || mode !== 'tls') throw new Error(`the Fabric peer is measured over TLS only (asked: ${mode})`);
    // A configuration and ledger folder of its own at every start, as a new pod's: its sample core.yaml
    // with the writable paths and the ports moved, no Docker checker, operations TLS as the others.
    peerRoot ??= await mkdtemp(join(tmpdir(), 'fabric-ops-bench-peer-'));
    peerStarts += 1;
    const config = await writeNodeConfig(join(peerRoot, String(peerStarts)), {
      kind: 'peer',
      home: peerHome.home,
      vmEndpoint: '',
      metrics: { provider: 'prometheus' },
      tls: { cert: pki.server.cert, key: pki.server.key, clientAuthRequired: false, clientRootCAs: [pki.clientCA.cert] },
    });
    return { argv: [join(peerHome.home, 'bin', 'peer'), 'node', 'start'], env: { ...base, ...config.env, CORE_OPERATIONS_LISTENADDRESS: `127.0.0.1:${port}` } };
  }
  if (contender.kind !== 'fabric-ops') {
    const env: NodeJS.ProcessEnv = { ...base, BENCH_PORT: String(port), BENCH_SERIES: String(seriesIn(mode)) };
    if (mode === 'tls') Object.assign(env, { BENCH_TLS_CERT: pki.server.cert, BENCH_TLS_KEY: pki.server.key, BENCH_TLS_CA: pki.clientCA.cert });
    if (contender.kind === 'go') return { argv: [goServer], env };
    return { argv: [process.execPath, join(__dirname, 'http-servers', `${contender.kind}.js`)], env };
  }
  const dist = contender.dist ?? resolve('dist');
  const env: NodeJS.ProcessEnv = {
    ...base,
    CORE_OPERATIONS_LISTENADDRESS: `127.0.0.1:${port}`,
    CORE_METRICS_PROVIDER: 'prometheus',
    CORE_OPERATIONS_HEALTHCHECK_CONTAINERRUNTIME_TYPE: 'none',
  };
  if (mode === 'tls') {
    Object.assign(env, {
      CORE_OPERATIONS_TLS_ENABLED: 'true',
      CORE_OPERATIONS_TLS_CERT_FILE: pki.server.cert,
      CORE_OPERATIONS_TLS_KEY_FILE: pki.server.key,
      CORE_OPERATIONS_TLS_CLIENTROOTCAS_FILES: pki.clientCA.cert,
      CORE_OPERATIONS_TLS_CLIENTAUTHREQUIRED: 'false',
    });
  }
  if (mode === 'metrics' || mode === 'metrics-large') {
    return {
      argv: [process.execPath, join(__dirname, 'http-servers', 'fabric-ops-library.js')],
      env: { ...env, FABRIC_OPS_DIST: dist, BENCH_SERIES: String(seriesIn(mode)) },
    };
  }
  return { argv: [process.execPath, join(dist, 'cli.js')], env };
}

/** One GET; resolves with the status and body, rejects on any connection error. */
function get(url: string, path: string, timeoutMs = 2000): Promise<{ status: number; body: string }> {
  return new Promise((resolveGet, reject) => {
    const client = url.startsWith('https:') ? https : http;
    const req = client.get(`${url}${path}`, { agent: false, rejectUnauthorized: false, timeout: timeoutMs }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolveGet({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', reject);
  });
}

async function startInstance(contender: Contender, mode: Mode, pki: TestPki): Promise<Instance> {
  // Probed, not port 0: the other contenders (bench/http-servers, the Go server) take BENCH_PORT
  // and print nothing, and the start figure is the time to the first /healthz 200 found the
  // same way for every contender.
  const port = await freeTcpPort();
  const { argv, env } = await launchSpec(contender, mode, port, pki);
  const url = `${mode === 'tls' ? 'https' : 'http'}://127.0.0.1:${port}`;
  const stderr: string[] = [];
  const started = performance.now();
  const child = spawn('taskset', ['-c', serverCpu, ...argv], { env, stdio: ['ignore', 'ignore', 'pipe'] });
  running.add(child);
  child.stderr?.on('data', (chunk: Buffer) => {
    if (stderr.length < 200) stderr.push(chunk.toString('utf8'));
  });
  // Set by the listener below (a plain `= null` would make TypeScript narrow it to null for good).
  let exited = null as string | null;
  child.on('exit', (code, signal) => {
    exited = `exited with ${code ?? signal}`;
    running.delete(child);
  });
  const deadline = started + (mode === 'metrics-large' ? 120_000 : 30_000);
  for (;;) {
    if (exited !== null) throw new Error(`${contender.name} (${mode}) ${exited} before answering:\n${stderr.join('')}`);
    if (performance.now() > deadline) throw new Error(`${contender.name} (${mode}) did not answer /healthz in time:\n${stderr.join('')}`);
    try {
      const { status, body } = await get(url, '/healthz', 1000);
      if (status === 200) {
        if (!/"status":"OK"/.test(body)) throw new Error(`${contender.name}: unexpected /healthz body ${body}`);
        const startMs = performance.now() - started;
        return { contender, mode, child, pid: child.pid ?? 0, url, startMs, startCpuMs: scheduledCpuMs(child.pid ?? 0), stderr };
      }
    } catch (error) {
      if ((error as Error).message.startsWith(contender.name)) throw error;
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

function procStatus(pid: number): { rssKb: number; hwmKb: number } {
  const text = readFileSync(`/proc/${pid}/status`, 'utf8');
  const field = (name: string): number => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(text)?.[1] ?? NaN);
  return { rssKb: field('VmRSS'), hwmKb: field('VmHWM') };
}

/** CPU time of a process so far, all its threads, in ms: /proc/<pid>/task/<tid>/schedstat (nanoseconds; /proc/<pid>/stat counts 10 ms ticks). */
function scheduledCpuMs(pid: number): number {
  let total = 0;
  for (const task of readdirSync(`/proc/${pid}/task`)) total += Number(readFileSync(`/proc/${pid}/task/${task}/schedstat`, 'utf8').split(' ')[0]) / 1e6;
  return total;
}

/** User + system CPU time of a process, in seconds (0 once it is gone). */
function cpuSeconds(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / clockTicks;
  } catch {
    return 0;
  }
}

interface LoadResult {
  requestsPerSecond: number;
  /** Server CPU time (all its threads) per request: unlike requests/s, barely moved by other work on the machine. */
  serverCpuPerRequestUs: number;
  p50Ms: number;
  p99Ms: number;
  errors: number;
  serverCpu: number;
  loadCpu: number;
}

function latencyMs(output: string, percentile: string): number {
  const match = new RegExp(`^\\s+${percentile}%\\s+([\\d.]+)(us|ms|s)\\s*$`, 'm').exec(output);
  if (!match) return NaN;
  const value = Number(match[1]);
  return match[2] === 'us' ? value / 1000 : match[2] === 's' ? value * 1000 : value;
}

async function load(instance: Instance, path: string, options: { connections: number; seconds: number; close?: boolean }): Promise<LoadResult> {
  const args = ['-c', loadCpu, 'wrk', '-t1', `-c${options.connections}`, `-d${options.seconds}s`, '--latency', '--timeout', '5s'];
  if (options.close) args.push('-H', 'Connection: close');
  args.push(`${instance.url}${path}`);
  const serverBefore = cpuSeconds(instance.pid);
  const started = performance.now();
  const wrk = spawn('taskset', args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  wrk.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  wrk.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  // wrk's own CPU time, sampled until it exits (the last sample is within 50 ms of its end).
  let wrkCpu = 0;
  const sampler = setInterval(() => {
    if (wrk.pid) wrkCpu = Math.max(wrkCpu, cpuSeconds(wrk.pid));
  }, 50);
  const code = await new Promise<number | null>((resolveExit) => wrk.on('exit', (exitCode) => resolveExit(exitCode)));
  clearInterval(sampler);
  const elapsed = (performance.now() - started) / 1000;
  const serverUsed = cpuSeconds(instance.pid) - serverBefore;
  const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(output)?.[1] ?? NaN);
  if (code !== 0 || !Number.isFinite(rps)) throw new Error(`wrk failed (${code}) against ${instance.contender.name}:\n${output}`);
  const non2xx = Number(/Non-2xx or 3xx responses:\s+(\d+)/.exec(output)?.[1] ?? 0);
  const socket = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(output);
  // A `Connection: close` answer is followed by the server's FIN, which wrk counts as a read error.
  const socketErrors = socket ? Number(socket[1]) + (options.close ? 0 : Number(socket[2])) + Number(socket[3]) + Number(socket[4]) : 0;
  const requests = Number(/(\d+) requests in/.exec(output)?.[1] ?? NaN);
  return {
    requestsPerSecond: rps,
    serverCpuPerRequestUs: (serverUsed * 1e6) / requests,
    p50Ms: latencyMs(output, '50'),
    p99Ms: latencyMs(output, '99'),
    errors: non2xx + socketErrors,
    serverCpu: serverUsed / elapsed,
    loadCpu: wrkCpu / elapsed,
  };
}

/** figure -> contender name -> one value per round */
const figures = new Map<string, { unit: string; better: 'higher' | 'lower'; values: Map<string, number[]> }>();
const diagnostics = new Map<string, Map<string, { serverCpu: number[]; loadCpu: number[]; errors: number }>>();

function record(figure: string, unit: string, better: 'higher' | 'lower', contender: Contender, value: number): void {
  let entry = figures.get(figure);
  if (!entry) {
    entry = { unit, better, values: new Map() };
    figures.set(figure, entry);
  }
  const list = entry.values.get(contender.name) ?? [];
  list.push(value);
  entry.values.set(contender.name, list);
}

function recordLoad(figure: string, contender: Contender, result: LoadResult): void {
  const perFigure = diagnostics.get(figure) ?? new Map<string, { serverCpu: number[]; loadCpu: number[]; errors: number }>();
  diagnostics.set(figure, perFigure);
  const entry = perFigure.get(contender.name) ?? { serverCpu: [], loadCpu: [], errors: 0 };
  entry.serverCpu.push(result.serverCpu);
  entry.loadCpu.push(result.loadCpu);
  entry.errors += result.errors;
  perFigure.set(contender.name, entry);
}

async function loadInTurns(
  figure: string,
  instances: Instance[],
  path: string,
  options: { connections: number; close?: boolean; latency?: boolean; seconds?: number },
): Promise<void> {
  for (const instance of instances) {
    await load(instance, path, { ...options, seconds: 1 }); // warm-up: JIT, TLS session state, lazy paths
    const result = await load(instance, path, { ...options, seconds: options.seconds ?? seconds });
    record(`${figure}, requests/s`, 'req/s', 'higher', instance.contender, result.requestsPerSecond);
    record(`${figure}, server CPU per request`, 'us', 'lower', instance.contender, result.serverCpuPerRequestUs);
    if (options.latency) {
      record(`${figure}, p50 latency`, 'ms', 'lower', instance.contender, result.p50Ms);
      record(`${figure}, p99 latency`, 'ms', 'lower', instance.contender, result.p99Ms);
    }
    recordLoad(`${figure}, requests/s`, instance.contender, result);
  }
}

async function startInTurns(order: Contender[], mode: Mode, pki: TestPki): Promise<Instance[]> {
  const instances: Instance[] = [];
  for (const contender of order) instances.push(await startInstance(contender, mode, pki));
  return instances;
}

/** The order of round `index`: rotated by one each round. */
function orderOf(index: number): Contender[] {
  return contenders.map((_, i) => contenders[(i + index) % contenders.length] as Contender);
}

/**
 * The start figures: every contender started once and left running 1.5 s (fabric-ops writes its code
 * cache 1 s after its start), then `startRounds` rounds in turns of start, first 200, stop.
 */
async function starts(pki: TestPki): Promise<void> {
  for (const contender of contenders) {
    const instance = await startInstance(contender, 'tls', pki);
    await sleep(1500);
    await stopInstance(instance);
  }
  for (let index = 0; index < startRounds; index += 1) {
    process.stderr.write(`start round ${index + 1}/${startRounds}\r`);
    for (const contender of orderOf(index)) {
      const instance = await startInstance(contender, 'tls', pki);
      record('start to first 200 on /healthz (TLS)', 'ms', 'lower', contender, instance.startMs);
      record('start: server CPU time until the first 200 (TLS)', 'ms', 'lower', contender, instance.startCpuMs);
      await stopInstance(instance);
    }
  }
  process.stderr.write('\n');
}

async function round(index: number, pki: TestPki): Promise<void> {
  const order = orderOf(index);
  process.stderr.write(`round ${index + 1}/${rounds}: ${order.map((c) => c.name).join(', ')}\n`);

  const tls: Instance[] = [];
  for (const contender of order) {
    const instance = await startInstance(contender, 'tls', pki);
    await sleep(2000);
    record('idle RSS (TLS, 2 s after the first 200)', 'MB', 'lower', contender, procStatus(instance.pid).rssKb / 1024);
    if (contender.kind === 'fabric-peer') await stopInstance(instance);
    else tls.push(instance);
  }
  const serving = order.filter((contender) => contender.kind !== 'fabric-peer');
  await loadInTurns('keep-alive /healthz, HTTPS', tls, '/healthz', { connections, latency: true });
  await loadInTurns('new TLS connection per request /healthz', tls, '/healthz', { connections: newConnectionConnections, close: true });
  for (const instance of tls) record('peak RSS (TLS, after both HTTPS loads)', 'MB', 'lower', instance.contender, procStatus(instance.pid).hwmKb / 1024);
  await Promise.all(tls.map(stopInstance));

  const plain = await startInTurns(serving, 'plain', pki);
  await loadInTurns('keep-alive /healthz, plain', plain, '/healthz', { connections, latency: true });
  await Promise.all(plain.map(stopInstance));

  const metrics = await startInTurns(serving, 'metrics', pki);
  await sleep(1000);
  for (const instance of metrics) {
    const { status, body } = await get(instance.url, '/metrics', 10_000);
    if (status !== 200 || !body.includes('bench_series_total{component="component99",index="99"} 1')) {
      throw new Error(`${instance.contender.name}: /metrics does not hold the ${series} series (status ${status})`);
    }
  }
  await loadInTurns(`/metrics with ${series.toLocaleString('en-US')} series`, metrics, '/metrics', { connections: metricsConnections, latency: true });
  for (const instance of metrics)
    record(
      `peak RSS (/metrics with ${series.toLocaleString('en-US')} series, after load)`,
      'MB',
      'lower',
      instance.contender,
      procStatus(instance.pid).hwmKb / 1024,
    );
  await Promise.all(metrics.map(stopInstance));

  // /metrics at 100,000 series (issue 20): one contender at a time (each holds hundreds of MB).
  for (const contender of serving) {
    const instance = await startInstance(contender, 'metrics-large', pki);
    await sleep(1000);
    const last = largeSeries - 1;
    const { status, body } = await get(instance.url, '/metrics', 60_000);
    if (status !== 200 || !body.includes(`bench_series_total{component="component${Math.floor(last / 100)}",index="${last % 100}"} 1`)) {
      throw new Error(`${contender.name}: /metrics does not hold the ${largeSeries} series (status ${status})`);
    }
    // One answer takes about a second here: a load long enough for a few of them on each connection.
    await loadInTurns(large, [instance], '/metrics', { connections: 2, latency: true, seconds: Math.max(seconds, 8) });
    record(`RSS (${large}, after load)`, 'MB', 'lower', contender, procStatus(instance.pid).rssKb / 1024);
    await stopInstance(instance);
  }
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

function formatValue(value: number, unit: string): string {
  if (unit === 'req/s' || unit === 'us') return Math.round(value).toLocaleString('en-US');
  return value.toFixed(1);
}

function short(name: string): string {
  return name.replace('bare node:http(s)', 'bare').replace('express 5', 'express');
}

function report(): void {
  const width = Math.max(...contenders.map((c) => c.name.length)) + 2;
  for (const [figure, { unit, better, values }] of figures) {
    const names = contenders.map((c) => c.name).filter((name) => values.has(name));
    console.log(`\n${figure} (${unit}, ${better} is better)`);
    console.log(
      `  ${''.padEnd(width)}${'min'.padStart(9)}${'median'.padStart(9)}${'max'.padStart(9)}   ratio of medians to: ${names.map((n) => short(n).padStart(Math.max(12, short(n).length + 2))).join('')}`,
    );
    const medians = new Map(names.map((n) => [n, median(values.get(n) ?? [NaN])]));
    for (const name of names) {
      const list = values.get(name) ?? [];
      const m = medians.get(name) as number;
      const ratios = names.map((other) => `${(m / (medians.get(other) as number)).toFixed(2)}x`.padStart(Math.max(12, short(other).length + 2))).join('');
      console.log(
        `  ${name.padEnd(width)}${formatValue(Math.min(...list), unit).padStart(9)}${formatValue(m, unit).padStart(9)}${formatValue(Math.max(...list), unit).padStart(9)}   ${''.padEnd(21)}${ratios}`,
      );
    }
    const extra = diagnostics.get(figure);
    if (extra) {
      const parts = names.map((name) => {
        const d = extra.get(name);
        if (!d) return '';
        return `${short(name)} server ${Math.round(median(d.serverCpu) * 100)}% / wrk ${Math.round(median(d.loadCpu) * 100)}%${d.errors > 0 ? ` / ${d.errors} errors` : ''}`;
      });
      console.log(`  (CPU, median: ${parts.join('; ')})`);
    }
  }
}

function goals(): void {
  const value = (figure: string, name: string): number => median(figures.get(figure)?.values.get(name) ?? [NaN]);
  const ratio = (figure: string, a: string, b: string): number => value(figure, a) / value(figure, b);
  const bare = 'bare node:http(s)';
  const express = 'express 5';
  const metrics = `/metrics with ${series.toLocaleString('en-US')} series`;
  // Throughput goals also as CPU per request (inverted): the figure other work on the machine moves least.
  const throughput = (figure: string, other: string): [number, number] => [
    ratio(`${figure}, requests/s`, 'fabric-ops', other),
    1 / ratio(`${figure}, server CPU per request`, 'fabric-ops', other),
  ];
  const startVsBare: [number, number] = [
    ratio('start to first 200 on /healthz (TLS)', 'fabric-ops', bare),
    ratio('start: server CPU time until the first 200 (TLS)', 'fabric-ops', bare),
  ];
  const lines: Goal[] = [
    ['start to first 200 (TLS) vs bare: wall, CPU', startVsBare, 'max', 1.5],
    ['idle RSS vs bare', [ratio('idle RSS (TLS, 2 s after the first 200)', 'fabric-ops', bare), NaN], 'max', 1.2],
    ['peak RSS under HTTPS load vs bare', [ratio('peak RSS (TLS, after both HTTPS loads)', 'fabric-ops', bare), NaN], 'max', 1.2],
    ['keep-alive /healthz plain vs express', throughput('keep-alive /healthz, plain', express), 'min', 0.9],
    ['keep-alive /healthz HTTPS vs express', throughput('keep-alive /healthz, HTTPS', express), 'min', 0.9],
    ['/metrics 10k series vs bare', throughput(metrics, bare), 'min', 1],
    ['/metrics 10k series vs express', throughput(metrics, express), 'min', 1],
    ['new TLS connection per request vs bare', throughput('new TLS connection per request /healthz', bare), 'min', 0.95],
  ];
  console.log('\nfabric-ops against the goals of issue 10 (ratios of medians, this run; for throughput: req/s and 1 / CPU per request):');
  printGoals(lines);
  const go = 'Go net/http';
  const issue20: Goal[] = [
    ['start to first 200 (TLS) vs bare: wall, CPU', startVsBare, 'max', 1],
    ['idle RSS vs bare', [ratio('idle RSS (TLS, 2 s after the first 200)', 'fabric-ops', bare), NaN], 'max', 1],
    [`RSS with ${largeSeries.toLocaleString('en-US')} series vs bare`, [ratio(`RSS (${large}, after load)`, 'fabric-ops', bare), NaN], 'max', 1],
  ];
  if (haveGo) {
    issue20.push([`  moonshot: the same vs Go`, [ratio(`RSS (${large}, after load)`, 'fabric-ops', go), NaN], 'max', 2]);
    issue20.push([`/metrics ${largeSeries.toLocaleString('en-US')} series p99 vs Go`, [ratio(`${large}, p99 latency`, 'fabric-ops', go), NaN], 'max', 1]);
  }
  if (contenders.some((contender) => contender.kind === 'fabric-peer')) {
    issue20.push(['moonshot: start (TLS) vs the Fabric peer: wall', [ratio('start to first 200 on /healthz (TLS)', 'fabric-ops', fabricPeer), NaN], 'max', 1]);
  }
  console.log('\nfabric-ops against the goals of issue 20 (ratios of medians, this run):');
  printGoals(issue20);
  // Issue 32: the command's keep-alive request path (the command is the fabric-ops contender here).
  const p99VsBare = (figure: string): [number, number] => [ratio(`${figure}, p99 latency`, 'fabric-ops', bare), NaN];
  const issue32: Goal[] = [
    ['keep-alive /healthz plain vs express', throughput('keep-alive /healthz, plain', express), 'min', 1],
    ['keep-alive /healthz HTTPS vs express', throughput('keep-alive /healthz, HTTPS', express), 'min', 1],
    ['keep-alive /healthz plain p99 vs bare', p99VsBare('keep-alive /healthz, plain'), 'max', 1.5],
    ['keep-alive /healthz HTTPS p99 vs bare', p99VsBare('keep-alive /healthz, HTTPS'), 'max', 1.5],
  ];
  console.log(`\nthe command against the goals of issue 32 (ratios of medians, this run, keep-alive -c${connections}):`);
  printGoals(issue32);
}

/** A goal: its label, one or two ratios, whether the ratio is an upper or a lower bound, and the bound. */
type Goal = [string, [number, number], 'max' | 'min', number];

function printGoals(lines: Goal[]): void {
  for (const [label, [first, second], kind, goal] of lines) {
    const ok = (r: number): boolean => (kind === 'max' ? r <= goal : r >= goal);
    const shown = Number.isNaN(second) ? `${first.toFixed(2)}x` : `${first.toFixed(2)}x, ${second.toFixed(2)}x`;
    const verdict = Number.isNaN(second)
      ? ok(first)
        ? 'met'
        : 'NOT met'
      : ok(first) && ok(second)
        ? 'met'
        : ok(first) || ok(second)
          ? 'met by one measure'
          : 'NOT met';
    console.log(`  ${label.padEnd(50)}${shown.padStart(14)}   goal ${kind === 'max' ? '<=' : '>='} ${goal}x  ${verdict}`);
  }
}

async function main(): Promise<void> {
  const wrkVersion = spawnSync('wrk', ['-v'], { encoding: 'utf8' });
  if (wrkVersion.error) throw new Error('wrk is not installed (Debian: apt-get install wrk; `make bench` installs it)');
  const pki = await createTestPki();
  try {
    const load1 = loadavg()[0]?.toFixed(2);
    console.log(
      `HTTP benchmark: fabric-ops beside ${haveGo ? "Go net/http + client_golang (Fabric's stack, bench/go), " : ''}a bare node:http(s) server and a minimal express 5 app`,
    );
    if (!haveGo) console.log(`  no Go column: ${goServer} is missing (make bench builds it from bench/go with Debian's golang-go)`);
    if ('home' in peerHome) {
      console.log(
        `  ${fabricPeer}: ${join(peerHome.home, 'bin', 'peer')} node start, on its sampleconfig (a new ledger folder at every start, no Docker checker, operations TLS as the others); start and idle RSS only`,
      );
    } else console.log(`  no Fabric peer column: ${peerHome.missing}`);
    console.log(`  node ${process.version} (${process.execPath}); ${(wrkVersion.stdout || wrkVersion.stderr).split('\n')[0]}`);
    console.log(
      `  servers pinned with \`taskset -c ${serverCpu}\`, wrk (-t1) with \`taskset -c ${loadCpu}\`; load average at start ${load1} (other work on the machine adds noise)`,
    );
    console.log(
      `  start: one start of each first (caches), then ${startRounds} start-only rounds in turns; ${rounds} rounds in turns (order rotates), ${seconds} s per load after a 1 s warm-up; keep-alive -c${connections}, new connection per request -c${newConnectionConnections} with \`Connection: close\`, /metrics -c${metricsConnections}`,
    );
    console.log(`  TLS: EC P-256 server certificate, client certificate requested but optional (fabric-ops: clientAuthRequired false), the same for all`);
    for (const c of contenders) if (c.dist) console.log(`  ${c.name}: ${c.dist}`);
    await starts(pki);
    for (let i = 0; i < rounds; i += 1) await round(i, pki);
    report();
    goals();
  } finally {
    await pki.cleanup();
    if (peerRoot !== null) await rm(peerRoot, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? (error.stack ?? error.message) : String(error));
  process.exitCode = 1;
});
