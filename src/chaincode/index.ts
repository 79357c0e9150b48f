/**
 * fabric-ops inside a Node.js chaincode run as a service (fabric-shim's server mode): the
 * operations endpoints (/metrics, /healthz, /logspec, /version) in the chaincode's own
 * process, with the transaction metrics, the chaincode server's health and the shim's
 * logging under the Fabric logging specification. Loaded as `fabric-ops/chaincode`; the rest
 * of fabric-ops does not depend on fabric-shim.
 */
import { performance } from 'node:perf_hooks';
import { ConfigError, DuplicateCheckerError, FabricOpsError, ListenError, LogSpecError, messageOf } from '../errors';
import type { HealthChecker } from '../health/types';
import { LoggingSystem, type LogFormat, type LogSpecActor } from '../logging/logging-system';
import { parseLogSpec, type LogSpec } from '../logging/spec';
import type { Logger } from '../logging/types';
import { startOperationsSystem, type OperationsSystem, type StartOptions } from '../system';
import { installServerHook, type StoppableServer } from './server-hook';
import { ChaincodeServerState } from './server-state';
import {
  chaincodeHealthSettings,
  chaincodeListenAddress,
  chaincodeMaxFunctionNames,
  type ChaincodeHealthOptions,
  type ChaincodeMetricsOptions,
} from './settings';
import { chooseChaincodeConfig } from './config-source';
import { MissingPeerDependencyError } from './errors';
import { ShimLogGovernor } from './shim-logging';
import type { ShimModule, ShimServerClass, WinstonLoggerModule } from './shim-types';
import { createTransactionMetrics, FunctionNames, TransactionInstrument } from './transactions';

export { chaincodeConfigVariable } from './config-source';
export { MissingPeerDependencyError } from './errors';
export {
  chaincodeEnv,
  chaincodeListenAddress,
  defaultRegistrationTimeoutMs,
  defaultStuckTimeoutMs,
  type ChaincodeHealthOptions,
  type ChaincodeMetricsOptions,
} from './settings';
export { defaultMaxFunctionNames, durationBuckets, maxFunctionNameLength, otherName, unknownName, type Outcome } from './transactions';
export { fabricLoggerName } from './logger-names';

/** The health checker's component name in /healthz. */
export const chaincodeComponent = 'chaincode';

export interface ChaincodeOperationsOptions extends Omit<StartOptions, 'logging'>, ChaincodeHealthOptions, ChaincodeMetricsOptions {
  /**
   * Called when the operations service cannot start (bad configuration, port in use); the
   * chaincode server then refuses to start too. Default: one `fabric-ops: <problem>` line per
   * problem on stderr, then exit 1.
   */
  onStartError?: (error: unknown) => void;
  /**
   * On SIGTERM or SIGINT: stop the chaincode server(s) and the operations server, then exit 0
   * (see `shutdown()`); a second signal exits 1 at once. Default true: without it a chaincode
   * run as PID 1 in a container ignores SIGTERM and is killed at the end of the grace period.
   * Set false when the embedding application handles signals itself (and calls `shutdown()`).
   */
  handleSignals?: boolean;
}

/** How long running transactions get to finish when the chaincode shuts down. */
export const shutdownTransactionGraceMs = 5000;

export interface ChaincodeOperations {
  /** Resolves once the operations server listens; rejects when it cannot start. */
  readonly ready: Promise<OperationsSystem>;
  /** The running system (metrics provider, URL); throws before `ready` has resolved. */
  readonly system: OperationsSystem;
  /** A logger ruled by the logging specification, usable at once. */
  getLogger(name: string): Logger;
  /** Adds a checker to /healthz (a database, an external API); before start it is registered at start. */
  registerChecker(component: string, checker: HealthChecker): void;
  /** Stops the operations server and gives fabric-shim its own server() and loggers back. */
  stop(): Promise<void>;
  /**
   * Stops the whole chaincode: waits for running transactions (at most 5 s), closes the
   * chaincode server(s) and their peer streams, then does `stop()`. What SIGTERM runs; it does
   * not exit the process.
   */
  shutdown(): Promise<void>;
}

/** Logging whose spec changes are passed on to fabric-shim's and fabric-contract-api's loggers. */
class ChaincodeLogging extends LoggingSystem {
  private listener: ((spec: LogSpec) => void) | null = null;

  onSpecChange(listener: (spec: LogSpec) => void): void {
    this.listener = listener;
  }

  override setSpec(spec: string, actor?: LogSpecActor): ReturnType<LoggingSystem['setSpec']> {
    const change = super.setSpec(spec, actor);
    this.listener?.(parseLogSpec(change.current));
    return change;
  }
}

function loggingFromEnvironment(env: NodeJS.ProcessEnv, stream: NodeJS.WritableStream | undefined): ChaincodeLogging {
  const spec = env.FABRIC_LOGGING_SPEC ?? 'info';
  const format: LogFormat = env.FABRIC_LOGGING_FORMAT === 'json' ? 'json' : 'text';
  try {
    return new ChaincodeLogging({ spec, format, ...(stream === undefined ? {} : { stream }) });
  } catch (error) {
    if (error instanceof LogSpecError) throw new LogSpecError(`FABRIC_LOGGING_SPEC: ${error.message}`);
    throw error;
  }
}

/**
 * The default when the operations service cannot start: its problems as `fabric-ops:` lines,
 * then exit 1 at once. Otherwise the error would reach fabric-shim's command line, which prints
 * its whole usage text and a stack trace after it, as if the command line were wrong.
 */
function reportStartError(error: unknown): void {
  let lines: readonly string[];
  if (error instanceof ConfigError) lines = error.problems;
  else if (error instanceof ListenError) {
    lines = [
      `${error.message}; the chaincode's operations server needs an address of its own: set CORE_OPERATIONS_LISTENADDRESS (default ${chaincodeListenAddress})`,
    ];
  } else lines = [messageOf(error)];
  for (const line of lines) process.stderr.write(`fabric-ops: ${line}\n`);
  process.exit(1);
}

/** fabric-shim and fabric-contract-api are optional peer dependencies: loaded only when enabled. */
function load<T>(id: string): T {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- an optional dependency, loaded on demand (an import would need it in every process)
  return require(id) as T;
}

/** fabric-shim's range in package.json's peerDependencies, for the install hint (a test keeps them equal). */
const shimPeerRange = '^2.5.8';

/** fabric-shim itself: a MissingPeerDependencyError when it is not installed (not a module it needs). */
function loadShim<T>(id: string): T {
  try {
    return load<T>(id);
  } catch (error) {
    if (isMissing(error, 'fabric-shim')) throw new MissingPeerDependencyError('fabric-shim', shimPeerRange);
    throw error;
  }
}

/** True when `error` says that `name` itself (not something it requires) cannot be found. */
function isMissing(error: unknown, name: string): boolean {
  const { code, message } = error as NodeJS.ErrnoException;
  return code === 'MODULE_NOT_FOUND' && typeof message === 'string' && message.startsWith(`Cannot find module '${name}'`);
}

function loadOptional<T>(id: string): T | null {
  try {
    return load<T>(id);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'MODULE_NOT_FOUND') return null;
    throw error;
  }
}

let enabled = false;

/**
 * Starts the operations service in this chaincode process and hooks fabric-shim. Call it once,
 * before fabric-shim's server is created: at the top of the module that exports the
 * contracts (`fabric-chaincode-node server` loads it first), or before `shim.server(...)`.
 */
export function enableChaincodeOperations(options: ChaincodeOperationsOptions = {}): ChaincodeOperations {
  if (enabled) throw new FabricOpsError('fabric-ops chaincode operations are already enabled in this process');
  const env = options.env ?? process.env;
  const settings = chaincodeHealthSettings(options, env);
  const maxFunctionNames = chaincodeMaxFunctionNames(options, env);
  const configChoice = chooseChaincodeConfig(options, env);
  const logging = loggingFromEnvironment(env, options.logStream);
  const governor = new ShimLogGovernor(parseLogSpec(logging.getSpec()));
  logging.onSpecChange((spec) => governor.setSpec(spec));

  const shim = loadShim<ShimModule>('fabric-shim');
  const ServerClass = loadShim<ShimServerClass>('fabric-shim/lib/server.js');
  governor.install('shim', loadShim<WinstonLoggerModule>('fabric-shim/lib/logger.js'));
  const contractApiLogger = loadOptional<WinstonLoggerModule>('fabric-contract-api/lib/logger.js');
  if (contractApiLogger !== null) governor.install('contractapi', contractApiLogger);
  enabled = true;

  const instrument = new TransactionInstrument(new FunctionNames(maxFunctionNames));
  const state = new ChaincodeServerState(settings);
  const pendingCheckers = new Map<string, HealthChecker>();
  let system: OperationsSystem | null = null;

  const { onStartError, handleSignals: _h, registrationTimeoutMs: _r, stuckTimeoutMs: _s, maxFunctionNames: _m, ...startOptions } = options;
  const chaincodeLogger = logging.getLogger('chaincode');
  if (configChoice.warning !== undefined) {
    // Always seen: written as a warning even when the logging spec hides warnings.
    if (chaincodeLogger.isEnabled('warn')) chaincodeLogger.warn(configChoice.warning);
    else (options.logStream ?? process.stderr).write(`fabric-ops: warning: ${configChoice.warning}\n`);
  }
  const ready = startOperationsSystem({
    ...startOptions,
    ...(configChoice.configFile === undefined ? {} : { configFile: configChoice.configFile }),
    env: configChoice.env,
    logging,
  }).then(async (started) => {
    try {
      instrument.attach(createTransactionMetrics(started.metrics));
      started.registerChecker(chaincodeComponent, { check: async () => state.check(instrument.oldest()) });
      for (const [component, checker] of pendingCheckers) started.registerChecker(component, checker);
    } catch (error) {
      await started.stop(0);
      throw error;
    }
    pendingCheckers.clear();
    system = started;
    return started;
  });
  ready.catch(onStartError ?? reportStartError);

  const servers = new Set<StoppableServer>();
  const uninstallHook = installServerHook(shim, ServerClass, {
    state,
    servers,
    logger: chaincodeLogger,
    wrapChaincode: (chaincode) => instrument.wrap(chaincode),
    beforeStart: async () => {
      await ready;
    },
  });

  let shuttingDown: Promise<void> | null = null;
  const stop = async (): Promise<void> => {
    process.off('SIGTERM', onSignal);
    process.off('SIGINT', onSignal);
    uninstallHook();
    governor.uninstall();
    enabled = false;
    const running = await ready.catch(() => null);
    await running?.stop();
  };
  const shutdown = (): Promise<void> => {
    shuttingDown ??= (async () => {
      await untilIdle(instrument, shutdownTransactionGraceMs);
      for (const server of [...servers]) server.forceStop();
      await stop();
    })();
    return shuttingDown;
  };
  let signalled = false;
  function onSignal(signal: NodeJS.Signals): void {
    if (signalled) {
      chaincodeLogger.warn(`received ${signal} again; exiting now`);
      process.exit(1);
    }
    signalled = true;
    chaincodeLogger.info(
      `received ${signal}; stopping the chaincode server and the operations server (running transactions get up to ${shutdownTransactionGraceMs / 1000}s)`,
    );
    shutdown().then(
      () => {
        chaincodeLogger.info('stopped');
        process.exit(0);
      },
      (error: unknown) => {
        process.stderr.write(`fabric-ops: error while stopping: ${messageOf(error)}\n`);
        process.exit(1);
      },
    );
  }
  if (options.handleSignals ?? true) {
    process.on('SIGTERM', onSignal);
    process.on('SIGINT', onSignal);
  }

  return {
    ready,
    get system(): OperationsSystem {
      if (system === null) throw new FabricOpsError('the operations service has not started yet; await ready first');
      return system;
    },
    getLogger: (name) => logging.getLogger(name),
    registerChecker(component, checker) {
      if (system !== null) return system.registerChecker(component, checker);
      if (pendingCheckers.has(component) || component === chaincodeComponent) {
        throw new DuplicateCheckerError(`a health checker named "${component}" is already registered`);
      }
      pendingCheckers.set(component, checker);
    },
    stop,
    shutdown,
  };
}

/** Resolves once no transaction runs, or after `limitMs`. */
async function untilIdle(instrument: TransactionInstrument, limitMs: number): Promise<void> {
  const deadline = performance.now() + limitMs;
  while (instrument.oldest() !== undefined && performance.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
