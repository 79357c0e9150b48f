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
// LoggingSystem stays a class: StartOptions.logging takes one the embedding code made. Its observer
// (setObserver, LoggingObserver) is the system's wiring and not published.
export { LoggingSystem, type LoggingSystemOptions, type LogFormat, type LogSpecActor, type SpecChange, type OperationsLogging } from './logging/logging-system';
export { parseLogSpec, formatLogSpec, levelFor, type LogSpec } from './logging/spec';
export type { Logger, LoggerFactory, LogLevel, LogFields } from './logging/types';
// OperationsSystem.health is an OperationsHealth; the HealthService class behind it is internal.
export type { HealthChecker, CheckResult, HealthReport, FailedCheck, OperationsHealth } from './health/types';
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
