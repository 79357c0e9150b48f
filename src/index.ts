/**
 * fabric-ops as a library: start the operations service inside any Node.js process,
 * register health checkers, create metrics, and get loggers ruled by the logging spec.
 */
import type { StartOptions } from './system';
import type * as FleetModule from './fleet';

export { startOperationsSystem, OperationsSystem, stopGraceMs, type StartOptions, type HttpExtension } from './system';
export { loadConfig, type LoadConfigOptions, type LoadedConfig } from './config/load';
export type { NormalisedConfig, Dialect, HostPort, TlsConfig, MetricsProviderName, StatsdNetwork, ContainerRuntimeType } from './config/types';
export type { OperationsEvent, OperationsEventListener, OperationsEventType } from './events';
export type { CertificateSummary } from './tls/pem';
export type { HttpLimits } from './http/limits';
export { startKubernetesIntegration, type KubernetesHost, type KubernetesIntegration, type KubernetesIntegrationOptions } from './kubernetes';
export { LoggingSystem, type LoggingSystemOptions, type LogFormat, type LoggingObserver, type LogSpecActor, type SpecChange } from './logging/logging-system';
export { parseLogSpec, formatLogSpec, levelFor, type LogSpec } from './logging/spec';
export type { Logger, LoggerFactory, LogLevel, LogFields } from './logging/types';
export type { HealthChecker, CheckResult, HealthReport, FailedCheck } from './health/types';
export type { HealthService, HealthServiceOptions, HealthMetrics } from './health/health-service';
export type { Clock } from './time';
export type { VersionDocument } from './version';
export type { MetricsProvider, Counter, Gauge, Histogram, MetricOptions, HistogramOptions, LabelValues } from './metrics/types';
export {
  FabricOpsError,
  ConfigError,
  LogSpecError,
  TlsMaterialError,
  DedicatedCaError,
  ListenError,
  InvalidCheckerNameError,
  DuplicateCheckerError,
  MetricOptionsError,
  MetricLabelsError,
  MetricValueError,
  KubernetesSetupError,
} from './errors';

// Fleet mode (README, "Fleet"): loaded on first use, so that importing the library does not load zod.
export type {
  FleetConfig,
  FleetService,
  FleetExtensionOptions,
  FleetEvent,
  FleetEventListener,
  FleetNode,
  NodeSelector,
  FleetHealthReport,
  FleetVersionReport,
  SetLogSpecRequest,
  SetLogSpecAnswer,
} from './fleet';

/** Reads and checks a fleet configuration file; throws ConfigError naming the file and key. */
export function loadFleetConfig(file: string): FleetModule.FleetConfig {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- fleet mode on first use
  return (require('./fleet') as typeof FleetModule).loadFleetConfig(file);
}

/** For `startOperationsSystem({ extensions: [fleetExtension(config)] })`: serves /fleet/* (needs TLS and client CAs on the server). */
export function fleetExtension(config: FleetModule.FleetConfig, options?: FleetModule.FleetExtensionOptions): NonNullable<StartOptions['extensions']>[number] {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- fleet mode on first use
  return (require('./fleet') as typeof FleetModule).fleetExtension(config, options);
}
