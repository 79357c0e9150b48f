/**
 * fabric-ops as a library: start the operations service inside any Node.js process,
 * register health checkers, create metrics, and get loggers ruled by the logging spec.
 */
import { OperationsSystem, type StartOptions } from './system';
import type * as FleetModule from './fleet';

export { OperationsSystem, stopGraceMs, type StartOptions, type HttpExtension } from './system';
export { loadConfig, type LoadConfigOptions, type LoadedConfig } from './config/load';
export type { NormalisedConfig, Dialect, HostPort, TlsConfig, MetricsProviderName, StatsdNetwork, ContainerRuntimeType } from './config/types';
export type { OperationsEvent, OperationsEventListener, OperationsEventType } from './events';
export type { CertificateSummary } from './tls/pem';
export type { HttpLimits } from './http/limits';
export {
  startKubernetesIntegration,
  kubernetesApiAccess,
  type KubernetesHost,
  type KubernetesIntegration,
  type KubernetesIntegrationOptions,
} from './kubernetes';
export { LoggingSystem, type LogFormat, type LoggingObserver } from './logging/logging-system';
export { parseLogSpec, formatLogSpec, levelFor, type LogSpec } from './logging/spec';
export type { Logger, LoggerFactory, LogLevel, LogFields } from './logging/types';
export type { HealthChecker, CheckResult, HealthReport } from './health/types';
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

/** Starts an operations system from a config object, a file, or the environment as the command does. */
export function startOperationsSystem(options: StartOptions = {}): Promise<OperationsSystem> {
  return OperationsSystem.start(options);
}

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
