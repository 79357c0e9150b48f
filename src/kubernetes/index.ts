import type { NormalisedConfig } from '../config/types';
import { ConfigError } from '../errors';
import type { OperationsEvent, OperationsEventListener } from '../events';
import type { Logger } from '../logging/types';
import type { MetricsProvider } from '../metrics/types';
import type { CertificateSummary } from '../tls/pem';
import { createConfigMapApi, createEventSink, loadClientNode, loadKubeConfig } from './client';
import { LogSpecConfigMapWatcher } from './logspec-configmap';
import { EventRecorder, type EventSink, type EventType, type PodReference } from './recorder';

export { kubernetesApiAccess } from './access';
export { EventRecorder, recorderDefaults, type EventSink, type PodReference } from './recorder';
export { LogSpecConfigMapWatcher, type ConfigMapApi } from './logspec-configmap';

/** What the integration uses of OperationsSystem (it never reaches further in). */
export interface KubernetesHost {
  readonly config: NormalisedConfig;
  onEvent(listener: OperationsEventListener): () => void;
  setLogSpec(spec: string, actor?: string): void;
  getLogger(name: string): Logger;
  readonly metrics: MetricsProvider;
  readonly servingCertificate: CertificateSummary | null;
}

export interface KubernetesIntegrationOptions {
  /** Downward API (POD_NAME, POD_NAMESPACE, POD_UID, NODE_NAME) and credentials (KUBECONFIG, KUBERNETES_SERVICE_*). Default process.env. */
  env?: NodeJS.ProcessEnv;
  now?: () => number;
  /** How often the near-expiry check repeats; default daily. */
  expiryCheckIntervalMs?: number;
  /** Passed to the recorder (tests shorten them). */
  recorder?: { refillIntervalMs?: number; backoffMaxMs?: number; requestTimeoutMs?: number };
}

export interface KubernetesIntegration {
  /** Stops watching and recording; queued events are given up to `graceMs` to be written. */
  stop(graceMs?: number): Promise<void>;
}

const dayMs = 86_400_000;

/** The Event (type, reason, message) for a system event. */
export function describeForKubernetes(event: OperationsEvent): { type: EventType; reason: string; message: string } {
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
 * Starts what `config.kubernetes` turns on: Events on the pod, the logspec ConfigMap watch.
 * Returns null (and loads nothing) when neither is on. Throws ConfigError when the pod's
 * identity is missing, KubernetesSetupError when no credentials can be loaded; an API server
 * that cannot be reached is not an error (it is retried).
 */
export async function startKubernetesIntegration(host: KubernetesHost, options: KubernetesIntegrationOptions = {}): Promise<KubernetesIntegration | null> {
  const settings = host.config.kubernetes;
  const keys = host.config.keys;
  if (!settings || (!settings.events.enabled && settings.logspecConfigMap.name === '')) return null;
  const env = options.env ?? process.env;
  const now = options.now ?? Date.now;
  const logger = host.getLogger('operations.kubernetes');

  const podName = env.POD_NAME ?? '';
  const namespace = env.POD_NAMESPACE ?? '';
  const missing = [podName === '' ? 'POD_NAME' : '', namespace === '' ? 'POD_NAMESPACE' : ''].filter(Boolean);
  if (missing.length > 0) {
    const key = settings.events.enabled ? keys.kubernetesEventsEnabled : keys.kubernetesLogspecConfigMapName;
    throw new ConfigError([`${key}: needs ${missing.join(' and ')} in the environment (the downward API: fieldRef metadata.name and metadata.namespace)`]);
  }
  const pod: PodReference = { name: podName, namespace, ...(env.POD_UID ? { uid: env.POD_UID } : {}) };

  const k8s = await loadClientNode();
  const kubeConfig = loadKubeConfig(k8s, env);
  const stops: Array<(graceMs: number) => Promise<void> | void> = [];

  if (settings.events.enabled) {
    const dropped = host.metrics.newCounter({
      namespace: 'kubernetes',
      subsystem: 'events',
      name: 'dropped',
      help: 'Occurrences of Kubernetes events that were never recorded (queue full while the API server was unavailable, or refused)',
    });
    const sink: EventSink = createEventSink(k8s, kubeConfig);
    const recorder = new EventRecorder({ pod, sink, logger, dropped, now, ...(env.NODE_NAME ? { host: env.NODE_NAME } : {}), ...options.recorder });
    const record = (event: OperationsEvent): void => {
      const { type, reason, message } = describeForKubernetes(event);
      recorder.record(type, reason, message);
    };

    const warningDays = settings.events.certificateExpiryWarningDays;
    const checkExpiry = (): void => {
      const certificate = host.servingCertificate;
      if (!certificate || warningDays === 0) return;
      const left = Date.parse(certificate.notAfter) - now();
      if (left > warningDays * dayMs) return;
      const message =
        left <= 0
          ? `serving certificate "${certificate.subject}" expired at ${certificate.notAfter}`
          : `serving certificate "${certificate.subject}" expires at ${certificate.notAfter}, in ${Math.floor(left / dayMs)} days (warning from ${warningDays} days)`;
      recorder.record('Warning', 'CertificateExpiresSoon', message);
    };
    const unsubscribe = host.onEvent((event) => {
      record(event);
      if (event.type === 'tls.reloaded') checkExpiry();
    });
    checkExpiry();
    const timer = setInterval(checkExpiry, options.expiryCheckIntervalMs ?? dayMs);
    timer.unref();
    stops.push(async (graceMs) => {
      unsubscribe();
      clearInterval(timer);
      await recorder.drain(graceMs);
      recorder.stop();
    });
  }

  const { name, key } = settings.logspecConfigMap;
  if (name !== '') {
    const watcher = new LogSpecConfigMapWatcher({
      api: createConfigMapApi(k8s, kubeConfig, namespace, name),
      namespace,
      name,
      key,
      setLogSpec: (spec, actor) => host.setLogSpec(spec, actor),
      logger,
    });
    watcher.start();
    stops.unshift(() => watcher.stop());
  }

  logger.info(`Kubernetes integration on for pod ${namespace}/${podName}`, {
    events: settings.events.enabled,
    logspecConfigMap: name === '' ? null : `${namespace}/${name}#${key}`,
    server: kubeConfig.getCurrentCluster()?.server,
  });
  return {
    async stop(graceMs = 2000) {
      for (const stop of stops) await stop(graceMs);
    },
  };
}
