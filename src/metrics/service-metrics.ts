import type { Counter, Gauge, Histogram, MetricsProvider } from './types';

/** The operations service's own metrics; every one is documented in the README (Metrics). */
export interface ServiceMetrics {
  /** Labels: level. Every log call, whatever the active level (Fabric's logging_entries_checked). */
  loggingEntriesChecked: Counter;
  /** Labels: level. Log calls that were written (Fabric's logging_entries_written). */
  loggingEntriesWritten: Counter;
  /** Successful changes of the logging specification (PUT /logspec or the library call). */
  logspecChanges: Counter;
  /** Labels: component. Seconds one health checker took. */
  healthCheckDuration: Histogram;
  /** Labels: component. 1 when the checker's last run passed, 0 when it failed. */
  healthCheckStatus: Gauge;
  /** Labels: route, code. Requests answered by the operations server. */
  requests: Counter;
  /** Connections closed on accept because operations.maxConnections were open. */
  connectionsRefused: Counter;
  /** Certificate reloads that failed (refused files or material, or an exception); the old material kept serving. */
  tlsReloadFailures: Counter;
  /** Label certificate: `server` (the serving certificate) or `client_ca` (the earliest among the client root CAs). */
  tlsCertificateExpiry: Gauge;
}

/**
 * `help` is the Prometheus HELP text (Fabric's own for Fabric's metrics); `doc`, where it says
 * more, is the meaning shown in the README's metrics table (scripts/gendocs.ts, `make docs`).
 */
export const serviceMetricOptions = {
  fabricVersion: {
    name: 'fabric_version',
    help: 'The active version of Fabric.',
    doc: 'always 1; `version` is the fabric-ops package version (Fabric: the Fabric version)',
    labelNames: ['version'],
    statsdFormat: '%{#fqname}.%{version}',
  },
  loggingEntriesChecked: {
    namespace: 'logging',
    name: 'entries_checked',
    help: 'Number of log entries checked against the active logging level',
    doc: "log calls made, whatever the active logging spec (Fabric's `logging_entries_checked`)",
    labelNames: ['level'],
    statsdFormat: '%{#fqname}.%{level}',
  },
  loggingEntriesWritten: {
    namespace: 'logging',
    name: 'entries_written',
    help: 'Number of log entries that are written',
    doc: "log calls the active spec let through and that were written (Fabric's `logging_entries_written`)",
    labelNames: ['level'],
    statsdFormat: '%{#fqname}.%{level}',
  },
  logspecChanges: {
    namespace: 'logging',
    name: 'spec_changes',
    help: 'Number of times the logging specification was changed',
    doc: 'successful changes of the logging spec (`PUT /logspec` or `setLogSpec()`)',
  },
  healthCheckDuration: {
    namespace: 'health',
    name: 'check_duration_seconds',
    help: 'Time one health checker took, in seconds',
    doc: 'time one health checker took, one observation per checker per `/healthz` run',
    labelNames: ['component'],
    statsdFormat: '%{#fqname}.%{component}',
  },
  healthCheckStatus: {
    namespace: 'health',
    name: 'check_status',
    help: 'Result of the last run of a health checker: 1 passed, 0 failed',
    doc: "result of the checker's last run: 1 passed, 0 failed (or timed out)",
    labelNames: ['component'],
    statsdFormat: '%{#fqname}.%{component}',
  },
  requests: {
    namespace: 'operations',
    name: 'requests',
    help: 'Requests answered by the operations server, by route and status code',
    doc: 'requests answered by the operations server; `route` is the matched route (`/logspec`, `/healthz`, `/version`, `/metrics`; in StatsD without its slash: `healthz`) or `unmatched`, `code` the status code',
    labelNames: ['route', 'code'],
    statsdFormat: '%{#fqname}.%{route}.%{code}',
  },
  connectionsRefused: {
    namespace: 'operations',
    name: 'connections_refused',
    help: 'Connections closed on accept because the operations server had its maximum of connections open',
    doc: 'connections closed as soon as they were accepted, without an answer, because `operations.maxConnections` (orderer: `Operations.MaxConnections`) were open and none could be closed for them, or their client address held its share of them',
  },
  tlsReloadFailures: {
    namespace: 'operations',
    subsystem: 'tls',
    name: 'reload_failures',
    help: 'Reloads of the TLS certificate, key or client CAs that failed; the current material kept serving',
    doc: 'changed certificate, key or client-CA files that could not be loaded or were refused, or an error while reloading; counted once per distinct failure, as it is logged; the current material keeps serving',
  },
  tlsCertificateExpiry: {
    namespace: 'operations',
    subsystem: 'tls',
    name: 'certificate_expiry_timestamp_seconds',
    help: 'notAfter of the serving certificate (certificate="server") and the earliest notAfter among the client root CAs (certificate="client_ca"), in seconds since the epoch',
    doc: 'when the serving certificate (`certificate="server"`) and the first-expiring client root CA (`certificate="client_ca"`) expire, in seconds since the epoch; set at start and on every reload, only with TLS; alert on `... - time() < 14 * 86400`',
    labelNames: ['certificate'],
    statsdFormat: '%{#fqname}.%{certificate}',
  },
} as const;

/**
 * Creates the service's metrics on any provider, and sets `fabric_version{version}` to 1
 * (StatsD: `fabric_version.<version>` with `.` made `_`).
 */
export function createServiceMetrics(provider: MetricsProvider, version: string): ServiceMetrics {
  provider.newGauge(serviceMetricOptions.fabricVersion).with({ version }).set(1);
  return {
    loggingEntriesChecked: provider.newCounter(serviceMetricOptions.loggingEntriesChecked),
    loggingEntriesWritten: provider.newCounter(serviceMetricOptions.loggingEntriesWritten),
    logspecChanges: provider.newCounter(serviceMetricOptions.logspecChanges),
    healthCheckDuration: provider.newHistogram(serviceMetricOptions.healthCheckDuration),
    healthCheckStatus: provider.newGauge(serviceMetricOptions.healthCheckStatus),
    requests: provider.newCounter(serviceMetricOptions.requests),
    connectionsRefused: provider.newCounter(serviceMetricOptions.connectionsRefused),
    tlsReloadFailures: provider.newCounter(serviceMetricOptions.tlsReloadFailures),
    tlsCertificateExpiry: provider.newGauge(serviceMetricOptions.tlsCertificateExpiry),
  };
}
