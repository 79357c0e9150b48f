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
}

export const serviceMetricOptions = {
  fabricVersion: {
    name: 'fabric_version',
    help: 'The active version of Fabric.',
    labelNames: ['version'],
    statsdFormat: '%{#fqname}.%{version}',
  },
  loggingEntriesChecked: {
    namespace: 'logging',
    name: 'entries_checked',
    help: 'Number of log entries checked against the active logging level',
    labelNames: ['level'],
    statsdFormat: '%{#fqname}.%{level}',
  },
  loggingEntriesWritten: {
    namespace: 'logging',
    name: 'entries_written',
    help: 'Number of log entries that are written',
    labelNames: ['level'],
    statsdFormat: '%{#fqname}.%{level}',
  },
  logspecChanges: {
    namespace: 'logging',
    name: 'spec_changes',
    help: 'Number of times the logging specification was changed',
  },
  healthCheckDuration: {
    namespace: 'health',
    name: 'check_duration_seconds',
    help: 'Time one health checker took, in seconds',
    labelNames: ['component'],
    statsdFormat: '%{#fqname}.%{component}',
  },
  healthCheckStatus: {
    namespace: 'health',
    name: 'check_status',
    help: 'Result of the last run of a health checker: 1 passed, 0 failed',
    labelNames: ['component'],
    statsdFormat: '%{#fqname}.%{component}',
  },
  requests: {
    namespace: 'operations',
    name: 'requests',
    help: 'Requests answered by the operations server, by route and status code',
    labelNames: ['route', 'code'],
    statsdFormat: '%{#fqname}.%{route}.%{code}',
  },
  connectionsRefused: {
    namespace: 'operations',
    name: 'connections_refused',
    help: 'Connections closed on accept because the operations server had its maximum of connections open',
    doc: 'connections closed as soon as they were accepted, without an answer, because `operations.maxConnections` (orderer: `Operations.MaxConnections`) were open',
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
  };
}
