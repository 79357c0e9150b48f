import type { SecureContextOptions } from 'node:tls';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { loadConfig, type LoadedConfig } from './config/load';
import { configDelayProblems } from './config/normalise';
import type { Dialect, HostPort, NormalisedConfig } from './config/types';
import { ConfigError, DedicatedCaError } from './errors';
import { OperationsEventEmitter, type OperationsEventListener } from './events';
import { HealthService } from './health/health-service';
import { createContainerRuntimeChecker } from './health/container-runtime';
import type { HealthChecker, OperationsHealth } from './health/types';
import { systemClock, type Clock } from './time';
import { createOperationsApp, routeOf } from './http/app';
import type { OperationsDomain, RequestActor } from './http/domain';
import { defaultMaxConnections, httpLimits, type HttpLimits } from './http/limits';
import { startServer, type ListeningServer } from './http/server';
import { LoggingSystem, localActor, type LogSpecActor, type OperationsLogging, type SpecChange } from './logging/logging-system';
import { logLevels, type Logger, type LogLevel } from './logging/types';
import { createMetricsSystem } from './metrics/create';
import { createServiceMetrics, type ServiceMetrics } from './metrics/service-metrics';
import type { Counter, MetricsProvider, MetricsSystem } from './metrics/types';
import { describeDedicatedCaViolation, findOrganizationCAs } from './tls/dedicated-ca';
import { loadTlsMaterial, secureContextOptions, type TlsMaterial } from './tls/material';
import { summarisePem, type CertificateSummary } from './tls/pem';
import { TlsMaterialWatcher } from './tls/watcher';
import { readVersion, type VersionDocument } from './version';
import type * as CompanionModule from './companion';

export interface StartOptions {
  /** A normalised configuration; when absent it is loaded as the command does. */
  config?: NormalisedConfig;
  configFile?: string;
  dialect?: Dialect;
  /** Environment for overrides, FABRIC_CFG_PATH and FABRIC_LOGGING_*; default process.env. */
  env?: NodeJS.ProcessEnv;
  /** Where log lines go; default stderr. Ignored when `logging` is given. */
  logStream?: NodeJS.WritableStream;
  /**
   * Share a LoggingSystem the embedding process already has: its spec changes are then counted
   * and audited by this system, until it stops (one running system per LoggingSystem).
   */
  logging?: LoggingSystem;
  /** The wall clock (ms) that health reports are dated by and refused-certificate reports are rate-limited by; default Date.now. */
  clock?: Clock;
  version?: VersionDocument;
  /** How often certificate files are polled for rotation; default 1000 ms. */
  tlsPollIntervalMs?: number;
  /**
   * The HTTP server's limits (read, handshake, first-byte, keep-alive and response timeouts, body
   * size, pipelined requests); each one defaults to Fabric's value. Shorter ones are for tests.
   */
  httpLimits?: Partial<HttpLimits>;
  /** Concerns serving their own paths (fleet mode): made once logging and metrics exist, before the server listens; stopped with the system. */
  extensions?: ReadonlyArray<(system: OperationsSystem) => HttpExtension | Promise<HttpExtension>>;
  /**
   * What loadConfig() returned, for embedding code that reads the configuration before the start
   * (the command does, to check its Kubernetes settings before the server listens): used as it is,
   * not read a second time (`configFile` and `dialect` are not used then); its `source` is named in
   * the start-up log and its `warnings` are logged. `config` wins when both are given.
   */
  loaded?: LoadedConfig;
}

/** A router of another concern (fleet mode's /fleet) mounted on the operations server. */
export interface HttpExtension {
  path: string;
  /**
   * Connect-style handler (an express Router fits). Typed with node:http's types, not express's,
   * so that the package's public types compile without @types/express.
   */
  handler(request: IncomingMessage, response: ServerResponse, next: (error?: unknown) => void): void;
  stop(): Promise<void>;
}

/** Time in-flight requests get to finish on stop (SIGTERM). */
export const stopGraceMs = 10_000;

/** Starts an operations system from a config object, a file, or the environment as the command does. */
export function startOperationsSystem(options: StartOptions = {}): Promise<OperationsSystem> {
  return OperationsSystem.start(options);
}

/** A running operations service: the HTTP server, logging, metrics and health, wired together. */
export class OperationsSystem {
  readonly config: NormalisedConfig;
  /** Where the configuration came from, for the start-up log. */
  readonly configSource: string;
  /** Loggers and the logging spec (every change audited); the LoggingSystem's wiring is not part of it. */
  readonly logging: OperationsLogging;
  /** The health checkers behind /healthz. */
  readonly health: OperationsHealth;
  /** @internal The same, with what the HTTP layer also asks of it (HealthService.reportNow). */
  private readonly healthService: HealthService;
  readonly version: VersionDocument;
  /** The server's HTTP limits (StartOptions.httpLimits over Fabric's defaults); extensions take their body limit from it. */
  readonly httpLimits: HttpLimits;
  /** The same object as `logging`, with what only the system does with it (its observer). */
  private readonly loggingSystem: LoggingSystem;
  private readonly metricsSystem: MetricsSystem;
  private readonly serviceMetrics: ServiceMetrics;
  private readonly logger: Logger;
  private server: ListeningServer | null = null;
  private watcher: TlsMaterialWatcher | null = null;
  private runtime: { component: string; checker: HealthChecker; close(): void } | null = null;
  private stopping: Promise<void> | null = null;
  private readonly events: OperationsEventEmitter;
  private certificate: CertificateSummary | null = null;
  private readonly requestCounters = new Map<string, Map<number, Counter>>();
  private extensions: HttpExtension[] = [];
  /** Companion mode: the running companion. */
  private companion: CompanionModule.Companion | null = null;

  private constructor(config: NormalisedConfig, configSource: string, options: StartOptions) {
    // First: a bad limit (ConfigError) throws before anything is made.
    this.httpLimits = httpLimits(options.httpLimits);
    this.config = config;
    this.configSource = configSource;
    this.loggingSystem = options.logging ?? LoggingSystem.fromEnvironment(options.env ?? process.env, options.logStream);
    this.logging = this.loggingSystem;
    this.logger = this.logging.getLogger('operations');
    this.metricsSystem = createMetricsSystem(config.metrics, { loggers: this.logging });
    const version = options.version ?? readVersion();
    this.serviceMetrics = createServiceMetrics(this.metricsSystem.provider, version.Version);
    // One handle per level, made once: the observer runs inside every log call.
    const perLevel = (counter: Counter): Record<LogLevel, Counter> =>
      Object.fromEntries(logLevels.map((level) => [level, counter.with({ level })])) as Record<LogLevel, Counter>;
    const checked = perLevel(this.serviceMetrics.loggingEntriesChecked);
    const written = perLevel(this.serviceMetrics.loggingEntriesWritten);
    this.events = new OperationsEventEmitter(this.logging.getLogger('operations.events'));
    // Every spec change, whatever path it takes (PUT /logspec, setLogSpec, logging.setSpec), is audited here.
    this.loggingSystem.setObserver({
      checked: (level) => checked[level].add(1),
      written: (level) => written[level].add(1),
      specChanging: (change) => this.auditLogSpecChange(change),
      specRefused: ({ spec, reason, actor }) => {
        if (!actor.remote) this.events.emit({ type: 'logspec.refused', spec, reason, actor: actor.name, active: this.logging.getSpec() });
      },
    });
    this.health = this.healthService = new HealthService({
      onStateChange: (event) => this.events.emit(event),
      timeoutMs: config.health.timeoutMs,
      clock: options.clock,
      loggers: this.logging,
      metrics: { duration: this.serviceMetrics.healthCheckDuration, status: this.serviceMetrics.healthCheckStatus },
    });
    this.version = version;
  }

  /**
   * @internal The implementation behind startOperationsSystem, the library's one start function
   * (this method is not in the published types: tsconfig.build.json strips @internal).
   */
  static async start(options: StartOptions = {}): Promise<OperationsSystem> {
    let config = options.config;
    let source = 'configuration given by the embedding code';
    let warnings: string[] = [];
    if (!config) {
      const loaded = options.loaded ?? loadConfig({ configFile: options.configFile, dialect: options.dialect, env: options.env ?? process.env });
      config = loaded.config;
      source = loaded.source;
      warnings = loaded.warnings;
    }
    const delayProblems = configDelayProblems(config, options);
    if (delayProblems.length > 0) throw new ConfigError(delayProblems);
    const system = new OperationsSystem(config, source, options);
    for (const warning of warnings) system.logger.warn(warning);
    try {
      await system.startComponents(options);
    } catch (err) {
      await system.stop(0).catch(() => undefined);
      throw err;
    }
    return system;
  }

  private async startComponents(options: StartOptions): Promise<void> {
    const { config } = this;
    // The start-up probe (runtime version, `auto` detection) keeps its own short timeout, so a
    // long check timeout cannot hold the start.
    this.runtime = await createContainerRuntimeChecker(config.health.containerRuntime, this.logging);
    if (this.runtime) this.health.register(this.runtime.component, this.runtime.checker);

    let tls: { context: SecureContextOptions; clientAuthRequired: boolean } | null = null;
    let material: TlsMaterial | null = null;
    if (config.operations.tls.enabled) {
      // Validity is judged by the same clock as everything else (StartOptions.clock).
      material = loadTlsMaterial(config.operations.tls, config.keys, (options.clock ?? systemClock).now());
      this.enforceDedicatedCa(material, 'start');
      this.recordCertificate(material);
      tls = { context: secureContextOptions(material), clientAuthRequired: config.operations.tls.clientAuthRequired };
    }

    const limits = this.httpLimits;
    for (const make of [...this.companionExtensions(), ...(options.extensions ?? [])]) this.extensions.push(await make(this));
    const app = createOperationsApp(this.domain(), {
      tlsEnabled: tls !== null,
      logger: this.logger,
      limits,
      mounts: this.extensions.map((extension) => ({ path: extension.path, handler: (req, res, next) => extension.handler(req, res, next) })),
    });
    const connectionsRefused = this.serviceMetrics.connectionsRefused;
    this.server = await startServer(
      config.operations.listen,
      app,
      tls,
      {
        onRefusedClientCertificate: (details) => this.logger.warn('client certificate refused', details),
        onConnectionRefused: () => connectionsRefused.add(1),
        onBareAnswer: (statusCode) => this.requestCounter('unmatched', statusCode).add(1),
        onAnswered: (req, statusCode) => this.requestCounter(routeOf(req), statusCode).add(1),
        onGaveUp: (details) => this.logger.warn('response took too long; giving up', details),
        clock: options.clock,
      },
      { ...limits, maxConnections: config.operations.maxConnections ?? defaultMaxConnections, drainLimitBytes: limits.maxBodyBytes },
    );
    await this.metricsSystem.start();

    if (material) {
      const server = this.server;
      this.watcher = new TlsMaterialWatcher({
        tls: config.operations.tls,
        keys: config.keys,
        logger: this.logging.getLogger('operations.tls'),
        current: material,
        intervalMs: options.tlsPollIntervalMs,
        ...(options.clock ? { clock: options.clock } : {}),
        failures: this.serviceMetrics.tlsReloadFailures,
        // Throwing refuses the new material: the watcher logs why and keeps the old.
        onChange: (next) => {
          this.enforceDedicatedCa(next, 'reload');
          server.setSecureContext(secureContextOptions(next));
          const certificate = this.recordCertificate(next);
          this.events.emit({ type: 'tls.reloaded', subject: certificate.subject, notAfter: certificate.notAfter, fingerprint: next.fingerprint });
        },
        onFailure: (problem) => this.events.emit({ type: 'tls.reloadRefused', reason: problem }),
      });
      this.watcher.start();
    }
    this.logger.info(`operations server listening on ${this.server.url}`, {
      url: this.server.url,
      config: this.configSource,
      metricsProvider: config.metrics.provider,
    });
  }

  /** Companion mode (docs/companion.md), when the configuration turns it on: loaded only then. */
  private companionExtensions(): NonNullable<StartOptions['extensions']> {
    const companion = this.config.companion;
    if (companion === undefined) return [];
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- companion mode on first use (start time)
    const { companionExtension } = require('./companion') as typeof CompanionModule;
    return [companionExtension(companion, { onStarted: (running) => void (this.companion = running) })];
  }

  /** The expiry gauges, and the summary `servingCertificate` returns. */
  private recordCertificate(material: TlsMaterial): CertificateSummary {
    const certificate = summarisePem(material.certPem);
    this.certificate = certificate;
    const expiry = this.serviceMetrics.tlsCertificateExpiry;
    expiry.with({ certificate: 'server' }).set(Date.parse(certificate.notAfter) / 1000);
    const caExpiries = material.clientCAPems.map((pem) => Date.parse(summarisePem(pem).notAfter) / 1000);
    if (caExpiries.length > 0) expiry.with({ certificate: 'client_ca' }).set(Math.min(...caExpiries));
    return certificate;
  }

  /** The dedicated-CA rule (docs/tls.md, "Dedicated CA"): the server certificate must not come from an organization CA. */
  private enforceDedicatedCa(material: TlsMaterial, when: 'start' | 'reload'): void {
    const matches = findOrganizationCAs(material.certPem, this.config.organizationCAs);
    for (const match of matches) {
      const message = describeDedicatedCaViolation(match, this.config.keys);
      if (this.config.operations.tls.requireDedicatedCA) throw new DedicatedCaError(message);
      this.logger.warn(message, { when, caFile: match.caFile, caSubject: match.caSubject, serverSubject: match.serverSubject });
    }
  }

  private domain(): OperationsDomain {
    return {
      getLogSpec: () => this.logging.getSpec(),
      setLogSpec: (spec: string, actor: RequestActor) => {
        this.logging.setSpec(spec, { name: describeActor(actor), fields: { ...actor }, remote: true });
      },
      checkHealth: (whenWaiting: () => AbortSignal) => this.healthService.reportNow() ?? this.healthService.check(whenWaiting()),
      version: this.version,
      scrape: this.metricsSystem.scrape,
    };
  }

  /** One bound counter per (route, status code), made on first use: `with()` per request showed in profiles. */
  private requestCounter(route: string, statusCode: number): Counter {
    let byCode = this.requestCounters.get(route);
    if (byCode === undefined) {
      byCode = new Map();
      this.requestCounters.set(route, byCode);
    }
    let counter = byCode.get(statusCode);
    if (counter === undefined) {
      counter = this.serviceMetrics.requests.with({ route, code: String(statusCode) });
      byCode.set(statusCode, counter);
    }
    return counter;
  }

  /**
   * The change is logged at info when the `operations` logger shows info under the old
   * spec or the new one, so that silencing the service does not hide who silenced it.
   */
  private auditLogSpecChange({ previous, current, actor }: SpecChange & { actor: LogSpecActor }): () => void {
    const message = `logging specification changed from '${previous}' to '${current}'`;
    const fields = { previous, current, ...actor.fields };
    const loggedBefore = this.logger.isEnabled('info');
    if (loggedBefore) this.logger.info(message, fields);
    return () => {
      if (!loggedBefore) this.logger.info(message, fields);
      this.serviceMetrics.logspecChanges.add(1);
      this.events.emit({ type: 'logspec.changed', previous, current, actor: actor.name });
    };
  }

  get url(): string {
    if (!this.server) throw new Error('operations server is not running');
    return this.server.url;
  }

  get address(): HostPort {
    if (!this.server) throw new Error('operations server is not running');
    return this.server.address;
  }

  /**
   * @internal Companion mode: the node's log level, which the logspec ConfigMap (src/kubernetes)
   * then steers instead of fabric-ops' own loggers (docs/companion.md); null otherwise.
   */
  get nodeLogSpec(): Pick<CompanionModule.NodeLogSpec, 'declare' | 'declared' | 'recordEventsWith'> | null {
    const companion = this.companion;
    if (companion === null) return null;
    const { logspec, certificates } = companion;
    return {
      declare: (spec, actor) => logspec.declare(spec, actor),
      declared: () => logspec.declared(),
      // The node's Events: its log level's and its certificates' (expired, inside the warning window).
      recordEventsWith: (record) => {
        logspec.recordEventsWith(record);
        certificates.recordEventsWith(record);
      },
    };
  }

  get metrics(): MetricsProvider {
    return this.metricsSystem.provider;
  }

  registerChecker(component: string, checker: HealthChecker): void {
    this.health.register(component, checker);
  }

  getLogger(name: string): Logger {
    return this.logging.getLogger(name);
  }

  getLogSpec(): string {
    return this.logging.getSpec();
  }

  /**
   * Throws LogSpecError on an invalid spec; then nothing changed (and a `logspec.refused` event
   * is emitted). `actor` names who asked, in the log and in events; default `local`.
   */
  setLogSpec(spec: string, actor?: string): void {
    this.logging.setSpec(spec, actor === undefined ? localActor : { name: actor, fields: { caller: actor } });
  }

  /** Subscribes to what the system reports (health changes, logspec changes, TLS reloads); returns the unsubscribe function. */
  onEvent(listener: OperationsEventListener): () => void {
    return this.events.subscribe(listener);
  }

  /** The serving certificate in use (updated on every reload), or null without TLS. */
  get servingCertificate(): CertificateSummary | null {
    return this.certificate;
  }

  /** Stops accepting, lets in-flight requests finish (at most graceMs), flushes metrics. Idempotent. */
  stop(graceMs: number = stopGraceMs): Promise<void> {
    this.stopping ??= (async () => {
      this.watcher?.stop();
      if (this.server) await this.server.close(graceMs);
      for (const extension of this.extensions) await extension.stop();
      this.runtime?.close();
      await this.metricsSystem.stop();
      this.loggingSystem.setObserver(null);
    })();
    return this.stopping;
  }
}

function describeActor(actor: RequestActor): string {
  return actor.certificateSubject ?? `anonymous ${actor.remoteAddress}`;
}
