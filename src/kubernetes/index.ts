import { environmentSchema, readEnvironment } from '../config/environment';
import type { NormalisedConfig } from '../config/types';
import { ConfigError } from '../errors';
import type { OperationsEvent, OperationsEventListener } from '../events';
import type { Logger } from '../logging/types';
import type { MetricsProvider } from '../metrics/types';
import type { CertificateSummary } from '../tls/pem';
import { realScheduler, type Clock, type Scheduler } from '../time';
import { createConfigMapApi, createEventSink, loadClientNode, loadKubeConfig } from './client';
import { LogSpecConfigMapWatcher } from './logspec-configmap';
import { createTransport } from './transport';

export { connectKubernetes, type KubernetesConnection } from './connection';
export { createListWatchApi, listPageSize, type ListWatchTarget } from './list-watch-api';
export { Reflector, type ListWatchApi, type ObjectWithMetadata, type ReflectorHandler, type ReflectorOptions, type WatchEventType } from './reflector';
export type { KubernetesTransport, WatchEnd, WatchStream } from './transport-options';
import type { TransportOptions } from './transport-options';
import { EventRecorder, type EventSink, type EventType, type PodReference } from './recorder';

/** What the integration uses of OperationsSystem (it never reaches further in). */
export interface KubernetesHost {
  readonly config: NormalisedConfig;
  onEvent(listener: OperationsEventListener): () => void;
  setLogSpec(spec: string, actor?: string): void;
  /**
   * The active spec, normalised (OperationsSystem has it). Optional for hosts written before it
   * existed: without it every new ConfigMap value is applied, even one equal to the active spec.
   */
  getLogSpec?(): string;
  getLogger(name: string): Logger;
  readonly metrics: MetricsProvider;
  readonly servingCertificate: CertificateSummary | null;
  /** Companion mode (OperationsSystem has it): the node's log level, which the logspec ConfigMap then declares instead of setLogSpec. */
  readonly nodeLogSpec?: NodeLogSpecTarget | null;
}

/** The node's log level in companion mode (src/companion/logspec.ts): the ConfigMap's spec goes there, and its Events come here. */
export interface NodeLogSpecTarget {
  /** Declares the spec the node is to have; throws LogSpecError when invalid. */
  declare(spec: string, actor: string): void;
  /** The declared spec, normalised ('' before any). */
  declared(): string;
  /** Where its Events go from now on (null: nowhere). */
  recordEventsWith(record: ((type: EventType, reason: string, message: string) => void) | null): void;
}

export interface KubernetesIntegrationOptions {
  /** Downward API (POD_NAME, POD_NAMESPACE, POD_UID, NODE_NAME) and credentials (KUBECONFIG, KUBERNETES_SERVICE_*). Default process.env. */
  env?: NodeJS.ProcessEnv;
  // Public API (src/index.ts), so a function still, not a Clock: it becomes the clock of the integration's Scheduler.
  now?: () => number;
  /** How often the near-expiry check repeats; default daily. */
  expiryCheckIntervalMs?: number;
  /** Passed to the recorder (tests shorten them). */
  recorder?: { refillIntervalMs?: number; backoffMaxMs?: number; requestTimeoutMs?: number };
  /** HTTP limits (tests shorten the watch's inactivity timeout, 30 s by default as in client-node). */
  transport?: TransportOptions;
}

/** What was checked before the operations server listens; `start` then starts the integration. */
export interface PreparedKubernetesIntegration {
  start(host: KubernetesHost): KubernetesIntegration;
}

export interface KubernetesIntegration {
  /**
   * Records an Event on the pod, as the integration's own are (aggregated, rate-limited, queued
   * off the caller's path): for other parts of fabric-ops (fleet mode's writes and put-backs).
   * Does nothing when Events are off (`kubernetes.events.enabled`) or after `stop`. Never throws, never waits.
   */
  record(type: EventType, reason: string, message: string): void;
  /** Stops watching and recording; queued events are given up to `graceMs` to be written. */
  stop(graceMs?: number): Promise<void>;
}

const dayMs = 86_400_000;

/** The Event (type, reason, message) for a system event. */
function describeForKubernetes(event: OperationsEvent): { type: EventType; reason: string; message: string } {
  switch (event.type) {
    case 'health.failing':
      return { type: 'Warning', reason: 'HealthCheckFailed', message: `health check ${event.component} is failing: ${event.reason}` };
    case 'health.recovered':
      return { type: 'Normal', reason: 'HealthCheckRecovered', message: `health check ${event.component} is ok again (was failing: ${event.previousReason})` };
    case 'logspec.changed':
      return {
        type: 'Normal',
        reason: 'LogSpecChanged',
        message: `logging specification changed from '${event.previous}' to '${event.current}' by ${event.actor}`,
      };
    case 'logspec.refused':
      return { type: 'Warning', reason: 'LogSpecRefused', message: `${event.reason} (from ${event.actor}); the active specification stays '${event.active}'` };
    case 'tls.reloaded':
      return {
        type: 'Normal',
        reason: 'CertificateReloaded',
        message: `serving certificate reloaded: subject "${event.subject}", valid until ${event.notAfter}`,
      };
    case 'tls.reloadRefused':
      return { type: 'Warning', reason: 'CertificateReloadRefused', message: `TLS material not reloaded, keeping the current certificate: ${event.reason}` };
  }
}

/**
 * Checks what `config.kubernetes` turns on, before anything listens: the pod's identity (a
 * ConfigError naming the key) and the credentials (KubernetesSetupError). Returns null (and
 * loads nothing) when neither Events nor the ConfigMap is on. An API server that cannot be
 * reached is not an error (it is retried).
 */
export async function prepareKubernetesIntegration(
  config: NormalisedConfig,
  options: KubernetesIntegrationOptions = {},
): Promise<PreparedKubernetesIntegration | null> {
  const settings = config.kubernetes;
  const keys = config.keys;
  if (!settings || (!settings.events.enabled && settings.logspecConfigMap.name === '')) return null;
  const env = options.env ?? process.env;
  // Node's timers with the caller's clock, if any: the one Scheduler of the recorder and the expiry check.
  const now = options.now;
  const scheduler: Scheduler = now === undefined ? realScheduler : { ...realScheduler, now: () => now() };

  const { podName, podNamespace: namespace, podUid, nodeName } = readEnvironment(env, ['podName', 'podNamespace', 'podUid', 'nodeName']);
  const missing = [podName === '' ? environmentSchema.podName.env : '', namespace === '' ? environmentSchema.podNamespace.env : ''].filter(Boolean);
  if (missing.length > 0) {
    const key = settings.events.enabled ? keys.kubernetesEventsEnabled : keys.kubernetesLogspecConfigMapName;
    throw new ConfigError([`${key}: needs ${missing.join(' and ')} in the environment (the downward API: fieldRef metadata.name and metadata.namespace)`]);
  }
  const pod: PodReference = { name: podName, namespace, ...(podUid !== '' ? { uid: podUid } : {}) };

  const k8s = await loadClientNode();
  const kubeConfig = loadKubeConfig(k8s, env);
  // One timeout for an Event write: the transport gives up when the recorder does (a request left
  // running past the recorder's own limit could land after its retry, and record the Event twice).
  // FABRIC_OPS_KUBERNETES_WATCH_TIMEOUT_MS shortens the watch's inactivity cut for tests of the command.
  const transportOptions = options.transport ?? { watchInactivityTimeoutMs: readEnvironment(env, ['kubernetesWatchTimeout']).kubernetesWatchTimeout };
  const transport = createTransport(kubeConfig, { requestTimeoutMs: options.recorder?.requestTimeoutMs, ...transportOptions });
  return {
    start: (host) => startPrepared(host, { settings, pod, nodeName, transport, server: kubeConfig.getCurrentCluster()?.server, scheduler, options }),
  };
}

/** Checks and starts in one step (for embedding code that has already started its system). */
export async function startKubernetesIntegration(host: KubernetesHost, options: KubernetesIntegrationOptions = {}): Promise<KubernetesIntegration | null> {
  const prepared = await prepareKubernetesIntegration(host.config, options);
  return prepared === null ? null : prepared.start(host);
}

/** What prepareKubernetesIntegration checked and loaded, for the steps of the start. */
interface StartContext {
  settings: NonNullable<NormalisedConfig['kubernetes']>;
  pod: PodReference;
  /** The Kubernetes node's name (NODE_NAME; '' when unset), for the Events' `source.host`. */
  nodeName: string;
  transport: ReturnType<typeof createTransport>;
  server: string | undefined;
  scheduler: Scheduler;
  options: KubernetesIntegrationOptions;
}

/** A started part of the integration: how to stop it, given the grace for queued work. */
type Stop = (graceMs: number) => Promise<void> | void;

function startPrepared(host: KubernetesHost, context: StartContext): KubernetesIntegration {
  const { settings, pod } = context;
  const logger = host.getLogger('operations.kubernetes');
  const events = settings.events.enabled ? startEvents(host, context, logger) : null;
  const watcherStop = startLogSpecWatcher(host, context, logger, events?.recordRefusal);
  const nodeLogSpec = host.nodeLogSpec ?? null;
  nodeLogSpec?.recordEventsWith(events?.record ?? null);
  const nodeEventsStop: Stop | undefined = nodeLogSpec === null ? undefined : () => nodeLogSpec.recordEventsWith(null);
  // The watcher stops first, so that nothing it refuses is recorded after the recorder drained.
  const stops = [watcherStop, nodeEventsStop, events?.stop].filter((stop): stop is Stop => stop !== undefined);

  const { name, key } = settings.logspecConfigMap;
  logger.info(`Kubernetes integration on for pod ${pod.namespace}/${pod.name}`, {
    events: settings.events.enabled,
    logspecConfigMap: name === '' ? null : `${pod.namespace}/${name}#${key}`,
    logspecTarget: nodeLogSpec === null ? 'fabric-ops' : 'node',
    server: context.server,
  });
  return {
    record: (type, reason, message) => events?.record(type, reason, message),
    async stop(graceMs = 2000) {
      for (const stop of stops) await stop(graceMs);
    },
  };
}

/** Events: a recorder fed by the system's events and by the certificate's near-expiry check. */
function startEvents(
  host: KubernetesHost,
  context: StartContext,
  logger: Logger,
): { record: (type: EventType, reason: string, message: string) => void; recordRefusal: (message: string) => void; stop: Stop } {
  const { pod, nodeName, transport, scheduler, options } = context;
  const dropped = host.metrics.newCounter({
    namespace: 'kubernetes',
    subsystem: 'events',
    name: 'dropped',
    help: 'Occurrences of Kubernetes events that were never recorded (queue full while the API server was unavailable, or refused)',
  });
  const sink: EventSink = createEventSink(transport);
  const recorder = new EventRecorder({ pod, sink, logger, dropped, scheduler, ...(nodeName === '' ? {} : { host: nodeName }), ...options.recorder });
  const checkExpiry = certificateExpiryCheck(host, context.settings.events.certificateExpiryWarningDays, scheduler, (message) =>
    recorder.record('Warning', 'CertificateExpiresSoon', message),
  );
  const unsubscribe = host.onEvent((event) => {
    const { type, reason, message } = describeForKubernetes(event);
    recorder.record(type, reason, message);
    if (event.type === 'tls.reloaded') checkExpiry();
  });
  checkExpiry();
  const timer = scheduler.setInterval(checkExpiry, options.expiryCheckIntervalMs ?? dayMs);
  return {
    record: (type, reason, message) => recorder.record(type, reason, message),
    recordRefusal: (message) => recorder.record('Warning', 'LogSpecRefused', message),
    stop: async (graceMs) => {
      unsubscribe();
      timer.cancel();
      await recorder.drain(graceMs);
      recorder.stop();
    },
  };
}

/** Calls `warn` when the serving certificate expires within `warningDays` (0: never), or has expired. */
function certificateExpiryCheck(host: KubernetesHost, warningDays: number, clock: Clock, warn: (message: string) => void): () => void {
  return () => {
    const certificate = host.servingCertificate;
    if (!certificate || warningDays === 0) return;
    const left = Date.parse(certificate.notAfter) - clock.now();
    if (left > warningDays * dayMs) return;
    warn(
      left <= 0
        ? `serving certificate "${certificate.subject}" expired at ${certificate.notAfter}`
        : `serving certificate "${certificate.subject}" expires at ${certificate.notAfter}, in ${Math.floor(left / dayMs)} days (warning from ${warningDays} days)`,
    );
  };
}

/** The logspec ConfigMap watcher, when a ConfigMap is named; refusals also become Events when those are on. */
function startLogSpecWatcher(
  host: KubernetesHost,
  context: StartContext,
  logger: Logger,
  recordRefusal: ((message: string) => void) | undefined,
): Stop | undefined {
  const { name, key } = context.settings.logspecConfigMap;
  if (name === '') return undefined;
  const { namespace } = context.pod;
  const watcher = new LogSpecConfigMapWatcher({
    api: createConfigMapApi(context.transport, namespace, name),
    namespace,
    name,
    key,
    // Companion mode: the spec is the node's (declared, and applied again when the node restarts).
    setLogSpec: (spec, actor) => (host.nodeLogSpec ? host.nodeLogSpec.declare(spec, actor) : host.setLogSpec(spec, actor)),
    getLogSpec: () => (host.nodeLogSpec ? host.nodeLogSpec.declared() : (host.getLogSpec?.() ?? '')),
    ...(recordRefusal ? { onRefused: recordRefusal } : {}),
    logger,
  });
  watcher.start();
  return () => watcher.stop();
}
