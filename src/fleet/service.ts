import type { NormalisedConfig } from '../config/types';
import type { Logger } from '../logging/types';
import { realScheduler, type Cancellable, type Scheduler } from '../time';
import type { MetricsProvider } from '../metrics/types';
import { NodeClient } from './client';
import type { FleetConfig } from './config';
import { fingerprintFiles, readGroupMaterial, type GroupMaterial } from './credentials';
import { Coalescer, evaluateHealth, nodeHealth, type FleetHealthReport } from './health';
import { FleetLogSpec, type NodeLogSpec, type SetLogSpecAnswer, type SetLogSpecRequest } from './logspec';
import { FleetMetrics } from './metrics';
import { mapBounded } from './pool';
import { FilePutBackStore, type PendingPutBack, type PutBackStore } from './putback-store';
import type { KubernetesConnection } from '../kubernetes/connection';
import { ConfigError } from '../errors';
import type { FleetEvent, FleetEventListener, FleetNode, NodePutBack, NodeSelector } from './types';
import { groupVersions, type FleetVersionReport } from './versions';
import { messageOf } from '../errors';
import { writerAllowed, type ClientIdentity } from './writers';

/** What the fleet uses of OperationsSystem (its public API, as the Kubernetes integration does). */
export interface FleetHost {
  readonly config: NormalisedConfig;
  getLogger(name: string): Logger;
  readonly metrics: MetricsProvider;
}

/** Where the service logs and counts: the operations system's (fleetExtension), or the one-shot command's. */
export interface FleetEnvironment {
  logger: Logger;
  metrics: MetricsProvider;
}

export interface FleetServiceOptions {
  scheduler?: Scheduler;
  random?: () => number;
  /** Where pending put-backs are kept; default: the file under `stateDirectory`. */
  store?: PutBackStore;
  /** The Kubernetes API (fleetExtension connects when the configuration needs it: discovery, stateConfigMap). */
  kubernetes?: KubernetesConnection;
}

/** Pure: why this server cannot run fleet mode, naming the node configuration's keys; null when it can. */
export function fleetServerProblems(config: NormalisedConfig): string[] {
  const { tls } = config.operations;
  if (!tls.enabled) {
    return [
      `fleet mode needs TLS on the operations server: ${config.keys.tlsEnabled} is false. /fleet/* reveals the topology and changes every node's log level; set ${config.keys.tlsEnabled}: true with ${config.keys.tlsCertFile}, ${config.keys.tlsKeyFile} and ${config.keys.tlsClientRootCAs}`,
    ];
  }
  if (tls.clientRootCAFiles.length === 0) {
    return [`fleet mode demands a client certificate on /fleet/*: ${config.keys.tlsClientRootCAs} must name the CA of the operators' client certificates`];
  }
  return [];
}

function fileStore(config: FleetConfig): PutBackStore {
  if (config.stateDirectory === null) throw new ConfigError([`${config.source}: stateDirectory: needed unless a put-back store is given (stateConfigMap)`]);
  return new FilePutBackStore(config.stateDirectory);
}

/**
 * The fleet: nodes from the configuration, health and version rounds (bounded, coalesced), log
 * levels with put-backs, metrics and events. Reaches the operations system only through FleetHost.
 */
export class FleetService {
  readonly config: FleetConfig;
  readonly logSpec: FleetLogSpec;
  private readonly logger: Logger;
  private readonly client: NodeClient;
  private readonly metrics: FleetMetrics;
  private readonly scheduler: Scheduler;
  private readonly materials = new Map<string, { fingerprint: string; material: GroupMaterial }>();
  private readonly listeners = new Set<FleetEventListener>();
  private readonly healthRound: Coalescer<FleetHealthReport>;
  private readonly versionRound: Coalescer<FleetVersionReport>;
  private readonly logSpecRound: Coalescer<NodeLogSpec[]>;
  private poll: Cancellable | null = null;
  /** How long each node took in the last round (its timeout when it gave none), for the call order. */
  private readonly lastCost = new Map<string, number>();

  /** Serves nothing itself: fleetExtension checks that the server can carry /fleet before making one. */
  constructor(config: FleetConfig, environment: FleetEnvironment, options: FleetServiceOptions = {}) {
    this.config = config;
    this.logger = environment.logger;
    this.scheduler = options.scheduler ?? realScheduler;
    // Every group's files are read now: a start with unreadable credentials fails, naming them.
    for (const [name, group] of Object.entries(config.groups)) {
      if (group.tls) this.materials.set(name, { fingerprint: fingerprintFiles(group.tls), material: readGroupMaterial(name, group.tls) });
    }
    this.metrics = new FleetMetrics(environment.metrics, config.nodes);
    this.client = new NodeClient({
      timeoutMs: config.nodeTimeoutMs,
      maxResponseBytes: config.maxResponseBytes,
      scheduler: this.scheduler,
      material: (group) => this.material(group),
      onPeerCertificate: (node, notAfter) => this.metrics.recordCertificate(node, notAfter),
    });
    this.healthRound = new Coalescer(() => this.checkHealth(), config.minRoundIntervalMs, this.scheduler);
    this.versionRound = new Coalescer(() => this.readVersions(), config.minRoundIntervalMs, this.scheduler);
    // Reads of every node's spec are shared and reused like health rounds; any write or put-back invalidates them.
    this.logSpecRound = new Coalescer(() => this.logSpec.read(), config.minRoundIntervalMs, this.scheduler);
    this.logSpec = new FleetLogSpec({
      nodes: config.nodes,
      client: this.client,
      concurrency: config.concurrency,
      scheduler: this.scheduler,
      store: options.store ?? fileStore(config),
      logger: this.logger,
      changes: this.metrics.logspecChanges,
      putBacks: this.metrics.logspecPutBacks,
      emit: (event) => this.emit(event),
      random: options.random,
    });
  }

  /** Loads pending put-backs (throws ConfigError on an unusable state file) and starts the background round. */
  async start(): Promise<void> {
    await this.logSpec.start();
    if (this.config.pollIntervalMs > 0) {
      const round = (): void => {
        void this.health().catch((error: unknown) => this.logger.error(`fleet health round failed: ${messageOf(error)}`));
        void this.versions().catch((error: unknown) => this.logger.error(`fleet version round failed: ${messageOf(error)}`));
      };
      round();
      this.poll = this.scheduler.setInterval(round, this.config.pollIntervalMs);
    }
    this.logger.info(`fleet of ${this.config.nodes.length} nodes from ${this.config.source}`, {
      nodes: this.config.nodes.length,
      groups: Object.keys(this.config.groups),
      writers: this.config.writers.length,
    });
  }

  async stop(): Promise<void> {
    this.poll?.cancel();
    this.logSpec.stop();
    await this.logSpec.idle();
  }

  /** A group's current material: re-read when its files changed; the old material stays if the new cannot be used. */
  private material(group: string): GroupMaterial | null {
    const files = this.config.groups[group]?.tls;
    if (!files) return null;
    const known = this.materials.get(group);
    const fingerprint = fingerprintFiles(files);
    if (known !== undefined && known.fingerprint === fingerprint) return known.material;
    try {
      const material = readGroupMaterial(group, files);
      this.materials.set(group, { fingerprint, material });
      if (known !== undefined) this.logger.info(`fleet group ${group}: client credentials reloaded`);
      return material;
    } catch (error) {
      this.logger.warn(`fleet group ${group}: changed credentials not used, keeping the previous ones: ${messageOf(error)}`);
      if (known !== undefined) this.materials.set(group, { fingerprint, material: known.material });
      return known?.material ?? null;
    }
  }

  health(): Promise<FleetHealthReport> {
    return this.healthRound.run();
  }

  versions(): Promise<FleetVersionReport> {
    return this.versionRound.run();
  }

  readLogSpecs(): Promise<NodeLogSpec[]> {
    return this.logSpecRound.run();
  }

  setLogSpec(request: SetLogSpecRequest, actor: string): Promise<SetLogSpecAnswer> {
    return this.logSpec.set(request, actor);
  }

  restoreLogSpecs(selector: NodeSelector, actor: string): Promise<NodePutBack[]> {
    return this.logSpec.restore(selector, actor);
  }

  pendingPutBacks(): PendingPutBack[] {
    return this.logSpec.pendingPutBacks();
  }

  /** May this client write? Only a certificate a rule of `writers` matches (default: nobody). */
  mayWrite(identity: ClientIdentity): boolean {
    return writerAllowed(this.config.writers, identity);
  }

  onEvent(listener: FleetEventListener): () => void {
    const entry: FleetEventListener = (event) => listener(event);
    this.listeners.add(entry);
    return () => {
      this.listeners.delete(entry);
    };
  }

  private emit(event: FleetEvent): void {
    this.logSpecRound.invalidate();
    for (const listener of [...this.listeners]) {
      try {
        listener(event);
      } catch (error) {
        this.logger.error(`a fleet event listener failed on ${event.type}: ${messageOf(error)}`);
      }
    }
  }

  /**
   * Every node once, within the concurrency bound, slowest of the last round first: a hung node
   * then waits out its timeout while the others are asked, instead of starting its timeout at the
   * end of the queue (a round costs about max(nodeTimeout, the time to ask the rest)). Results
   * come back in configuration order.
   */
  private async everyNode<R>(work: (node: FleetNode) => Promise<{ result: R; latencyMs: number }>): Promise<R[]> {
    const order = this.config.nodes.map((node, index) => ({ node, index }));
    order.sort((a, b) => (this.lastCost.get(b.node.name) ?? 0) - (this.lastCost.get(a.node.name) ?? 0));
    const results = new Array<R>(order.length);
    await mapBounded(order, this.config.concurrency, async ({ node, index }) => {
      const { result, latencyMs } = await work(node);
      this.lastCost.set(node.name, latencyMs);
      results[index] = result;
    });
    return results;
  }

  private async checkHealth(): Promise<FleetHealthReport> {
    const nodes = await this.everyNode(async (node) => {
      const outcome = await this.client.call(node, 'GET', '/healthz');
      return { result: nodeHealth(node, outcome), latencyMs: outcome.latencyMs };
    });
    const report = evaluateHealth(nodes, this.config.healthy, this.scheduler.now());
    this.metrics.recordHealth(report);
    return report;
  }

  private async readVersions(): Promise<FleetVersionReport> {
    const answers = await this.everyNode(async (node) => {
      const outcome = await this.client.call(node, 'GET', '/version');
      return { result: { node, outcome }, latencyMs: outcome.latencyMs };
    });
    const report = groupVersions(answers);
    this.metrics.recordVersions(report);
    return report;
  }
}
