import { readFileSync } from 'node:fs';
import net from 'node:net';
import { X509Certificate } from 'node:crypto';
import { PassThrough } from 'node:stream';
import { runFleetCommand } from '../../../src/fleet/cli';
import { FabricNetwork, type FabricDouble, type RecordedRelease } from '../../support/fabric-double';
import { request, type HttpAnswer } from '../../support/http';
import type { TestPki } from '../../support/pki';

export interface FabricNodeEntry {
  name: string;
  org: string;
  dialect: 'peer' | 'orderer';
  url: string;
  /** The org's operations CA: it issued the node's server certificate and is its only client root. */
  caFile: string;
  /** The org's operator client certificate and key. */
  clientCertFile: string;
  clientKeyFile: string;
}

/**
 * Doubles of recorded Fabric nodes (test/support/fabric-double.ts, from ../shared/fixtures/fabric-recorded):
 * several orgs, each with its own operations CA and operator client certificate, which only its own
 * org's nodes trust. The recorded network of each release has 2 peer orgs (org1, org2) of one peer
 * each and 3 orderers (org ordererorg); start() picks from it. The real-binary version of the fleet
 * scenario is test/real/fabric/fleet-real-nodes.test.ts.
 */
export class FabricNodes {
  readonly nodes: FabricNodeEntry[];

  private constructor(
    private readonly network: FabricNetwork,
    private readonly picked: FabricDouble[],
  ) {
    this.nodes = picked.map((node) => ({
      name: node.name,
      org: node.org,
      dialect: node.dialect,
      url: node.url,
      caFile: node.caFile,
      clientCertFile: node.clientCertFile,
      clientKeyFile: node.clientKeyFile,
    }));
  }

  get release(): RecordedRelease {
    return this.network.release;
  }

  /** The temp folder with the nodes' minted server certificates. */
  get dir(): string {
    return this.network.dir;
  }

  /**
   * Starts the first `orgs` peer orgs' first `peersPerOrg` peers, then the first `orderers` orderers,
   * of the recorded `release`, in that order.
   */
  static async start(release: RecordedRelease, settings: { orgs: number; peersPerOrg: number; orderers: number }): Promise<FabricNodes> {
    const network = await FabricNetwork.open(release);
    try {
      const peers = network.nodes.filter((node) => node.dialect === 'peer');
      const orderers = network.nodes.filter((node) => node.dialect === 'orderer');
      const orgs = [...new Set(peers.map((node) => node.org))];
      const limits: Array<[keyof typeof settings, number, string]> = [
        ['orgs', orgs.length, `peer orgs (${orgs.join(', ')})`],
        ['peersPerOrg', Math.min(...orgs.map((org) => peers.filter((node) => node.org === org).length)), 'peer in each org'],
        ['orderers', orderers.length, 'orderers'],
      ];
      for (const [key, limit, what] of limits) {
        if (!Number.isInteger(settings[key]) || settings[key] < 0 || settings[key] > limit) {
          throw new Error(`FabricNodes.start: ${key} ${settings[key]}: the recorded ${release} network has ${limit} ${what}; ${key} must be 0 to ${limit}`);
        }
      }
      const picked = [
        ...orgs.slice(0, settings.orgs).flatMap((org) => peers.filter((node) => node.org === org).slice(0, settings.peersPerOrg)),
        ...orderers.slice(0, settings.orderers),
      ];
      await network.start(picked.map((node) => node.name));
      return new FabricNodes(network, picked);
    } catch (error) {
      await network.close();
      throw error;
    }
  }

  /** Starts every node again, on the same ports (the fleet's configuration names them), with the recorded log spec. */
  async up(): Promise<void> {
    await Promise.all(this.picked.map((node) => node.start()));
  }

  /**
   * Moves the recorded network to `step` (FabricNetwork.setStep): every node serves that step's
   * /metrics; a node the recording had stopped then is stopped, and started again at a later step
   * that has it back.
   */
  async setStep(step: number): Promise<void> {
    await this.network.setStep(step);
  }

  /** Stops every node: connections to its port are refused until up(). */
  async down(): Promise<void> {
    await Promise.all(this.picked.map((node) => node.stop()));
  }

  async cleanup(): Promise<void> {
    await this.network.close();
  }

  node(name: string): FabricNodeEntry {
    const found = this.nodes.find((node) => node.name === name);
    if (!found) throw new Error(`no node ${name} among ${this.nodes.map((node) => node.name).join(', ')} (recorded ${this.release})`);
    return found;
  }

  /** The double behind a node: steps, failed health checks. */
  double(name: string): FabricDouble {
    this.node(name);
    return this.network.node(name);
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
    const file = this.double(name).certFile;
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
