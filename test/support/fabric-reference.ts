import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, existsSync, openSync, readFileSync } from 'node:fs';
import { cp, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { parseDocument, type Document } from 'yaml';
import { freeTcpPort } from './ports';
import { logTail, settlesWithin } from './processes';
import { requireFabricReleases } from './real-binaries';
import { waitFor } from './wait';

/**
 * The real Fabric peer and orderer (the reference implementation of the operations service),
 * run alone on loopback from the release's own sampleconfig. Each node gets a temp dir with
 * a copy of `core.yaml` / `orderer.yaml` (and the sample MSP) in which only writable paths,
 * ports and the settings a test chooses are changed. The same file is what fabric-ops is given.
 *
 * The release: the folder a test names, else `$FABRIC_HOME`, else the first of test/support/real-binaries.ts
 * (`$FABRIC_HOMES`, or `peer` on the PATH); the project has none of its own. writeNodeConfig also
 * writes the same configuration from a sampleconfig folder without binaries (`sampleconfig`): the
 * compat replay (test/compat/replay.test.ts) starts fabric-ops alone on what a recording ran under.
 */

export type NodeKind = 'peer' | 'orderer';

/** The repository root: the nearest folder above this file with a package.json (also when compiled elsewhere). */
export function repositoryRoot(): string {
  let dir = __dirname;
  while (!existsSync(path.join(dir, 'package.json'))) {
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error(`no package.json above ${__dirname}`);
    dir = parent;
  }
  return dir;
}

/**
 * The release folder: `given` (the compat suite runs several), else $FABRIC_HOME, else the first release
 * real-binaries.ts finds (it throws `OPT-IN SUITE CANNOT RUN: ...` when there is none); throws when incomplete.
 */
export function fabricHome(given?: string): string {
  const fromEnv = process.env.FABRIC_HOME !== undefined && process.env.FABRIC_HOME !== '' ? process.env.FABRIC_HOME : undefined;
  const home = given ?? fromEnv ?? requireFabricReleases()[0] ?? '';
  for (const required of ['bin/peer', 'bin/orderer', 'sampleconfig/core.yaml', 'sampleconfig/orderer.yaml']) {
    if (!existsSync(path.join(home, required))) {
      throw new Error(`Fabric release incomplete: ${path.join(home, required)} is missing (set FABRIC_HOME to a Fabric release with bin/ and sampleconfig/)`);
    }
  }
  return home;
}

/** Operations TLS of one node (paths to PEM files). */
export interface OperationsTls {
  /** Default true: false writes the files but leaves TLS off (for overrides that switch it on). */
  enabled?: boolean;
  cert: string;
  key: string;
  clientAuthRequired: boolean;
  clientRootCAs: string[];
}

export interface StatsdSettings {
  address: string;
  network?: 'udp' | 'tcp';
  writeInterval: string;
  prefix: string;
}

export interface NodeConfigOptions {
  kind: NodeKind;
  tls?: OperationsTls;
  /** Peer only: `vm.endpoint` (empty string: no Docker checker). */
  vmEndpoint?: string;
  metrics?: { provider: string; statsd?: StatsdSettings };
  /** The orderer's general TLS (a cluster orderer needs it). */
  generalTls?: { cert: string; key: string; rootCA: string };
  /** The release folder whose sampleconfig is copied and whose binary runs on it (default: fabricHome()). */
  home?: string;
  /**
   * A folder with `core.yaml` / `orderer.yaml` (and optionally `msp/`) to copy instead of a release's
   * sampleconfig: no binary is needed, and the configuration cannot start a Fabric node (`home` is unset).
   */
  sampleconfig?: string;
}

/** A node's configuration directory: FABRIC_CFG_PATH, holding core.yaml or orderer.yaml and msp/. */
export interface NodeConfig {
  kind: NodeKind;
  /** The release folder (bin/, sampleconfig/) this configuration was written from; unset when written from a bare sampleconfig folder. */
  home?: string;
  dir: string;
  file: string;
  /** Environment the node needs beside the file (FABRIC_CFG_PATH); operations ports are added per process. */
  env: Record<string, string>;
}

function setIn(doc: Document, keyPath: string[], value: unknown): void {
  doc.setIn(keyPath, value);
}

/** Writes the sample configuration with writable paths and ports moved and the chosen settings. */
export async function writeNodeConfig(root: string, options: NodeConfigOptions): Promise<NodeConfig> {
  const home = options.sampleconfig === undefined ? fabricHome(options.home) : undefined;
  const sampleconfig = options.sampleconfig ?? path.join(home ?? '', 'sampleconfig');
  const dir = path.join(root, options.kind);
  const data = path.join(root, `${options.kind}-data`);
  await mkdir(dir, { recursive: true });
  await mkdir(data, { recursive: true });
  // The sample MSP: fabric-ops reads only its CA folders (the dedicated-CA warning); a bare sampleconfig may lack it.
  if (home !== undefined || existsSync(path.join(sampleconfig, 'msp'))) await cp(path.join(sampleconfig, 'msp'), path.join(dir, 'msp'), { recursive: true });
  const fileName = options.kind === 'peer' ? 'core.yaml' : 'orderer.yaml';
  const doc = parseDocument(await readFile(path.join(sampleconfig, fileName), 'utf8'));
  const [p1, p2, p3] = [await uniquePort(), await uniquePort(), await uniquePort()];
  if (options.kind === 'peer') {
    setIn(doc, ['peer', 'fileSystemPath'], path.join(data, 'fs'));
    setIn(doc, ['ledger', 'snapshots', 'rootDir'], path.join(data, 'snapshots'));
    setIn(doc, ['peer', 'listenAddress'], `127.0.0.1:${p1}`);
    setIn(doc, ['peer', 'address'], `127.0.0.1:${p1}`);
    setIn(doc, ['peer', 'chaincodeListenAddress'], `127.0.0.1:${p2}`);
    setIn(doc, ['peer', 'gossip', 'bootstrap'], `127.0.0.1:${p1}`);
    setIn(doc, ['vm', 'endpoint'], options.vmEndpoint ?? '');
    if (options.tls) {
      setIn(doc, ['operations', 'tls', 'enabled'], options.tls.enabled ?? true);
      setIn(doc, ['operations', 'tls', 'cert', 'file'], options.tls.cert);
      setIn(doc, ['operations', 'tls', 'key', 'file'], options.tls.key);
      setIn(doc, ['operations', 'tls', 'clientAuthRequired'], options.tls.clientAuthRequired);
      setIn(doc, ['operations', 'tls', 'clientRootCAs', 'files'], options.tls.clientRootCAs);
    }
    if (options.metrics) {
      setIn(doc, ['metrics', 'provider'], options.metrics.provider);
      const statsd = options.metrics.statsd;
      if (statsd) {
        setIn(doc, ['metrics', 'statsd', 'network'], statsd.network ?? 'udp');
        setIn(doc, ['metrics', 'statsd', 'address'], statsd.address);
        setIn(doc, ['metrics', 'statsd', 'writeInterval'], statsd.writeInterval);
        setIn(doc, ['metrics', 'statsd', 'prefix'], statsd.prefix);
      }
    }
  } else {
    const general = options.generalTls;
    if (!general) throw new Error('an orderer needs generalTls (a cluster-type orderer refuses to start without general TLS)');
    setIn(doc, ['General', 'ListenAddress'], '127.0.0.1');
    setIn(doc, ['General', 'ListenPort'], p1);
    setIn(doc, ['General', 'TLS', 'Enabled'], true);
    setIn(doc, ['General', 'TLS', 'Certificate'], general.cert);
    setIn(doc, ['General', 'TLS', 'PrivateKey'], general.key);
    setIn(doc, ['General', 'TLS', 'RootCAs'], [general.rootCA]);
    setIn(doc, ['General', 'BootstrapMethod'], 'none');
    setIn(doc, ['ChannelParticipation', 'Enabled'], true);
    setIn(doc, ['Admin', 'ListenAddress'], `127.0.0.1:${p3}`);
    setIn(doc, ['FileLedger', 'Location'], path.join(data, 'ledger'));
    setIn(doc, ['Consensus', 'WALDir'], path.join(data, 'wal'));
    setIn(doc, ['Consensus', 'SnapDir'], path.join(data, 'snap'));
    if (options.tls) {
      setIn(doc, ['Operations', 'TLS', 'Enabled'], options.tls.enabled ?? true);
      setIn(doc, ['Operations', 'TLS', 'Certificate'], options.tls.cert);
      setIn(doc, ['Operations', 'TLS', 'PrivateKey'], options.tls.key);
      setIn(doc, ['Operations', 'TLS', 'ClientAuthRequired'], options.tls.clientAuthRequired);
      setIn(doc, ['Operations', 'TLS', 'ClientRootCAs'], options.tls.clientRootCAs);
    }
    if (options.metrics) {
      setIn(doc, ['Metrics', 'Provider'], options.metrics.provider);
      const statsd = options.metrics.statsd;
      if (statsd) {
        setIn(doc, ['Metrics', 'Statsd', 'Network'], statsd.network ?? 'udp');
        setIn(doc, ['Metrics', 'Statsd', 'Address'], statsd.address);
        setIn(doc, ['Metrics', 'Statsd', 'WriteInterval'], statsd.writeInterval);
        setIn(doc, ['Metrics', 'Statsd', 'Prefix'], statsd.prefix);
      }
    }
  }
  const file = path.join(dir, fileName);
  await writeFile(file, doc.toString());
  return { kind: options.kind, home, dir, file, env: { FABRIC_CFG_PATH: dir } };
}

const handedOut = new Set<number>();

/**
 * A free loopback port not handed out before in this process: many nodes start at once, and
 * the kernel may offer a port just released by another probe again. Probed, not port 0: the
 * real peer and orderer take their ports from core.yaml/orderer.yaml or the environment and
 * never report what they bound (fabhttp's logger only warns), and a peer must be told its own
 * address and gossip bootstrap before it starts.
 */
export async function uniquePort(): Promise<number> {
  for (;;) {
    const port = await freeTcpPort();
    if (!handedOut.has(port)) {
      handedOut.add(port);
      return port;
    }
  }
}

/** The environment variable that moves a node's operations listen address. */
export function listenAddressVariable(kind: NodeKind): string {
  return kind === 'peer' ? 'CORE_OPERATIONS_LISTENADDRESS' : 'ORDERER_OPERATIONS_LISTENADDRESS';
}

export interface FabricNode {
  kind: NodeKind;
  url: string;
  port: number;
  pid: number;
  child: ChildProcess;
  logFile: string;
  /** Milliseconds from spawn to the log line that says the node serves. */
  readyAfterMs: number;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  stop(): Promise<void>;
  logTail(lines?: number): string;
}

/** What the log says once a node has registered its checkers and serves. */
const readyLine: Record<NodeKind, RegExp> = {
  peer: /Started peer with ID=/,
  orderer: /Beginning to serve requests/,
};

export interface StartFabricOptions {
  config: NodeConfig;
  /** More environment (CORE_* / ORDERER_* overrides, FABRIC_LOGGING_SPEC). */
  env?: Record<string, string>;
  /** Log directory; default the config's parent. */
  logDir?: string;
  readyTimeoutMs?: number;
}

function stripAnsi(text: string): string {
  // eslint-disable-next-line no-control-regex
  return text.replace(/\x1b\[[0-9;]*m/g, '');
}

/** Spawns the real node with exactly this environment (plus PATH) and waits for its ready log line. */
export async function startFabricNode(options: StartFabricOptions): Promise<FabricNode> {
  const { config } = options;
  const port = await uniquePort();
  const logFile = path.join(options.logDir ?? path.dirname(config.dir), `${config.kind}-${port}.log`);
  const log = openSync(logFile, 'a');
  if (config.home === undefined) throw new Error(`${config.file} was written from a bare sampleconfig folder: no Fabric ${config.kind} binary to start on it`);
  const binary = path.join(config.home, 'bin', config.kind);
  const args = config.kind === 'peer' ? ['node', 'start'] : [];
  const started = Date.now();
  const child = spawn(binary, args, {
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...config.env, [listenAddressVariable(config.kind)]: `127.0.0.1:${port}`, ...options.env },
    stdio: ['ignore', log, log],
  });
  closeSync(log);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  running.add(child);
  void exited.then(() => running.delete(child));
  const node: FabricNode = {
    kind: config.kind,
    url: `127.0.0.1:${port}`,
    port,
    pid: child.pid ?? -1,
    child,
    logFile,
    readyAfterMs: 0,
    exited,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      if (!(await settlesWithin(exited, 5000))) {
        child.kill('SIGKILL');
        await exited;
      }
    },
    logTail: (lines = 20) => stripAnsi(logTail(logFile, lines)),
  };
  const logged = (): string => (existsSync(logFile) ? readFileSync(logFile, 'utf8') : '');
  const gone = (): boolean => child.exitCode !== null || child.signalCode !== null;
  // The ready line is logged at info; under a quieter FABRIC_LOGGING_SPEC, a listening
  // operations port for a full second counts as ready instead.
  let listeningSince: number | null = null;
  let lastProbe = 0;
  try {
    await waitFor(
      `Fabric ${config.kind} to log that it serves`,
      async () => {
        if (readyLine[config.kind].test(logged())) return true;
        if (Date.now() - lastProbe >= 100) {
          lastProbe = Date.now();
          if (await acceptsConnections(port)) listeningSince ??= Date.now();
          else listeningSince = null;
        }
        return listeningSince !== null && Date.now() - listeningSince >= 1000 && child.exitCode === null;
      },
      {
        timeoutMs: options.readyTimeoutMs ?? 20_000,
        everyMs: 25,
        // Ready and then gone is still ready: the caller sees the exit.
        giveUpIf: () => (gone() && !readyLine[config.kind].test(logged()) ? 'it exited' : undefined),
      },
    );
  } catch (error) {
    if (gone()) throw new FabricStartError(config.kind, child.exitCode, stripAnsi(logged()));
    await node.stop();
    throw new Error(`Fabric ${config.kind} did not log that it serves within the timeout; log ${logFile}:\n${node.logTail()}`, { cause: error });
  }
  node.readyAfterMs = Date.now() - started;
  return node;
}

function acceptsConnections(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

const running = new Set<ChildProcess>();

/** Kills every node this process started that still runs (afterAll, whatever failed before). */
export async function killAllFabricNodes(): Promise<void> {
  const children = [...running];
  await Promise.all(
    children.map(
      (child) =>
        new Promise<void>((resolve) => {
          if (child.exitCode !== null || child.signalCode !== null) return resolve();
          child.once('exit', () => resolve());
          child.kill('SIGKILL');
        }),
    ),
  );
}

/** The node exited during start (a configuration it refuses). */
export class FabricStartError extends Error {
  constructor(
    readonly kind: NodeKind,
    readonly exitCode: number | null,
    readonly log: string,
  ) {
    super(`Fabric ${kind} exited with ${exitCode} during start:\n${log.split('\n').slice(-10).join('\n')}`);
  }
}

/**
 * Starts the node and expects it to exit during start, or to serve: resolves with what happened.
 * A node that serves is stopped at once.
 */
export async function probeFabricStart(options: StartFabricOptions): Promise<{ refused: boolean; message: string }> {
  try {
    const node = await startFabricNode({ ...options, readyTimeoutMs: options.readyTimeoutMs ?? 15_000 });
    node.child.kill('SIGKILL');
    await node.exited;
    return { refused: false, message: '' };
  } catch (error) {
    if (error instanceof FabricStartError) {
      const lines = error.log.split('\n').filter((line) => /PANI|FATA|ERRO|Error|panic|fatal/i.test(line));
      return { refused: true, message: (lines.at(-1) ?? error.log.split('\n').at(-1) ?? '').trim() };
    }
    throw error;
  }
}

/** A temp dir for one suite's nodes. */
export async function makeFabricWorkDir(): Promise<{ dir: string; cleanup(): Promise<void> }> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'fabric-compat-'));
  return { dir, cleanup: () => rm(dir, { recursive: true, force: true }) };
}

/** Resident set size in KiB of a process, from /proc. */
export function residentKiB(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const match = /VmRSS:\s+(\d+) kB/.exec(status);
  return match?.[1] ? Number(match[1]) : 0;
}
