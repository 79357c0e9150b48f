import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { waitFor } from './wait';
import { createPrivateKey } from 'node:crypto';
import { closeSync, existsSync, openSync, readFileSync } from 'node:fs';
import { copyFile, cp, mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import * as grpc from '@grpc/grpc-js';
import { connect, hash, signers, type Gateway } from '@hyperledger/fabric-gateway';
import { isMap, isSeq, parseDocument } from 'yaml';
import { acceptsConnections, freeTcpPort } from './ports';
import { requireCommand } from './prerequisites';
import { logTail, terminate } from './processes';
import { requireFabricReleases } from './real-binaries';

/**
 * A real Hyperledger Fabric network on loopback for chaincode tests: one etcdraft orderer, one
 * peer (Org1), channel `mychannel`, TLS on every Fabric endpoint, chaincode deployed as a
 * service (`ccaas` external builder), with free ports and a temp folder per network so that
 * parallel runs do not meet. On request (`secondPeer`) a second peer of Org1, peer1, joined to
 * `mychannel` with gossip settings of its own, which a test can stop and start with others.
 * `$FABRIC_HOME` names the release, else the first release of the opt-in suite (`$FABRIC_HOMES`,
 * else `peer` on the PATH: test/support/real-binaries.ts); there is no default, the project has
 * no Fabric binaries (only the opt-in suite, test/real/, and bench/chaincode.ts use this file).
 */

const run = promisify(execFile);
/** The repository root, also when this file runs compiled elsewhere (bench builds). */
function findRepoRoot(): string {
  for (let dir = __dirname; ; dir = path.dirname(dir)) {
    if (existsSync(path.join(dir, 'examples/chaincode-as-a-service/package.json')) && existsSync(path.join(dir, 'node_modules'))) return dir;
    if (path.dirname(dir) === dir) return path.resolve(__dirname, '../..');
  }
}

const repoRoot = findRepoRoot();
export const channelName = 'mychannel';

/** What the network needs of its release folder, beyond the opt-in suite's bin/peer, bin/orderer and sampleconfig/. */
const networkNeeds = 'a Fabric 2.5 release folder with bin/, sampleconfig/, ccaas-builder/ and network-config/';

/**
 * The release folder of the network: `$FABRIC_HOME`, else the first folder the opt-in suite names
 * (requireFabricReleases: `$FABRIC_HOMES`, else `peer` on the PATH), so that one setting runs the
 * whole suite. None: "OPT-IN SUITE CANNOT RUN"; a folder without what the network needs: the
 * missing file named.
 */
export function fabricNetworkHome(): string {
  let home = process.env.FABRIC_HOME ?? '';
  if (home === '') {
    let releases: string[];
    try {
      releases = requireFabricReleases();
    } catch (error) {
      // Its message first (the opt-in suite's line), then what this network needs besides.
      throw new Error(
        `${(error as Error).message} (the Fabric network of test/support/fabric-network.ts takes FABRIC_HOME, else the first folder of FABRIC_HOMES: ${networkNeeds})`,
        {
          cause: error,
        },
      );
    }
    const [first] = releases;
    if (first === undefined) throw new Error(`OPT-IN SUITE CANNOT RUN: no FABRIC_HOME and no release in FABRIC_HOMES (${networkNeeds})`);
    home = first;
  }
  for (const required of [
    'bin/peer',
    'bin/orderer',
    'bin/cryptogen',
    'bin/configtxgen',
    'bin/osnadmin',
    'ccaas-builder/bin/build',
    'sampleconfig/core.yaml',
    'network-config/configtx.yaml',
  ]) {
    if (!existsSync(path.join(home, required))) {
      throw new Error(
        `Fabric release incomplete: ${path.join(home, required)} is missing (set FABRIC_HOME, or FABRIC_HOMES whose first folder the network takes, to ${networkNeeds})`,
      );
    }
  }
  return home;
}

/** A process the harness started, its output in a file. */
export class Daemon {
  readonly exited: Promise<number | null>;
  private exitCode: number | null | undefined;

  constructor(
    readonly name: string,
    readonly child: ChildProcess,
    readonly logFile: string,
  ) {
    this.exited = new Promise((resolve) => child.once('exit', (code) => resolve(code)));
    void this.exited.then((code) => {
      this.exitCode = code;
    });
  }

  get running(): boolean {
    return this.exitCode === undefined;
  }

  output(): string {
    try {
      return readFileSync(this.logFile, 'utf8');
    } catch {
      return '';
    }
  }

  async stop(graceMs = 5000): Promise<void> {
    if (!this.running) return;
    await terminate(this.child, this.exited, graceMs);
  }
}

export function startDaemon(name: string, logFile: string, command: string, args: string[], options: { cwd: string; env: NodeJS.ProcessEnv }): Daemon {
  const fd = openSync(logFile, 'a');
  try {
    const child = spawn(command, args, { cwd: options.cwd, env: options.env, stdio: ['ignore', fd, fd] });
    return new Daemon(name, child, logFile);
  } finally {
    closeSync(fd);
  }
}

/**
 * waitFor (./wait.ts) until `probe` is true, for a daemon: gives up at once when `daemon` has
 * exited, and any failure carries the tail of its log (what it said before dying or stalling).
 */
export async function waitForDaemon(what: string, probe: () => Promise<boolean> | boolean, daemon?: Daemon, timeoutMs = 30_000): Promise<void> {
  const exited = (): string | undefined => (daemon !== undefined && !daemon.running ? `${daemon.name} exited:\n${logTail(daemon.logFile, 30)}` : undefined);
  try {
    await waitFor(what, probe, { timeoutMs, everyMs: 100, giveUpIf: exited });
  } catch (error) {
    throw daemon && daemon.running ? new Error(`${(error as Error).message}:\n${logTail(daemon.logFile, 30)}`, { cause: error }) : error;
  }
}

export const waitForPort = (port: number, daemon?: Daemon, timeoutMs?: number): Promise<void> =>
  waitForDaemon(`127.0.0.1:${port} to accept connections`, () => acceptsConnections(port), daemon, timeoutMs);

/**
 * The URL of fabric-ops' operations server in `daemon`, from its "operations server listening
 * on" line (logged once bound): with CORE_OPERATIONS_LISTENADDRESS on port 0, the bound port.
 */
export async function loggedOperationsUrl(daemon: Daemon, timeoutMs?: number): Promise<string> {
  let url = '';
  await waitForDaemon(
    `${daemon.name} to log its operations URL`,
    () => (url = /operations server listening on (https?:\/\/127\.0\.0\.1:\d+)/.exec(daemon.output())?.[1] ?? '') !== '',
    daemon,
    timeoutMs,
  );
  return url;
}

/**
 * The metrics provider of both nodes (CORE_METRICS_PROVIDER, ORDERER_METRICS_PROVIDER). `disabled`
 * is the sample configurations' own: /metrics answers Go's 404. `prometheus`: each node serves
 * /metrics on its operations port.
 */
export type NetworkMetricsProvider = 'disabled' | 'prometheus';

/**
 * How the second peer (peer1.org1.example.com) gets its blocks. It never uses leader election
 * (CORE_PEER_GOSSIP_USELEADERELECTION=false) and bootstraps gossip to its own address only, as
 * peer0 does; nothing points it at peer0, nor peer0 at it, and the channel names no anchor peer
 * at its port (the harness changes only the orderer's port in configtx.yaml, and peer1's port is
 * a free one of this run), so the two never meet in gossip. Fabric (gossip/service/gossip_service.go,
 * InitializeChannel, 2.5 to 3.1) starts the deliver client of a channel only on a static org
 * leader (or an elected one); any other peer gets blocks from the peers gossip lets it know,
 * and peer1 knows none.
 */
export interface SecondPeerGossip {
  /**
   * CORE_PEER_GOSSIP_ORGLEADER. `false`: a non-leader cut off from gossip, so no block reaches it
   * after the genesis block it joined with (a gossip partition). `true`: a static org leader that
   * pulls every block from the orderer itself, from its ledger's height on.
   */
  orgLeader: boolean;
}

export interface FabricNetworkOptions {
  /** Default `disabled` (the network as test/real/fabric/chaincode-network.test.ts runs it). */
  metricsProvider?: NetworkMetricsProvider;
  /**
   * Also peer1.org1.example.com, started with this gossip after peer0 has joined `mychannel`, then
   * joined with the same `peer channel join`: its own ports, ledger folder and log, its operations
   * endpoint plain HTTP with the metrics provider of the others. Default: no second peer (the
   * network exactly as without this option).
   */
  secondPeer?: SecondPeerGossip;
}

/** The second peer's ports (only with `secondPeer`). */
export interface SecondPeerPorts {
  peer: number;
  chaincode: number;
  ops: number;
}

export interface NetworkPorts {
  orderer: number;
  ordererAdmin: number;
  ordererOps: number;
  peer: number;
  peerChaincode: number;
  peerOps: number;
  /** Only with `secondPeer`. */
  peer1?: SecondPeerPorts;
}

export interface CcaasDeployment {
  name: string;
  label: string;
  packageId: string;
}

export interface ChaincodeTlsMaterial {
  /** PEM paths of the chaincode server's certificate and key (issued by the Org1 TLS CA). */
  cert: string;
  key: string;
  /** The CA of the peer's client certificate: the chaincode server demands it. */
  clientCa: string;
}

/** The whole network, with the files a client or a chaincode needs. */
export class FabricNetwork {
  peerDaemon: Daemon | null = null;
  ordererDaemon: Daemon | null = null;
  /** The second peer, only with `secondPeer` (null until started). */
  peer1Daemon: Daemon | null = null;
  private peerEnv: NodeJS.ProcessEnv = {};
  /** Chaincode definitions approved by makeBlocks, for the next name. */
  private blocksMade = 0;
  private readonly gateways: Array<{ gateway: Gateway; client: grpc.Client }> = [];

  constructor(
    readonly dir: string,
    readonly home: string,
    readonly ports: NetworkPorts,
    readonly metricsProvider: NetworkMetricsProvider = 'disabled',
  ) {}

  /*
   * The operations endpoints are plain HTTP: the harness sets their listen addresses only, and
   * operations TLS stays off as in the release's sampleconfig (core.yaml `operations.tls.enabled`,
   * orderer.yaml `Operations.TLS.Enabled`). Fabric asks a client certificate for /metrics and
   * /logspec only when that TLS is on, so with `prometheus` anyone on loopback reads /metrics.
   */

  /** The peer's operations endpoint (/healthz, /metrics, ...): plain HTTP. */
  get peerOperationsUrl(): string {
    return `http://127.0.0.1:${this.ports.peerOps}`;
  }

  /** The orderer's operations endpoint: plain HTTP. */
  get ordererOperationsUrl(): string {
    return `http://127.0.0.1:${this.ports.ordererOps}`;
  }

  /** The second peer's ports; throws on a network started without `secondPeer`. */
  get peer1Ports(): SecondPeerPorts {
    if (this.ports.peer1 === undefined) throw new Error('this network has no second peer: start it with startFabricNetwork({ secondPeer })');
    return this.ports.peer1;
  }

  /** The second peer's operations endpoint (/healthz, /metrics, ...): plain HTTP, as peer0's. */
  get peer1OperationsUrl(): string {
    return `http://127.0.0.1:${this.peer1Ports.ops}`;
  }

  get orgs(): string {
    return path.join(this.dir, 'organizations');
  }

  get peerOrg(): string {
    return path.join(this.orgs, 'peerOrganizations/org1.example.com');
  }

  get peerNode(): string {
    return path.join(this.peerOrg, 'peers/peer0.org1.example.com');
  }

  /** The second peer's MSP and TLS material (cryptogen's Template.Count 2 of Org1). */
  get peer1Node(): string {
    return path.join(this.peerOrg, 'peers/peer1.org1.example.com');
  }

  /** The Org1 TLS CA: it issued the peer's TLS certificate. */
  get peerTlsCa(): string {
    return path.join(this.peerOrg, 'tlsca/tlsca.org1.example.com-cert.pem');
  }

  get ordererNode(): string {
    return path.join(this.orgs, 'ordererOrganizations/example.com/orderers/orderer.example.com');
  }

  get ordererTlsCa(): string {
    return path.join(this.orgs, 'ordererOrganizations/example.com/tlsca/tlsca.example.com-cert.pem');
  }

  private bin(name: string): string {
    return path.join(this.home, 'bin', name);
  }

  /** Environment of the peer CLI acting as the Org1 admin, talking to peer0 unless `address` names another peer. */
  private adminEnv(address = `127.0.0.1:${this.ports.peer}`): NodeJS.ProcessEnv {
    return {
      PATH: process.env.PATH,
      HOME: this.dir,
      FABRIC_CFG_PATH: path.join(this.dir, 'cfg/peer'),
      FABRIC_LOGGING_SPEC: 'warning',
      CORE_PEER_TLS_ENABLED: 'true',
      CORE_PEER_LOCALMSPID: 'Org1MSP',
      CORE_PEER_MSPCONFIGPATH: path.join(this.peerOrg, 'users/Admin@org1.example.com/msp'),
      CORE_PEER_TLS_ROOTCERT_FILE: this.peerTlsCa,
      CORE_PEER_ADDRESS: address,
    };
  }

  private async peerCli(args: string[], address?: string): Promise<string> {
    try {
      const { stdout } = await run(this.bin('peer'), args, { env: this.adminEnv(address), cwd: this.dir, timeout: 60_000 });
      return stdout;
    } catch (error) {
      const failed = error as { stderr?: string; message: string };
      throw new Error(`peer ${args.slice(0, 3).join(' ')} failed: ${failed.stderr ?? failed.message}`, { cause: error });
    }
  }

  private ordererArgs(): string[] {
    return ['-o', `127.0.0.1:${this.ports.orderer}`, '--tls', '--cafile', this.ordererTlsCa];
  }

  async startOrderer(): Promise<void> {
    const node = this.ordererNode;
    const work = path.join(this.dir, 'orderer');
    await mkdir(work, { recursive: true });
    const env: NodeJS.ProcessEnv = {
      PATH: process.env.PATH,
      FABRIC_CFG_PATH: path.join(this.dir, 'cfg/orderer'),
      FABRIC_LOGGING_SPEC: 'info',
      ORDERER_GENERAL_LISTENADDRESS: '127.0.0.1',
      ORDERER_GENERAL_LISTENPORT: String(this.ports.orderer),
      ORDERER_GENERAL_LOCALMSPID: 'OrdererMSP',
      ORDERER_GENERAL_LOCALMSPDIR: path.join(node, 'msp'),
      ORDERER_GENERAL_TLS_ENABLED: 'true',
      ORDERER_GENERAL_TLS_PRIVATEKEY: path.join(node, 'tls/server.key'),
      ORDERER_GENERAL_TLS_CERTIFICATE: path.join(node, 'tls/server.crt'),
      ORDERER_GENERAL_TLS_ROOTCAS: `[${path.join(node, 'tls/ca.crt')}]`,
      ORDERER_GENERAL_CLUSTER_CLIENTCERTIFICATE: path.join(node, 'tls/server.crt'),
      ORDERER_GENERAL_CLUSTER_CLIENTPRIVATEKEY: path.join(node, 'tls/server.key'),
      ORDERER_GENERAL_CLUSTER_ROOTCAS: `[${path.join(node, 'tls/ca.crt')}]`,
      ORDERER_GENERAL_BOOTSTRAPMETHOD: 'none',
      ORDERER_CHANNELPARTICIPATION_ENABLED: 'true',
      ORDERER_ADMIN_LISTENADDRESS: `127.0.0.1:${this.ports.ordererAdmin}`,
      ORDERER_ADMIN_TLS_ENABLED: 'true',
      ORDERER_ADMIN_TLS_CERTIFICATE: path.join(node, 'tls/server.crt'),
      ORDERER_ADMIN_TLS_PRIVATEKEY: path.join(node, 'tls/server.key'),
      ORDERER_ADMIN_TLS_ROOTCAS: `[${path.join(node, 'tls/ca.crt')}]`,
      ORDERER_ADMIN_TLS_CLIENTAUTHREQUIRED: 'true',
      ORDERER_ADMIN_TLS_CLIENTROOTCAS: `[${path.join(node, 'tls/ca.crt')}]`,
      ORDERER_OPERATIONS_LISTENADDRESS: `127.0.0.1:${this.ports.ordererOps}`,
      ORDERER_METRICS_PROVIDER: this.metricsProvider,
      ORDERER_FILELEDGER_LOCATION: path.join(work, 'ledger'),
      ORDERER_CONSENSUS_WALDIR: path.join(work, 'etcdraft/wal'),
      ORDERER_CONSENSUS_SNAPDIR: path.join(work, 'etcdraft/snapshot'),
    };
    this.ordererDaemon = startDaemon('orderer', path.join(this.dir, 'orderer.log'), this.bin('orderer'), [], { cwd: work, env });
    await waitForPort(this.ports.orderer, this.ordererDaemon);
    await waitForPort(this.ports.ordererAdmin, this.ordererDaemon);
  }

  async joinOrderer(block: string): Promise<void> {
    const admin = path.join(this.orgs, 'ordererOrganizations/example.com/users/Admin@example.com/tls');
    await run(
      this.bin('osnadmin'),
      [
        'channel',
        'join',
        '--channelID',
        channelName,
        '--config-block',
        block,
        '-o',
        `127.0.0.1:${this.ports.ordererAdmin}`,
        '--ca-file',
        this.ordererTlsCa,
        '--client-cert',
        path.join(admin, 'client.crt'),
        '--client-key',
        path.join(admin, 'client.key'),
      ],
      { env: { PATH: process.env.PATH }, timeout: 30_000 },
    );
    const daemon = this.ordererDaemon ?? undefined;
    await waitForDaemon(
      'the orderer to become raft leader of mychannel',
      () => daemon?.output().includes('Start accepting requests as Raft leader') ?? false,
      daemon,
    );
  }

  async startPeer(): Promise<void> {
    const work = path.join(this.dir, 'peer');
    await mkdir(work, { recursive: true });
    this.peerEnv = this.peerEnvironment({
      id: 'peer0.org1.example.com',
      node: this.peerNode,
      work,
      ports: { peer: this.ports.peer, chaincode: this.ports.peerChaincode, ops: this.ports.peerOps },
    });
    await this.launchPeer();
  }

  private async launchPeer(): Promise<void> {
    this.peerDaemon = startDaemon('peer', path.join(this.dir, 'peer.log'), this.bin('peer'), ['node', 'start'], {
      cwd: path.join(this.dir, 'peer'),
      env: this.peerEnv,
    });
    // /healthz answers before the gRPC port is bound: wait for the port itself.
    await waitForPort(this.ports.peer, this.peerDaemon);
  }

  /** SIGTERM to the peer (its streams to chaincode servers end). */
  async stopPeer(): Promise<void> {
    await this.peerDaemon?.stop();
  }

  /** Starts the stopped peer again, with its ledger. */
  async restartPeer(): Promise<void> {
    if (this.peerDaemon?.running) throw new Error('the peer is still running');
    await this.launchPeer();
  }

  async joinPeer(block: string): Promise<void> {
    await this.peerCli(['channel', 'join', '-b', block]);
    await waitForDaemon('the peer to have joined mychannel', async () => {
      try {
        await this.peerCli(['channel', 'getinfo', '-c', channelName]);
        return true;
      } catch {
        return false;
      }
    });
  }

  /**
   * A peer's environment: its identity, ports and ledger folder; gossip bootstraps to its own
   * address (never another peer's, and not core.yaml's 127.0.0.1:7051: any other peer on this
   * machine could be there; gossip skips a bootstrap address that is its own). `gossip` (the
   * second peer) sets its leadership by hand instead of electing.
   */
  private peerEnvironment(peer: {
    id: string;
    node: string;
    work: string;
    ports: { peer: number; chaincode: number; ops: number };
    gossip?: SecondPeerGossip;
  }): NodeJS.ProcessEnv {
    const { node, work, ports } = peer;
    const address = `127.0.0.1:${ports.peer}`;
    return {
      PATH: process.env.PATH,
      HOME: this.dir,
      FABRIC_CFG_PATH: path.join(this.dir, 'cfg/peer'),
      FABRIC_LOGGING_SPEC: 'info',
      CORE_PEER_ID: peer.id,
      CORE_PEER_LISTENADDRESS: address,
      CORE_PEER_ADDRESS: address,
      CORE_PEER_CHAINCODELISTENADDRESS: `127.0.0.1:${ports.chaincode}`,
      CORE_PEER_CHAINCODEADDRESS: `127.0.0.1:${ports.chaincode}`,
      CORE_PEER_GOSSIP_BOOTSTRAP: address,
      CORE_PEER_GOSSIP_EXTERNALENDPOINT: address,
      ...(peer.gossip === undefined ? {} : { CORE_PEER_GOSSIP_USELEADERELECTION: 'false', CORE_PEER_GOSSIP_ORGLEADER: String(peer.gossip.orgLeader) }),
      CORE_PEER_LOCALMSPID: 'Org1MSP',
      CORE_PEER_MSPCONFIGPATH: path.join(node, 'msp'),
      CORE_PEER_TLS_ENABLED: 'true',
      CORE_PEER_TLS_CERT_FILE: path.join(node, 'tls/server.crt'),
      CORE_PEER_TLS_KEY_FILE: path.join(node, 'tls/server.key'),
      CORE_PEER_TLS_ROOTCERT_FILE: path.join(node, 'tls/ca.crt'),
      CORE_PEER_FILESYSTEMPATH: path.join(work, 'production'),
      CORE_LEDGER_SNAPSHOTS_ROOTDIR: path.join(work, 'snapshots'),
      CORE_OPERATIONS_LISTENADDRESS: `127.0.0.1:${ports.ops}`,
      CORE_METRICS_PROVIDER: this.metricsProvider,
      CORE_CHAINCODE_EXECUTETIMEOUT: '30s',
    };
  }

  /** The second peer's environment: its own identity, ports, ledger, and `gossip`. */
  private secondPeerEnv(gossip: SecondPeerGossip): NodeJS.ProcessEnv {
    return this.peerEnvironment({ id: 'peer1.org1.example.com', node: this.peer1Node, work: path.join(this.dir, 'peer1'), ports: this.peer1Ports, gossip });
  }

  /**
   * Starts the second peer with `gossip`, on its ledger folder (kept between starts: a start after
   * stopSecondPeer opens the same ledger at its height), and waits for its gRPC port.
   */
  async startSecondPeer(gossip: SecondPeerGossip): Promise<void> {
    if (this.peer1Daemon?.running) throw new Error('peer1 is still running: stopSecondPeer first');
    const env = this.secondPeerEnv(gossip);
    await mkdir(path.join(this.dir, 'peer1'), { recursive: true });
    this.peer1Daemon = startDaemon('peer1', path.join(this.dir, 'peer1.log'), this.bin('peer'), ['node', 'start'], {
      cwd: path.join(this.dir, 'peer1'),
      env,
    });
    // /healthz answers before the gRPC port is bound: wait for the port itself (as launchPeer).
    await waitForPort(this.peer1Ports.peer, this.peer1Daemon);
  }

  /** SIGTERM to the second peer; its ledger stays for the next startSecondPeer. */
  async stopSecondPeer(): Promise<void> {
    await this.peer1Daemon?.stop();
  }

  /** The second peer joins mychannel: the `peer channel join` of joinPeer, sent to peer1. */
  async joinSecondPeer(block: string): Promise<void> {
    const address = `127.0.0.1:${this.peer1Ports.peer}`;
    await this.peerCli(['channel', 'join', '-b', block], address);
    await waitForDaemon(
      'peer1 to have joined mychannel',
      async () => {
        try {
          await this.peerCli(['channel', 'getinfo', '-c', channelName], address);
          return true;
        } catch {
          return false;
        }
      },
      this.peer1Daemon ?? undefined,
    );
  }

  /**
   * `count` blocks on mychannel, one transaction each, endorsed by peer0 and ordered by the
   * orderer: Org1 approves the definition of a chaincode named `blocks-N`, N never used before
   * on this network (sequence 1, no package: `approveformyorg` without `--package-id` approves a
   * definition the org will not run), and `--waitForEvent` waits until peer0 has committed it
   * before the next is sent, so no two share a block. Nothing is installed, nothing runs, no
   * definition is committed (a commit would be a second transaction per name).
   */
  async makeBlocks(count: number): Promise<void> {
    for (let made = 0; made < count; made += 1) {
      this.blocksMade += 1;
      await this.peerCli([
        'lifecycle',
        'chaincode',
        'approveformyorg',
        ...this.ordererArgs(),
        '--channelID',
        channelName,
        '--name',
        `blocks-${this.blocksMade}`,
        '--version',
        '1.0',
        '--sequence',
        '1',
        '--waitForEvent',
      ]);
    }
  }

  /** A certificate for a chaincode server on 127.0.0.1, issued by the Org1 TLS CA (as the recipe's CC_TLS=1). */
  async issueChaincodeServerTls(name: string): Promise<ChaincodeTlsMaterial> {
    const dir = path.join(this.dir, `cc-tls-${name}`);
    await mkdir(dir, { recursive: true });
    const key = path.join(dir, 'server.key');
    const csr = path.join(dir, 'server.csr');
    const cert = path.join(dir, 'server.crt');
    const ext = path.join(dir, 'server.ext');
    await run('openssl', [
      'req',
      '-new',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-keyout',
      key,
      '-out',
      csr,
      '-subj',
      `/O=org1.example.com/CN=${name}`,
    ]);
    await writeFile(
      ext,
      'basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\nsubjectAltName=IP:127.0.0.1,DNS:localhost\n',
    );
    const tlsca = path.join(this.peerOrg, 'tlsca');
    await run('openssl', [
      'x509',
      '-req',
      '-in',
      csr,
      '-CA',
      this.peerTlsCa,
      '-CAkey',
      path.join(tlsca, 'priv_sk'),
      '-CAcreateserial',
      '-days',
      '30',
      '-extfile',
      ext,
      '-out',
      cert,
    ]);
    return { cert, key, clientCa: this.peerTlsCa };
  }

  /**
   * Packages a `ccaas` chaincode pointing at 127.0.0.1:port, installs it, lets `start` launch
   * the chaincode server with the package id, then approves and commits it on mychannel.
   */
  async deployCcaas(options: { name: string; port: number; tls: boolean; start(packageId: string): Promise<void> }): Promise<CcaasDeployment> {
    const label = `${options.name}_1.0`;
    const pkg = path.join(this.dir, `pkg-${options.name}`);
    await mkdir(path.join(pkg, 'src'), { recursive: true });
    const connection: Record<string, unknown> = { address: `127.0.0.1:${options.port}`, dial_timeout: '10s', tls_required: options.tls };
    if (options.tls) {
      // The peer presents its own TLS certificate (cryptogen gives it the clientAuth usage) as client certificate.
      connection.client_auth_required = true;
      connection.root_cert = await readFile(this.peerTlsCa, 'utf8');
      connection.client_cert = await readFile(path.join(this.peerNode, 'tls/server.crt'), 'utf8');
      connection.client_key = await readFile(path.join(this.peerNode, 'tls/server.key'), 'utf8');
    }
    await writeFile(path.join(pkg, 'src/connection.json'), JSON.stringify(connection));
    await writeFile(path.join(pkg, 'metadata.json'), JSON.stringify({ type: 'ccaas', label }));
    await run('tar', ['-C', path.join(pkg, 'src'), '-czf', path.join(pkg, 'code.tar.gz'), 'connection.json']);
    const archive = path.join(pkg, `${options.name}.tgz`);
    await run('tar', ['-C', pkg, '-czf', archive, 'metadata.json', 'code.tar.gz']);

    await this.peerCli(['lifecycle', 'chaincode', 'install', archive]);
    const packageId = (await this.peerCli(['lifecycle', 'chaincode', 'calculatepackageid', archive])).trim();
    await options.start(packageId);
    const common = ['--channelID', channelName, '--name', options.name, '--version', '1.0', '--sequence', '1'];
    await this.peerCli(['lifecycle', 'chaincode', 'approveformyorg', ...this.ordererArgs(), ...common, '--package-id', packageId, '--waitForEvent']);
    await this.peerCli([
      'lifecycle',
      'chaincode',
      'commit',
      ...this.ordererArgs(),
      ...common,
      '--waitForEvent',
      '--peerAddresses',
      `127.0.0.1:${this.ports.peer}`,
      '--tlsRootCertFiles',
      this.peerTlsCa,
    ]);
    return { name: options.name, label, packageId };
  }

  /** A Fabric Gateway connection as User1 of Org1, as an application makes it. */
  async gateway(): Promise<Gateway> {
    const user = path.join(this.peerOrg, 'users/User1@org1.example.com/msp');
    const certDir = path.join(user, 'signcerts');
    const keyDir = path.join(user, 'keystore');
    const [certFile] = await readdir(certDir);
    const [keyFile] = await readdir(keyDir);
    if (certFile === undefined || keyFile === undefined) throw new Error(`no certificate or key for User1 under ${user}`);
    const client = new grpc.Client(`127.0.0.1:${this.ports.peer}`, grpc.credentials.createSsl(readFileSync(this.peerTlsCa)));
    const gateway = connect({
      client,
      identity: { mspId: 'Org1MSP', credentials: readFileSync(path.join(certDir, certFile)) },
      signer: signers.newPrivateKeySigner(createPrivateKey(readFileSync(path.join(keyDir, keyFile)))),
      hash: hash.sha256,
      evaluateOptions: () => ({ deadline: Date.now() + 15_000 }),
      endorseOptions: () => ({ deadline: Date.now() + 30_000 }),
      submitOptions: () => ({ deadline: Date.now() + 15_000 }),
      commitStatusOptions: () => ({ deadline: Date.now() + 60_000 }),
    });
    this.gateways.push({ gateway, client });
    return gateway;
  }

  async stop(): Promise<void> {
    for (const { gateway, client } of this.gateways.splice(0)) {
      gateway.close();
      client.close();
    }
    await this.peer1Daemon?.stop();
    await this.peerDaemon?.stop();
    await this.ordererDaemon?.stop();
  }
}

/**
 * The release's network-config/crypto-config.yaml with Org1's `Template.Count` at least 2 (so that
 * cryptogen makes peer1.org1.example.com beside peer0, with the same SANS and the same CAs),
 * written in the network's folder; everything else as the release has it.
 */
async function cryptoConfigWithTwoPeers(home: string, dir: string): Promise<string> {
  const source = path.join(home, 'network-config/crypto-config.yaml');
  const document = parseDocument(await readFile(source, 'utf8'));
  const [problem] = document.errors;
  if (problem !== undefined) throw new Error(`${source}: ${problem.message}`);
  const orgs = document.get('PeerOrgs');
  const org1 = isSeq(orgs) ? orgs.items.find((org) => isMap(org) && org.get('Domain') === 'org1.example.com') : undefined;
  if (!isMap(org1)) throw new Error(`${source}: no PeerOrgs entry with Domain org1.example.com (the second peer is peer1 of that org)`);
  const template = org1.get('Template');
  if (!isMap(template)) throw new Error(`${source}: PeerOrgs org1.example.com has no Template (the second peer needs Template.Count 2)`);
  const count = template.get('Count');
  if (typeof count !== 'number' || count < 2) template.set('Count', 2);
  const target = path.join(dir, 'crypto-config.yaml');
  await writeFile(target, document.toString());
  return target;
}

/** Crypto material, channel block, orderer, osnadmin join, peer, peer join (then, with `secondPeer`, peer1 and its join). */
export async function startFabricNetwork(options: FabricNetworkOptions = {}): Promise<FabricNetwork> {
  // The release first: without one, the opt-in suite's own message, whatever else is missing.
  const home = fabricNetworkHome();
  requireCommand('openssl');
  requireCommand('tar');
  const dir = await mkdtemp(path.join(os.tmpdir(), 'fabric-ops-fabnet-'));
  // Probed, not port 0: the real orderer and peer take every port from their configuration and
  // never report what they bound, and the channel's genesis block (configtx.yaml) and the peer's
  // own address must name them before either starts.
  const ports: NetworkPorts = {
    orderer: await freeTcpPort(),
    ordererAdmin: await freeTcpPort(),
    ordererOps: await freeTcpPort(),
    peer: await freeTcpPort(),
    peerChaincode: await freeTcpPort(),
    peerOps: await freeTcpPort(),
  };
  // The second peer's, the same way (it too names its ports in its environment before it starts).
  if (options.secondPeer !== undefined) ports.peer1 = { peer: await freeTcpPort(), chaincode: await freeTcpPort(), ops: await freeTcpPort() };
  const network = new FabricNetwork(dir, home, ports, options.metricsProvider ?? 'disabled');
  try {
    const cryptoConfig = options.secondPeer === undefined ? path.join(home, 'network-config/crypto-config.yaml') : await cryptoConfigWithTwoPeers(home, dir);
    await run(path.join(home, 'bin/cryptogen'), ['generate', `--config=${cryptoConfig}`, `--output=${network.orgs}`]);
    if (options.secondPeer !== undefined) {
      for (const made of ['msp/signcerts', 'msp/keystore', 'tls/server.crt', 'tls/server.key', 'tls/ca.crt']) {
        if (!existsSync(path.join(network.peer1Node, made))) {
          throw new Error(
            `cryptogen made no ${path.join(network.peer1Node, made)} from ${cryptoConfig} (Org1's Template: Count 2, its default Hostname and Start)`,
          );
        }
      }
    }
    await mkdir(path.join(dir, 'config'), { recursive: true });
    const configtx = (await readFile(path.join(home, 'network-config/configtx.yaml'), 'utf8')).replaceAll('27050', String(ports.orderer));
    await writeFile(path.join(dir, 'config/configtx.yaml'), configtx);
    await mkdir(path.join(dir, 'cfg/orderer'), { recursive: true });
    await mkdir(path.join(dir, 'cfg/peer'), { recursive: true });
    await copyFile(path.join(home, 'sampleconfig/orderer.yaml'), path.join(dir, 'cfg/orderer/orderer.yaml'));
    const builder = path.join(home, 'ccaas-builder');
    // No Docker checker (an empty CORE_VM_ENDPOINT would be ignored) and the ccaas builder at its real path.
    const core = (await readFile(path.join(home, 'sampleconfig/core.yaml'), 'utf8'))
      .replace(/^(\s+endpoint:) unix:\/\/\/var\/run\/docker\.sock/m, '$1 ""')
      .replace('path: /opt/hyperledger/ccaas_builder', `path: ${builder}`);
    if (!core.includes(`path: ${builder}`)) throw new Error('could not point core.yaml at the ccaas builder');
    await writeFile(path.join(dir, 'cfg/peer/core.yaml'), core);
    const block = path.join(dir, `${channelName}.block`);
    await run(path.join(home, 'bin/configtxgen'), ['-profile', 'OneOrgApplicationGenesis', '-outputBlock', block, '-channelID', channelName], {
      env: { PATH: process.env.PATH, FABRIC_CFG_PATH: path.join(dir, 'config') },
    });
    await network.startOrderer();
    await network.joinOrderer(block);
    await network.startPeer();
    await network.joinPeer(block);
    if (options.secondPeer !== undefined) {
      await network.startSecondPeer(options.secondPeer);
      await network.joinSecondPeer(block);
    }
    return network;
  } catch (error) {
    await network.stop().catch(() => undefined);
    throw error;
  }
}

/**
 * The example chaincode compiled with fabric-ops from this repository's sources, laid out as
 * an installed project: `<dir>/cc` holds package.json and dist/ (the example), and
 * `<dir>/node_modules` has fabric-ops (its package.json, dist/ compiled from src/) beside
 * links to this repository's dependencies, so that fabric-shim, fabric-contract-api and
 * fabric-ops resolve to one copy each, as in a real install.
 */
export interface ChaincodeProject {
  dir: string;
  /** Module path for `fabric-chaincode-node server` (its package.json `main` is the example). */
  projectDir: string;
  /** fabric-shim's CLI, `fabric-chaincode-node`. */
  shimCli: string;
  /** Writes another project dir whose main module is `source` (JavaScript, may require fabric-ops/chaincode and ./kv-contract). */
  variant(name: string, source: string): Promise<string>;
  cleanup(): Promise<void>;
}

const exampleDir = path.join(repoRoot, 'examples/chaincode-as-a-service');

export async function buildChaincodeProject(): Promise<ChaincodeProject> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'fabric-ops-cc-'));
  const build = path.join(dir, 'build');
  const tsconfig = path.join(dir, 'tsconfig.json');
  await writeFile(
    tsconfig,
    JSON.stringify({
      extends: path.join(repoRoot, 'tsconfig.json'),
      compilerOptions: {
        rootDir: repoRoot,
        outDir: build,
        types: ['node'],
        typeRoots: [path.join(repoRoot, 'node_modules/@types')],
        declaration: false,
        sourceMap: false,
        paths: { 'fabric-ops/chaincode': [path.join(repoRoot, 'src/chaincode/index.ts')] },
      },
      include: [],
      files: [path.join(repoRoot, 'src/chaincode/index.ts'), path.join(exampleDir, 'src/index.ts')],
    }),
  );
  try {
    await run(process.execPath, [path.join(repoRoot, 'node_modules/typescript/bin/tsc'), '-p', tsconfig], { cwd: repoRoot, timeout: 180_000 });
  } catch (error) {
    await rm(dir, { recursive: true, force: true });
    const failed = error as { stdout?: string; message: string };
    throw new Error(`compiling src/chaincode and the example failed:\n${failed.stdout ?? failed.message}`, { cause: error });
  }
  // What src/version.ts reads beside the compiled sources (a name other than fabric-ops: no self-reference).
  const { version } = JSON.parse(await readFile(path.join(repoRoot, 'package.json'), 'utf8')) as { version: string };
  await writeFile(path.join(build, 'package.json'), JSON.stringify({ name: 'fabric-ops-build', private: true, version }));
  await copyFile(path.join(repoRoot, 'src/health/cri.proto'), path.join(build, 'src/health/cri.proto'));

  const modules = path.join(dir, 'node_modules');
  await mkdir(modules);
  for (const entry of await readdir(path.join(repoRoot, 'node_modules'))) {
    if (entry === 'fabric-ops' || entry.startsWith('.')) continue;
    await symlink(path.join(repoRoot, 'node_modules', entry), path.join(modules, entry));
  }
  const fabricOps = path.join(modules, 'fabric-ops');
  await mkdir(fabricOps);
  await copyFile(path.join(repoRoot, 'package.json'), path.join(fabricOps, 'package.json'));
  await symlink(path.join(build, 'src'), path.join(fabricOps, 'dist'));

  const projectDir = path.join(dir, 'cc');
  await mkdir(projectDir);
  await copyFile(path.join(exampleDir, 'package.json'), path.join(projectDir, 'package.json'));
  await symlink(path.join(build, 'examples/chaincode-as-a-service/src'), path.join(projectDir, 'dist'));

  return {
    dir,
    projectDir,
    shimCli: path.join(repoRoot, 'node_modules/fabric-shim/cli.js'),
    async variant(name, source) {
      const variantDir = path.join(dir, name);
      await mkdir(variantDir);
      await cp(path.join(build, 'examples/chaincode-as-a-service/src'), path.join(variantDir, 'lib'), { recursive: true });
      await writeFile(path.join(variantDir, 'lib/main.js'), source);
      await writeFile(path.join(variantDir, 'package.json'), JSON.stringify({ name: `kv-${name}`, version: '1.0.0', main: 'lib/main.js' }));
      return variantDir;
    },
    async cleanup() {
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** A chaincode server process started with `fabric-chaincode-node server`, its output kept. */
export function startChaincodeServer(options: {
  project: ChaincodeProject;
  moduleDir?: string;
  name: string;
  port: number;
  packageId: string;
  tls?: ChaincodeTlsMaterial;
  env: NodeJS.ProcessEnv;
  logFile: string;
}): Daemon {
  const args = [options.project.shimCli, 'server', `--chaincode-address=127.0.0.1:${options.port}`, `--chaincode-id=${options.packageId}`];
  if (options.tls) {
    args.push(
      `--chaincode-tls-cert-file=${options.tls.cert}`,
      `--chaincode-tls-key-file=${options.tls.key}`,
      `--chaincode-tls-client-cacert-file=${options.tls.clientCa}`,
    );
  }
  return startDaemon(options.name, options.logFile, process.execPath, args, {
    cwd: options.moduleDir ?? options.project.projectDir,
    env: { PATH: process.env.PATH, HOME: os.tmpdir(), ...options.env },
  });
}
