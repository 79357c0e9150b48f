import type { NormalisedConfig } from '../config/types';
import type { Logger } from '../logging/types';
import { monotonicClock, realScheduler, type Cancellable, type Clock, type Scheduler } from '../time';
import type { MetricsProvider } from '../metrics/types';
import { NodeClient, type CallOutcome } from './client';
import type { FleetConfig } from './config';
import { fingerprintFiles, readGroupMaterial, type GroupMaterial } from './credentials';
import { Coalescer, evaluateHealth, nodeHealth, type DiscoveryStatus, type FleetHealthReport, type RoundReport } from './health';
import { FleetLogSpec, FleetNotReadyError, type FleetNodes, type NodeLogSpec, type SetLogSpecAnswer, type SetLogSpecRequest } from './logspec';
import { NodeDirectory, type DirectoryChange } from './directory';
import { KubernetesDiscovery, sourceName, type SourceWatchFactory } from './discovery/kubernetes';
import { FleetMetrics } from './metrics';
import { lastCallFrom, mapLanes, planLanes, type LastCall } from './pool';
import { FilePutBackStore, type PendingPutBack, type PutBackStore } from './putback-store';
import type { KubernetesConnection } from '../kubernetes/connection';
import { ConfigError } from '../errors';
import type { FleetEvent, FleetEventListener, FleetNode, NodePutBack, NodeSelector } from './types';
import { groupVersions, type FleetVersionReport } from './versions';
import { ChannelTracker, readNodeHeights, type FleetChannelReport } from './channels';
import {
  fleetCertificateReport,
  fleetCertificateWarningDays,
  HandshakeCertificates,
  readNodeCertificates,
  withCompanionSummaries,
  type CompanionSummary,
  type FleetCertificateReport,
} from './certificates';
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
  /** For durations (node latency, the credential check interval); default: the scheduler when one is given, else a monotonic clock. */
  clock?: Clock;
  /** Each discovery source's list+watch; default: a Reflector of src/kubernetes over `kubernetes` (tests give doubles). */
  watchSource?: SourceWatchFactory;
  random?: () => number;
  /** Where pending put-backs are kept; default: the file under `stateDirectory`. */
  store?: PutBackStore;
  /** Credentials for a connection made at start when discovery needs one and `kubernetes` is not given; default process.env. */
  env?: NodeJS.ProcessEnv;
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

/** Group credentials are checked for a change (a stat of each file) at most this often, not at every node call. */
const credentialCheckIntervalMs = 1000;

/**
 * The file store under stateDirectory. Without one (only stateConfigMap, and no store given), a
 * store that refuses at start(): a read-only use (startReadOnly, the one-shot command) needs none.
 */
function fileStore(config: FleetConfig): PutBackStore {
  if (config.stateDirectory !== null) return new FilePutBackStore(config.stateDirectory);
  const missing = (): ConfigError => new ConfigError([`${config.source}: stateDirectory: needed unless a put-back store is given (stateConfigMap)`]);
  return { where: 'nowhere', load: () => Promise.reject(missing()), save: () => Promise.reject(missing()) };
}

/** Pure: a group's TLS files as a node's TLS error names them: the key and the file (`groups.org1.tls.certFile (/etc/org1/client.crt)`). */
function groupTlsSources(config: Pick<FleetConfig, 'groups'>, group: string): { caSource: string; certSource: string | null } {
  const key = `groups.${group}.tls`;
  const files = Object.hasOwn(config.groups, group) ? config.groups[group]?.tls : undefined;
  if (files === undefined || files === null) return { caSource: `${key}.caFiles`, certSource: null };
  return {
    caSource: `${key}.caFiles (${files.caFiles.join(', ')})`,
    certSource: files.certFile === undefined ? null : `${key}.certFile (${files.certFile})`,
  };
}

/**
 * The fleet: nodes from the configuration and from discovery (the directory), health and version
 * rounds (bounded, coalesced), log levels with put-backs, metrics and events. Reaches the
 * operations system only through FleetHost.
 */
export class FleetService {
  readonly config: FleetConfig;
  readonly logSpec: FleetLogSpec;
  /** The nodes now: static and discovered. */
  readonly directory: NodeDirectory;
  private discovery: KubernetesDiscovery | null = null;
  private readonly options: FleetServiceOptions;
  private readonly logger: Logger;
  private readonly client: NodeClient;
  private readonly metrics: FleetMetrics;
  private readonly scheduler: Scheduler;
  private readonly clock: Clock;
  private readonly materials = new Map<string, { fingerprint: string; material: GroupMaterial; checkedAt: number }>();
  /** Rounds in flight, awaited by stop(). */
  private readonly rounds = new Set<Promise<unknown>>();
  private stopped = false;
  private readonly listeners = new Set<FleetEventListener>();
  private readonly healthRound: Coalescer<FleetHealthReport>;
  private readonly versionRound: Coalescer<FleetVersionReport>;
  private readonly logSpecRound: Coalescer<NodeLogSpec[]>;
  /** Channel rounds (src/fleet/channels.ts): heights between rounds, and their metrics. */
  private readonly channelRound: Coalescer<FleetChannelReport>;
  private readonly channelTracker: ChannelTracker;
  /** Certificate rounds (src/fleet/certificates.ts), and the last one's answer (the companions beside /fleet/healthz's nodes). */
  private readonly certificateRound: Coalescer<FleetCertificateReport>;
  private lastCertificates: FleetCertificateReport | null = null;
  /** The operations certificate each node showed in its last handshake. */
  private readonly handshakes = new HandshakeCertificates();
  private poll: Cancellable | null = null;
  /** What the last round that asked each node learnt of it, for the lanes of the next (planLanes). */
  private readonly lastCalls = new Map<string, LastCall>();
  /** Rounds started (health and version rounds alike), numbering LastCall.round. */
  private roundCount = 0;

  /** Serves nothing itself: fleetExtension checks that the server can carry /fleet before making one. */
  constructor(config: FleetConfig, environment: FleetEnvironment, options: FleetServiceOptions = {}) {
    this.config = config;
    this.logger = environment.logger;
    this.scheduler = options.scheduler ?? realScheduler;
    // Latency is a duration: a step of the wall clock must not make it negative or huge.
    this.clock = options.clock ?? (options.scheduler !== undefined ? options.scheduler : monotonicClock);
    // Every group's files are read now: a start with unreadable credentials fails, naming them.
    for (const [name, group] of Object.entries(config.groups)) {
      if (group.tls)
        this.materials.set(name, { fingerprint: fingerprintFiles(group.tls), material: readGroupMaterial(name, group.tls), checkedAt: this.clock.now() });
    }
    this.options = options;
    const names = config.discovery.kubernetes.map((source, index) => sourceName(source, index, options.kubernetes?.namespace ?? null));
    this.directory = new NodeDirectory(config.nodes, names, ({ source, node, heldBy }) =>
      this.logger.warn(`fleet discovery: ${source} found node ${node.name} (${node.url}), a name ${heldBy} already holds; it is skipped`, {
        source,
        node: node.name,
      }),
    );
    this.metrics = new FleetMetrics(environment.metrics);
    this.metrics.setKnown(this.directory.nodes().length);
    this.directory.onChange((changes) => this.membershipChanged(changes));
    this.client = new NodeClient({
      timeoutMs: config.nodeTimeoutMs,
      maxResponseBytes: config.maxResponseBytes,
      scheduler: this.scheduler,
      clock: this.clock,
      material: (group) => this.material(group),
      tlsSources: (node) => groupTlsSources(config, node.group),
      onPeerCertificate: (node, notAfter, certificate) => {
        this.handshakes.record(node, certificate, this.scheduler.now());
        // Its companion's handshake (another URL) is not the node's certificate.
        if (this.isCurrent(node) && this.directory.byName(node.name)?.url === node.url) this.metrics.recordCertificate(node, notAfter);
      },
    });
    this.healthRound = new Coalescer(() => this.track(this.checkHealth()), config.minRoundIntervalMs, this.scheduler);
    this.versionRound = new Coalescer(() => this.track(this.readVersions()), config.minRoundIntervalMs, this.scheduler);
    this.channelTracker = new ChannelTracker(config.channels, this.clock);
    this.metrics.channels.setBehindBlocks(config.channels.behindBlocks);
    this.channelRound = new Coalescer(() => this.track(this.readChannels()), config.minRoundIntervalMs, this.scheduler);
    this.certificateRound = new Coalescer(() => this.track(this.readCertificates()), config.minRoundIntervalMs, this.scheduler);
    // Reads of every node's spec are shared and reused like health rounds; any write or put-back invalidates them.
    this.logSpecRound = new Coalescer(() => this.track(this.logSpec.read()), config.minRoundIntervalMs, this.scheduler);
    this.logSpec = new FleetLogSpec({
      nodes: this.fleetNodes(),
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

  /** The directory as the logspec work sees it, with the discovery problems for its messages. */
  private fleetNodes(): FleetNodes {
    const directory = this.directory;
    return {
      nodes: () => directory.nodes(),
      byName: (name) => directory.byName(name),
      get synced() {
        return directory.synced;
      },
      get dynamic() {
        return directory.dynamic;
      },
      whenSynced: () => directory.whenSynced(),
      describeUnsynced: () => this.unsyncedReason(),
    };
  }

  /** One info line per node that joins or leaves; a node that left takes its metric series with it. */
  private membershipChanged(changes: readonly DirectoryChange[]): void {
    for (const change of changes) {
      const { node, source } = change;
      if (change.type === 'joined') {
        this.logger.info(`fleet node ${node.name} joined (${node.url}, group ${node.group}) from ${source}`, {
          node: node.name,
          url: node.url,
          group: node.group,
          source,
        });
      } else if (change.type === 'left') {
        this.logger.info(`fleet node ${node.name} left (${node.url}, group ${node.group}) from ${source}`, {
          node: node.name,
          url: node.url,
          group: node.group,
          source,
        });
        this.metrics.forget(node);
        this.lastCalls.delete(node.name);
        this.channelTracker.forget(node.name);
        this.handshakes.forget(node.name);
      } else {
        this.logger.debug(`fleet node ${node.name} changed (${change.previous.url} -> ${node.url}, group ${node.group})`, {
          node: node.name,
          url: node.url,
          group: node.group,
        });
        // Its series are labelled with its group: those of the old group go; the next round makes the new ones.
        if (change.previous.group !== node.group) this.metrics.forget(change.previous);
      }
    }
    this.metrics.setKnown(this.directory.nodes().length);
    // A cached answer describes another fleet.
    this.healthRound.invalidate();
    this.versionRound.invalidate();
    this.channelRound.invalidate();
    this.logSpecRound.invalidate();
    this.certificateRound.invalidate();
  }

  /** Each discovery source: listed yet, and its last problem. Empty without discovery. */
  discoveryStatus(): DiscoveryStatus[] {
    return this.discovery?.status() ?? this.directory.status().map((status) => ({ ...status, problem: 'not started' }));
  }

  /**
   * Starts each source's list+watch: over `options.kubernetes`, else a connection made now
   * (credentials as kubectl finds them; throws KubernetesSetupError when there are none).
   */
  private async startDiscovery(): Promise<void> {
    const sources = this.config.discovery.kubernetes;
    if (sources.length === 0 || this.discovery !== null) return;
    const { options } = this;
    let factory = options.watchSource;
    let kubernetes = options.kubernetes;
    if (factory === undefined) {
      if (kubernetes === undefined) {
        // eslint-disable-next-line @typescript-eslint/no-require-imports -- client-node only with discovery (start time)
        const { connectKubernetes } = require('../kubernetes/connection') as typeof import('../kubernetes/connection');
        kubernetes = await connectKubernetes(options.env ?? process.env);
      }
      // eslint-disable-next-line @typescript-eslint/no-require-imports -- the watch code only with discovery (start time)
      const { reflectorWatchFactory } = require('./discovery/reflector-source') as {
        reflectorWatchFactory: (connection: KubernetesConnection, logger: Logger) => SourceWatchFactory;
      };
      factory = reflectorWatchFactory(kubernetes, this.logger);
    }
    this.discovery = new KubernetesDiscovery(
      sources,
      this.directory.sources,
      kubernetes?.namespace ?? 'default',
      this.directory,
      this.logger,
      factory,
      new Set(this.config.nodes.map((node) => node.name)),
    );
    this.discovery.start();
  }

  /**
   * For a one-shot read (the `fleet` command with --fleet-config): discovery only, no put-backs
   * (they belong to the running server), no background round.
   */
  async startReadOnly(): Promise<void> {
    await this.startDiscovery();
  }

  private unsyncedReason(): string {
    const waiting = this.discoveryStatus().filter((status) => !status.synced);
    return `discovery has not listed every source yet, so the fleet is not known: ${waiting
      .map((status) => `${status.source}: ${status.problem ?? 'listing'}`)
      .join('; ')}`;
  }

  /**
   * Resolves once every discovery source has listed; rejects after `timeoutMs`, naming each source
   * not listed yet and its problem (the one-shot command).
   */
  whenSynced(timeoutMs: number): Promise<void> {
    if (this.directory.synced) return Promise.resolve();
    // The scheduler's timers (and the watches') do not keep a process alive; a caller waiting for
    // the fleet (the one-shot command, whose only work this is) must, until the wait ends.
    const keepAlive = setInterval(() => undefined, 60_000);
    return new Promise<void>((resolve, reject) => {
      const timer = this.scheduler.setTimeout(() => reject(new FleetNotReadyError(`${this.unsyncedReason()} (waited ${timeoutMs / 1000} s)`)), timeoutMs);
      void this.directory.whenSynced().then(() => {
        timer.cancel();
        resolve();
      });
    }).finally(() => clearInterval(keepAlive));
  }

  private track<T>(round: Promise<T>): Promise<T> {
    this.rounds.add(round);
    const forget = (): void => {
      this.rounds.delete(round);
    };
    round.then(forget, forget);
    return round;
  }

  /**
   * Starts discovery (when configured), loads pending put-backs (throws ConfigError on an unusable
   * state file; those due wait for discovery to list every source) and starts the background round.
   */
  async start(): Promise<void> {
    await this.startDiscovery();
    await this.logSpec.start();
    if (this.config.pollIntervalMs > 0) {
      const round = (): void => {
        void this.health().catch((error: unknown) => this.logger.error(`fleet health round failed: ${messageOf(error)}`));
        void this.versions().catch((error: unknown) => this.logger.error(`fleet version round failed: ${messageOf(error)}`));
        void this.channels().catch((error: unknown) => this.logger.error(`fleet channel round failed: ${messageOf(error)}`));
        void this.certificates().catch((error: unknown) => this.logger.error(`fleet certificate round failed: ${messageOf(error)}`));
      };
      round();
      this.poll = this.scheduler.setInterval(round, this.config.pollIntervalMs);
    }
    const sources = this.config.discovery.kubernetes.length;
    this.logger.info(
      `fleet of ${this.config.nodes.length} configured nodes${sources > 0 ? ` and ${sources} discovery sources` : ''} from ${this.config.source}`,
      {
        nodes: this.config.nodes.length,
        discoverySources: sources,
        groups: Object.keys(this.config.groups),
        writers: this.config.writers.length,
      },
    );
  }

  /**
   * Stops the background round, discovery and the put-back timers, and waits for the rounds in
   * flight: they start no new node call, and each call ends within nodeTimeout, so the wait is
   * bounded by it (plus a margin for the answers to be read).
   */
  async stop(): Promise<void> {
    this.stopped = true;
    this.poll?.cancel();
    this.logSpec.stop();
    await this.discovery?.stop();
    if (this.rounds.size > 0) {
      let timer: Cancellable | undefined;
      const bound = new Promise<void>((resolve) => {
        timer = this.scheduler.setTimeout(resolve, this.config.nodeTimeoutMs + 100);
      });
      await Promise.race([Promise.allSettled([...this.rounds]), bound]);
      timer?.cancel();
    }
    await this.logSpec.idle();
  }

  /**
   * A group's current material: re-read when its files changed; the old material stays if the new
   * cannot be used. The files are looked at (stat) at most once a second per group, not at every
   * node call: a round of 500 nodes made 1,500 stat calls.
   */
  private material(group: string): GroupMaterial | null {
    const files = this.config.groups[group]?.tls;
    if (!files) return null;
    const known = this.materials.get(group);
    const now = this.clock.now();
    if (known !== undefined && now - known.checkedAt < credentialCheckIntervalMs) return known.material;
    const fingerprint = fingerprintFiles(files);
    if (known !== undefined && known.fingerprint === fingerprint) {
      known.checkedAt = now;
      return known.material;
    }
    try {
      const material = readGroupMaterial(group, files);
      this.materials.set(group, { fingerprint, material, checkedAt: now });
      if (known !== undefined) this.logger.info(`fleet group ${group}: client credentials reloaded`);
      return material;
    } catch (error) {
      this.logger.warn(`fleet group ${group}: changed credentials not used, keeping the previous ones: ${messageOf(error)}`);
      if (known !== undefined) this.materials.set(group, { fingerprint, material: known.material, checkedAt: now });
      return known?.material ?? null;
    }
  }

  /**
   * The fleet's health. With discovery, the answer carries each source's status, and until every
   * source has listed it is 503 whatever the nodes say (which nodes the rule counts is not known).
   */
  async health(): Promise<FleetHealthReport> {
    const report = await this.healthRound.run();
    if (!this.directory.dynamic) return report;
    const discovery = this.discoveryStatus();
    if (this.directory.synced) return { ...report, discovery };
    return { ...report, status: 'Service Unavailable', discovery, reason: this.unsyncedReason() };
  }

  versions(): Promise<FleetVersionReport> {
    return this.versionRound.run();
  }

  /**
   * Every channel's heights on every node, who lags (src/fleet/channels.ts). With discovery, as
   * health(): each source's status, and until every source has listed the reason why the nodes
   * may not be the fleet's.
   */
  async channels(): Promise<FleetChannelReport> {
    const report = await this.channelRound.run();
    if (!this.directory.dynamic) return report;
    const discovery = this.discoveryStatus();
    return this.directory.synced ? { ...report, discovery } : { ...report, discovery, reason: this.unsyncedReason() };
  }

  readLogSpecs(): Promise<NodeLogSpec[]> {
    return this.logSpecRound.run();
  }

  /** Every certificate of every node, soonest expiry first (src/fleet/certificates.ts). */
  certificates(): Promise<FleetCertificateReport> {
    return this.certificateRound.run();
  }

  /** A node's companion in brief (certificates and disk), from the last certificate round; undefined when not known. */
  companionSummary(name: string): CompanionSummary | undefined {
    return this.lastCertificates?.nodes.find((node) => node.name === name)?.companion;
  }

  /** `actorFields`: more of who wrote, logged with the audit line (the fleet's HTTP layer: the client certificate's issuer and fingerprint). */
  setLogSpec(request: SetLogSpecRequest, actor: string, actorFields: Readonly<Record<string, string>> = {}): Promise<SetLogSpecAnswer> {
    return this.logSpec.set(request, actor, actorFields);
  }

  restoreLogSpecs(selector: NodeSelector, actor: string, actorFields: Readonly<Record<string, string>> = {}): Promise<NodePutBack[]> {
    return this.logSpec.restore(selector, actor, actorFields);
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
   * Every node once, in two lanes within the concurrency bound (planLanes, mapLanes): the nodes
   * that answered quickly last time in one, the others (never asked, timed out, unreachable,
   * slow) in the other, which holds at most a quarter of the workers while the first has nodes:
   * hung nodes never queue in front of answering ones. The round's deadline (roundTimeout) bounds
   * it whatever the fleet: then the calls in flight are cut and the nodes not yet asked are not
   * asked; both are reported `timeout`, naming the deadline. Results come back in directory order.
   */
  private async everyNode<R>(
    work: (node: FleetNode, signal: AbortSignal) => Promise<{ result: R; outcome: CallOutcome }>,
  ): Promise<{ results: R[]; round: RoundReport }> {
    this.roundCount += 1;
    const round = this.roundCount;
    const { nodeTimeoutMs, roundTimeoutMs } = this.config;
    const startedAt = this.scheduler.now();
    const started = this.clock.now();
    const nodes = this.directory.nodes().map((node, index) => ({ name: node.name, node, index }));
    const results = new Array<R | undefined>(nodes.length);
    const deadline = new AbortController();
    const timer = this.scheduler.setTimeout(() => deadline.abort(new Error(`the round's deadline (roundTimeout ${roundTimeoutMs} ms) passed`)), roundTimeoutMs);
    let cut = 0;
    let notAsked = 0;
    try {
      await mapLanes(
        planLanes(nodes, (name) => this.lastCalls.get(name)),
        this.config.concurrency,
        async ({ node, index }) => {
          // After stop(), the round asks no more nodes: it ends with the calls already made.
          if (this.stopped) return;
          const asked = !deadline.signal.aborted;
          const { result, outcome } = await work(node, deadline.signal);
          const wasCut = asked && deadline.signal.aborted && !outcome.ok && outcome.reason === 'timeout';
          if (!asked) notAsked += 1;
          else if (wasCut) cut += 1;
          const learnt = lastCallFrom(outcome, { asked, cut: wasCut, nodeTimeoutMs, round });
          if (learnt !== null && this.directory.byName(node.name) === node) this.lastCalls.set(node.name, learnt);
          results[index] = result;
        },
      );
    } finally {
      timer.cancel();
    }
    const report: RoundReport = {
      started: new Date(startedAt).toISOString(),
      durationMs: Math.round(Math.max(0, this.clock.now() - started)),
      deadlineMs: roundTimeoutMs,
      cut,
      notAsked,
    };
    return { results: results.filter((result): result is R => result !== undefined), round: report };
  }

  /** Is this node (by name and group) still in the fleet? A round's late answer must not bring back a departed node's series. */
  private isCurrent = (node: { name: string; group: string }): boolean => this.directory.byName(node.name)?.group === node.group;

  private async checkHealth(): Promise<FleetHealthReport> {
    const { results, round } = await this.everyNode(async (node, signal) => {
      const outcome = await this.client.call(node, 'GET', '/healthz', undefined, signal);
      return { result: nodeHealth(node, outcome), outcome };
    });
    const { nodes, ...summary } = evaluateHealth(results, this.config.healthy, this.scheduler.now());
    const report: FleetHealthReport = { ...summary, round, nodes: withCompanionSummaries(nodes, this.lastCertificates) };
    if (!this.stopped) this.metrics.recordHealth(report, this.isCurrent);
    return report;
  }

  private async readCertificates(): Promise<FleetCertificateReport> {
    const warningDays = fleetCertificateWarningDays;
    const now = (): number => this.scheduler.now();
    const { results, round } = await this.everyNode((node, signal) => readNodeCertificates(this.client, this.handshakes, node, signal, now, warningDays));
    const report = fleetCertificateReport(results, round, now(), warningDays);
    if (!this.stopped) this.lastCertificates = report;
    return report;
  }

  private async readChannels(): Promise<FleetChannelReport> {
    const { results, round } = await this.everyNode((node, signal) => readNodeHeights(this.client, node, signal, this.config.channels));
    const report = this.channelTracker.record(results, round, this.isCurrent, this.scheduler.now());
    if (!this.stopped) this.metrics.channels.record(report, this.isCurrent);
    return report;
  }

  private async readVersions(): Promise<FleetVersionReport> {
    const { results: answers } = await this.everyNode(async (node, signal) => {
      const outcome = await this.client.call(node, 'GET', '/version', undefined, signal);
      return { result: { node, outcome }, outcome };
    });
    const report = groupVersions(answers);
    if (!this.stopped) this.metrics.recordVersions(report, (name) => this.directory.byName(name) !== undefined);
    return report;
  }
}
