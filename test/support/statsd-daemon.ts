import { spawn, type ChildProcess } from 'node:child_process';
import dgram from 'node:dgram';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { freePort, freeTcpPort } from './ports';
import { waitFor } from './wait';

/**
 * The StatsD reference daemon (npm `statsd`) run by a test: on free ports, over UDP or
 * TCP, with a backend that appends every flush to a file, so a test reads back exactly
 * the values that arrived. Can be stopped and started again on the same ports.
 */

export type StatsdNetwork = 'udp' | 'tcp';

/** The repository root, also when this file runs compiled elsewhere (bench builds). */
function findRepoRoot(): string {
  for (let dir = __dirname; ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'node_modules', 'statsd', 'stats.js')) && existsSync(join(dir, 'test', 'docker', 'statsd'))) return dir;
    if (dirname(dir) === dir) return resolve(__dirname, '..', '..');
  }
}

const repoRoot = findRepoRoot();
export const statsdMain = join(repoRoot, 'node_modules', 'statsd', 'stats.js');
export const flushFileBackend = join(repoRoot, 'test', 'docker', 'statsd', 'flush-file-backend.js');
/** statsd 0.9.0 calls util.log, gone since Node 23; preloaded with `node -r`. */
export const utilLogShim = join(repoRoot, 'test', 'docker', 'statsd', 'util-log-shim.js');

/** Values that arrived, summed over flushes (counters, timer counts), last (gauges), all (timers). */
export interface Received {
  counters: Record<string, number>;
  gauges: Record<string, number>;
  /** Milliseconds, in arrival order. */
  timers: Record<string, number[]>;
  /** Timings counted, sample rates applied (`|@0.5` counts 2). */
  timerCounts: Record<string, number>;
  /** Lines the daemon could not parse. */
  badLines: number;
  flushes: number;
}

interface FlushRecord {
  generation: number;
  counters: Record<string, number>;
  gauges: Record<string, number>;
  timers: Record<string, number[]>;
  timerCounters: Record<string, number>;
}

const probePrefix = 'fabric_ops_probe';

/** Reads what the daemon flushed; `generation` keeps one daemon run (see restart()). */
export function readReceived(flushFile: string, generation?: number): Received {
  const received: Received = { counters: {}, gauges: {}, timers: {}, timerCounts: {}, badLines: 0, flushes: 0 };
  if (!existsSync(flushFile)) return received;
  for (const line of readFileSync(flushFile, 'utf8').split('\n')) {
    if (line === '') continue;
    const record = JSON.parse(line) as FlushRecord;
    if (generation !== undefined && record.generation !== generation) continue;
    received.flushes += 1;
    for (const [key, value] of Object.entries(record.counters)) {
      if (key === 'statsd.bad_lines_seen') received.badLines += value;
      if (key.startsWith('statsd.') || key.startsWith(probePrefix)) continue;
      received.counters[key] = (received.counters[key] ?? 0) + value;
    }
    for (const [key, value] of Object.entries(record.gauges)) {
      if (!key.startsWith('statsd.')) received.gauges[key] = value;
    }
    for (const [key, values] of Object.entries(record.timers)) {
      if (values.length > 0) received.timers[key] = [...(received.timers[key] ?? []), ...values];
    }
    for (const [key, count] of Object.entries(record.timerCounters)) {
      received.timerCounts[key] = (received.timerCounts[key] ?? 0) + count;
    }
  }
  return received;
}

/** Polls until `check` returns a value, or fails after `timeoutMs` saying what was awaited and what arrived. */
export async function waitForReceived<T>(
  read: () => Received,
  check: (received: Received) => T | undefined | false,
  what: string,
  timeoutMs = 15_000,
): Promise<T> {
  try {
    return await waitFor(`statsd daemon: ${what}`, () => check(read()), { timeoutMs });
  } catch (error) {
    throw new Error(`${(error as Error).message}; received ${JSON.stringify(read())}`, { cause: error });
  }
}

export interface DaemonConfigOptions {
  /** One daemon can listen on several (UDP and TCP at once). */
  servers: readonly { network: StatsdNetwork; port: number }[];
  mgmtPort: number;
  flushFile: string;
  backend: string;
  generation: number;
  flushIntervalMs: number;
}

/** The daemon's configuration file (a JavaScript object literal, read with eval by statsd). */
export function daemonConfig(options: DaemonConfigOptions): string {
  return JSON.stringify(
    {
      servers: options.servers.map(({ network, port }) => ({ server: `./servers/${network}`, address: '127.0.0.1', port })),
      mgmt_address: '127.0.0.1',
      mgmt_port: options.mgmtPort,
      backends: [options.backend],
      flushInterval: options.flushIntervalMs,
      flushFile: options.flushFile,
      generation: options.generation,
      automaticConfigReload: false,
    },
    null,
    2,
  );
}

/** Sends one line; resolves false when a TCP connection is refused (daemon not listening yet). */
export function sendLine(network: StatsdNetwork, port: number, line: string): Promise<boolean> {
  if (network === 'udp') {
    return new Promise((done) => {
      const socket = dgram.createSocket('udp4');
      socket.on('error', () => undefined);
      socket.send(line, port, '127.0.0.1', () => {
        socket.close();
        done(true);
      });
    });
  }
  return new Promise((done) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.on('error', () => done(false));
    socket.on('connect', () => socket.end(`${line}\n`, () => done(true)));
  });
}

/** Sends a probe counter until the daemon has flushed it: the daemon is then listening. */
export async function waitUntilListening(
  network: StatsdNetwork,
  port: number,
  flushFile: string,
  generation: number,
  /** A description of the failure once the daemon is known to have failed (exited), else null. */
  failure: () => string | null,
  timeoutMs = 20_000,
): Promise<void> {
  const probe = `${probePrefix}.g${generation}`;
  await waitFor(
    `statsd daemon to come up on ${network} port ${port}`,
    async () => {
      await sendLine(network, port, `${probe}:1|c`);
      return existsSync(flushFile) && readFileSync(flushFile, 'utf8').includes(`"${probe}":`);
    },
    { timeoutMs, everyMs: 100, giveUpIf: () => failure() ?? undefined },
  );
}

export interface StartStatsdOptions {
  network: StatsdNetwork;
  /** Default 100 ms: values show up quickly. */
  flushIntervalMs?: number;
  /** Default: a free one. */
  port?: number;
}

export class StatsdDaemon {
  private process: ChildProcess | null = null;
  private output = '';
  generation = 0;

  private constructor(
    readonly network: StatsdNetwork,
    readonly port: number,
    readonly mgmtPort: number,
    readonly dir: string,
    private readonly flushIntervalMs: number,
  ) {}

  static async start(options: StartStatsdOptions): Promise<StatsdDaemon> {
    const dir = await mkdtemp(join(tmpdir(), 'fabric-ops-statsd-'));
    // Probed, not port 0: statsd 0.9 reads port 0 as unset (servers/udp.js and tcp.js bind
    // `config.port || 8125`, lib/mgmt_server.js `config.mgmt_port || 8126`) and logs no bound
    // port; and restart() must come back on the same port the code under test sends to.
    const port = options.port ?? (await freePort(options.network));
    const mgmtPort = await freeTcpPort();
    const daemon = new StatsdDaemon(options.network, port, mgmtPort, dir, options.flushIntervalMs ?? 100);
    await daemon.launch();
    return daemon;
  }

  get host(): string {
    return '127.0.0.1';
  }

  get flushFile(): string {
    return join(this.dir, 'flushes.jsonl');
  }

  get running(): boolean {
    return this.process !== null;
  }

  /** What arrived at this run of the daemon (or all runs with `allRuns`). */
  received(allRuns = false): Received {
    return readReceived(this.flushFile, allRuns ? undefined : this.generation);
  }

  waitFor<T>(check: (received: Received) => T | undefined | false, what: string, timeoutMs?: number): Promise<T> {
    return waitForReceived(() => this.received(), check, what, timeoutMs);
  }

  /** Stops the daemon (it flushes what it holds on the way out). */
  async stop(): Promise<void> {
    const child = this.process;
    if (!child) return;
    this.process = null;
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGCONT');
      await new Promise<void>((done) => {
        const killer = setTimeout(() => child.kill('SIGKILL'), 5000);
        child.once('exit', () => {
          clearTimeout(killer);
          done();
        });
        child.kill('SIGTERM');
      });
    }
  }

  /** Freezes the daemon (SIGSTOP): it holds its sockets but reads nothing, like a hung daemon. */
  pause(): void {
    this.process?.kill('SIGSTOP');
  }

  resume(): void {
    this.process?.kill('SIGCONT');
  }

  /** Starts the daemon again on the same ports; received() then shows only the new run. */
  async restart(): Promise<void> {
    await this.stop();
    await this.launch();
  }

  async cleanup(): Promise<void> {
    await this.stop();
    await rm(this.dir, { recursive: true, force: true });
  }

  private async launch(): Promise<void> {
    this.generation += 1;
    const configFile = join(this.dir, `config-${this.generation}.js`);
    writeFileSync(
      configFile,
      daemonConfig({
        servers: [{ network: this.network, port: this.port }],
        mgmtPort: this.mgmtPort,
        flushFile: this.flushFile,
        backend: flushFileBackend,
        generation: this.generation,
        flushIntervalMs: this.flushIntervalMs,
      }),
    );
    this.output = '';
    const child = spawn(process.execPath, ['-r', utilLogShim, statsdMain, configFile], { stdio: ['ignore', 'pipe', 'pipe'] });
    const keep = (chunk: Buffer): void => {
      this.output = (this.output + chunk.toString()).slice(-8192);
    };
    child.stdout?.on('data', keep);
    child.stderr?.on('data', keep);
    this.process = child;
    await waitUntilListening(this.network, this.port, this.flushFile, this.generation, () =>
      child.exitCode !== null ? `exited with ${child.exitCode}: ${this.output}` : null,
    );
  }
}
