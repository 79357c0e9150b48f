import { execFile } from 'node:child_process';
import { waitFor as poll } from '../support/wait';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { X509Certificate } from 'node:crypto';
import { PassThrough } from 'node:stream';
import { runFleetCommand } from '../../src/fleet/cli';
import { request, type HttpAnswer } from '../support/http';
import type { TestPki } from '../support/pki';

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
      const base = 30000 + Math.floor(Math.random() * 800) * 40;
      const env = {
        ...process.env,
        FABRIC_HOME: path.join(toolsDir(), `fabric-${release}`),
        FABNODES_DIR: dir,
        BASE_PORT: String(base),
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

  async up(): Promise<void> {
    try {
      await execFileAsync(path.join(toolsDir(), 'fabric-nodes.sh'), ['up'], { env: this.env, cwd: this.dir, timeout: 30_000 });
    } catch (error) {
      const { stdout = '', stderr = '' } = error as { stdout?: string; stderr?: string };
      throw new Error(`fabric-nodes.sh up (${this.release}) failed: ${stdout}\n${stderr}`, { cause: error });
    }
    this.nodes = JSON.parse(readFileSync(path.join(this.dir, 'nodes.json'), 'utf8')) as FabricNodeEntry[];
  }

  async down(): Promise<void> {
    await execFileAsync(path.join(toolsDir(), 'fabric-nodes.sh'), ['down'], { env: this.env, cwd: this.dir, timeout: 30_000 }).catch(() => undefined);
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

  /** notAfter (s since the epoch) of a node's operations server certificate. */
  certificateNotAfter(name: string): number {
    const file = path.join(this.dir, this.node(name).org, name, 'ops.crt');
    return Math.floor(Date.parse(new X509Certificate(readFileSync(file)).validTo) / 1000);
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
