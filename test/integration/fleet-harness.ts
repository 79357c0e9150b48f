import { execFile } from 'node:child_process';
import { waitFor as poll } from '../support/wait';
import { readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { X509Certificate } from 'node:crypto';
import { PassThrough } from 'node:stream';
import { runFleetCommand } from '../../src/fleet/cli';
import { request, type HttpAnswer } from '../support/http';
import type { TestPki } from '../support/pki';
import { logTail } from '../support/processes';

const execFileAsync = promisify(execFile);

/** The shared tools folder: $FABRIC_TOOLS, else ../shared/tools from the project root (README of the tools). */
export function toolsDir(): string {
  const dir = process.env.FABRIC_TOOLS ?? path.resolve(__dirname, '..', '..', '..', 'shared', 'tools');
  try {
    readFileSync(path.join(dir, 'fabric-nodes.sh'));
  } catch {
    throw new Error(`test prerequisite missing: fabric-nodes.sh not found in ${dir} (set FABRIC_TOOLS to the shared tools folder)`);
  }
  return dir;
}

export interface FabricNodeEntry {
  name: string;
  org: string;
  dialect: 'peer' | 'orderer';
  url: string;
  caFile: string;
  clientCertFile: string;
  clientKeyFile: string;
  pid: number;
}

/** A set of real Fabric nodes from fabric-nodes.sh: several orgs, each with its own operations CA and client certificate. */
export class FabricNodes {
  nodes: FabricNodeEntry[] = [];

  private constructor(
    readonly dir: string,
    readonly release: '2.5.12' | '3.0.0',
    private readonly env: NodeJS.ProcessEnv,
  ) {}

  static async start(release: '2.5.12' | '3.0.0', settings: { orgs: number; peersPerOrg: number; orderers: number }): Promise<FabricNodes> {
    const dir = await mkdtemp(path.join(tmpdir(), `fabric-ops-fleet-${release}-`));
    // Four ports a node from BASE_PORT, at a random base: other tests on the machine may hold one;
    // a base whose ports are taken fails the start, and another base is tried (three in all).
    let lastError: unknown;
    for (let attempt = 0; attempt < 3; attempt += 1) {
      const env = {
        ...process.env,
        FABRIC_HOME: path.join(toolsDir(), `fabric-${release}`),
        FABNODES_DIR: dir,
        BASE_PORT: String(fabricBasePort()),
        ORGS: String(settings.orgs),
        PEERS_PER_ORG: String(settings.peersPerOrg),
        ORDERERS: String(settings.orderers),
      };
      const nodes = new FabricNodes(dir, release, env);
      try {
        await nodes.up();
        return nodes;
      } catch (error) {
        lastError = error;
        await nodes.down();
      }
    }
    throw lastError;
  }

  /**
   * Starts every node (again, on the same ports: the fleet's configuration names them). The
   * script's `up` removes the folder first, so each failed node's log is read into the error.
   */
  async up(): Promise<void> {
    try {
      await execFileAsync(path.join(toolsDir(), 'fabric-nodes.sh'), ['up'], { env: this.env, cwd: this.dir, timeout: 30_000 });
    } catch (error) {
      const { stdout = '', stderr = '' } = error as { stdout?: string; stderr?: string };
      const logs = [...stdout.matchAll(/(\S+) did not come up/g)].map(([, name]) => {
        const org = /\.(org\d+)$/.exec(name ?? '')?.[1] ?? '';
        return `--- ${name} node.log:\n${logTail(path.join(this.dir, org, name ?? '', 'node.log'))}`;
      });
      throw new Error(`fabric-nodes.sh up (${this.release}) failed: ${stdout}\n${stderr}\n${logs.join('\n')}`, { cause: error });
    }
    this.nodes = JSON.parse(readFileSync(path.join(this.dir, 'nodes.json'), 'utf8')) as FabricNodeEntry[];
  }

  /**
   * Stops every node and waits until each has exited. The script only sends SIGTERM; a node
   * still holding its ports when `up` starts it again would fail to bind them.
   */
  async down(): Promise<void> {
    await execFileAsync(path.join(toolsDir(), 'fabric-nodes.sh'), ['down'], { env: this.env, cwd: this.dir, timeout: 30_000 }).catch(() => undefined);
    const pids = this.nodes.map((node) => node.pid);
    const allExited = async () => ((await Promise.all(pids.map(exited))).every(Boolean) ? true : undefined);
    try {
      await poll('the Fabric nodes to exit after SIGTERM', allExited, { timeoutMs: 10_000, everyMs: 50 });
    } catch {
      for (const pid of pids) killQuietly(pid, 'SIGKILL');
      await poll('the Fabric nodes to exit after SIGKILL', allExited, { timeoutMs: 5_000, everyMs: 50 });
    }
  }

  async cleanup(): Promise<void> {
    await this.down();
    await rm(this.dir, { recursive: true, force: true });
  }

  node(name: string): FabricNodeEntry {
    const found = this.nodes.find((node) => node.name === name);
    if (!found) throw new Error(`no node ${name} in ${this.dir}/nodes.json`);
    return found;
  }

  /** A request to a node's own operations endpoint, with its org's client certificate. */
  request(name: string, pathName: string, options: { method?: string; body?: string } = {}): Promise<HttpAnswer> {
    const node = this.node(name);
    return request(`${node.url}${pathName}`, {
      ...options,
      ca: readFileSync(node.caFile, 'utf8'),
      client: {
        cert: node.clientCertFile,
        key: node.clientKeyFile,
        certPem: readFileSync(node.clientCertFile, 'utf8'),
        keyPem: readFileSync(node.clientKeyFile, 'utf8'),
      },
    });
  }

  /** notAfter (s since the epoch) of a node's operations server certificate. */
  certificateNotAfter(name: string): number {
    const file = path.join(this.dir, this.node(name).org, name, 'ops.crt');
    return Math.floor(Date.parse(new X509Certificate(readFileSync(file)).validTo) / 1000);
  }
}

/**
 * A random BASE_PORT for fabric-nodes.sh (4 ports a node, at most 10 nodes), below the kernel's
 * ephemeral range: a port there that a node frees when stopped can be taken at once by any
 * outgoing connection or `listen(0)` of the tests running beside, and the node started again
 * on it then fails to bind (seen in CI). Other tests ask the kernel for their ports, which are
 * all in that range; the compose tests' fixed ports (19443, 29xxx) are outside this one.
 */
export function fabricBasePort(): number {
  let ephemeralLow = 32768;
  try {
    ephemeralLow = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]) || ephemeralLow;
  } catch {
    // not Linux: the IANA range starts at 49152, above this one
  }
  const low = 21000;
  const high = Math.min(ephemeralLow, 29000) - 40;
  if (high <= low) throw new Error(`no room for Fabric node ports below the ephemeral range (it starts at ${ephemeralLow})`);
  return low + Math.floor((Math.random() * (high - low)) / 40) * 40;
}

/** True when the process has exited: gone, or a zombie its new parent has not reaped yet. */
async function exited(pid: number): Promise<boolean> {
  try {
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z');
  } catch {
    try {
      process.kill(pid, 0);
      return false;
    } catch {
      return true;
    }
  }
}

function killQuietly(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(pid, signal);
  } catch {
    // already gone
  }
}

/** A TCP server that accepts and never answers (a hung node). */
export async function hungServer(): Promise<{ url: string; close(): Promise<void> }> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  return {
    url: `https://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

export function waitFor<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs: number, everyMs = 100): Promise<T> {
  return poll(what, probe, { timeoutMs, everyMs });
}

/**
 * The environment that makes the built command a TLS fleet server on a free port, reading
 * `fleetFile`, with the test PKI's server pair and client CA; `more` adds to it.
 */
export function fleetServerEnv(pki: TestPki, fleetFile: string, more: Record<string, string> = {}): Record<string, string> {
  return {
    FABRIC_OPS_FLEET_CONFIG: fleetFile,
    CORE_OPERATIONS_LISTENADDRESS: '127.0.0.1:0',
    CORE_OPERATIONS_TLS_ENABLED: 'true',
    CORE_OPERATIONS_TLS_CERT_FILE: pki.server.cert,
    CORE_OPERATIONS_TLS_KEY_FILE: pki.server.key,
    CORE_OPERATIONS_TLS_CLIENTROOTCAS_FILES: pki.clientCA.cert,
    ...more,
  };
}

/** A JSON write to `/fleet/logspec` with the test client certificate (Content-Length given: Node frames a DELETE body only with it). */
export function fleetWrite(url: string, pki: TestPki, method: 'PUT' | 'DELETE', body: unknown): Promise<HttpAnswer> {
  const text = JSON.stringify(body);
  return request(`${url}/fleet/logspec`, {
    method,
    body: text,
    headers: { 'Content-Type': 'application/json', 'Content-Length': String(Buffer.byteLength(text)) },
    ca: pki.serverCA.certPem,
    client: pki.client,
  });
}

/** `fabric-ops fleet ...args` run in this process (src/fleet/cli.ts) with `env`: its exit code and output. */
export async function fleetCommandInProcess(args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number; stdout: string; stderr: string }> {
  const out = new PassThrough();
  const err = new PassThrough();
  let stdout = '';
  let stderr = '';
  out.on('data', (data: Buffer) => (stdout += data.toString()));
  err.on('data', (data: Buffer) => (stderr += data.toString()));
  const code = await runFleetCommand(args, env, out, err);
  return { code, stdout, stderr };
}
