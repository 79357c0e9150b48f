/**
 * fabric-ops inside a Node.js chaincode run as a service (fabric-shim's server mode): the
 * operations endpoints (/metrics, /healthz, /logspec, /version) in the chaincode's own
 * process, with the transaction metrics, the chaincode server's health and the shim's
 * logging under the Fabric logging specification. Loaded as `fabric-ops/chaincode`; the rest
 * of fabric-ops does not depend on fabric-shim.
 */
import path from 'node:path';
import { ConfigError, DuplicateCheckerError, FabricOpsError, ListenError, LogSpecError, messageOf } from '../errors';
import type { HealthChecker } from '../health/types';
import { LoggingSystem, type LogFormat, type LogSpecActor } from '../logging/logging-system';
import { parseLogSpec, type LogSpec } from '../logging/spec';
import type { Logger } from '../logging/types';
import { sleep } from '../retry';
import { startOperationsSystem, type OperationsSystem, type StartOptions } from '../system';
import { keepAliveScheduler, monotonicClock } from '../time';
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
import { chooseShim, duplicateShimNote, duplicateShimWarning, loadedShimRoots, shimPackageRoot } from './shim-copies';
import { ShimLogGovernor } from './shim-logging';
import type { ShimModule, ShimServerClass, WinstonLoggerModule } from './shim-types';
import { createTransactionMetrics, FunctionNames, TransactionInstrument } from './transactions';
import { handleStopSignals } from '../stop-signals';

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
   * problem on stderr, then exit 1. Problems with the settings the call itself reads (the
   * FABRIC_OPS_CHAINCODE_* variables, FABRIC_CFG_PATH, FABRIC_LOGGING_SPEC) come here first too,
   * and are then thrown by enableChaincodeOperations() when this returns.
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
 * its whole usage text and a stack trace before it, as if the command line were wrong.
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

/**
 * The settings read when the call is made (the health and metrics settings, where the operations
 * configuration comes from, FABRIC_LOGGING_SPEC). A problem with them goes to `onStartError`
 * (by default: one `fabric-ops:` line each, exit 1) before it is thrown: thrown alone from the
 * chaincode's module, it would reach fabric-shim's command line, which prints its usage text and a
 * stack trace first (issue 30 item 12). Every problem is named, not only the first.
 */
function readSettings(options: ChaincodeOperationsOptions, env: NodeJS.ProcessEnv) {
  const errors: Array<ConfigError | LogSpecError> = [];
  const attempt = <T>(read: () => T): T | undefined => {
    try {
      return read();
    } catch (error) {
      if (!(error instanceof ConfigError || error instanceof LogSpecError)) throw error;
      errors.push(error);
      return undefined;
    }
  };
  const health = attempt(() => chaincodeHealthSettings(options, env));
  const maxFunctionNames = attempt(() => chaincodeMaxFunctionNames(options, env));
  const configChoice = attempt(() => chooseChaincodeConfig(options, env));
  const logging = attempt(() => loggingFromEnvironment(env, options.logStream));
  if (health === undefined || maxFunctionNames === undefined || configChoice === undefined || logging === undefined) {
    const error = errors.length === 1 ? (errors[0] as ConfigError | LogSpecError) : new ConfigError(errors.flatMap(problemsOf));
    (options.onStartError ?? reportStartError)(error);
    throw error;
  }
  return { health, maxFunctionNames, configChoice, logging };
}

function problemsOf(error: ConfigError | LogSpecError): readonly string[] {
  return error instanceof ConfigError ? error.problems : [error.message];
}

/** fabric-shim and fabric-contract-api are optional peer dependencies: loaded only when enabled. */
function load<T>(id: string): T {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- an optional dependency, loaded on demand (an import would need it in every process)
  return require(id) as T;
}

/** fabric-shim's range in package.json's peerDependencies, for the install hint (a test keeps them equal). */
const shimPeerRange = '^2.5.8';

/** The modules of fabric-ops's process: Node's require.cache (a test runner gives its own registry there). */
function moduleCache(): Readonly<Record<string, unknown>> {
  return require.cache;
}

/** The fabric-shim package folder that node resolves from `dir`, or null when there is none. */
function resolveShimFrom(dir: string): string | null {
  let main: string;
  try {
    main = require.resolve('fabric-shim', { paths: [dir] });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'MODULE_NOT_FOUND') return null;
    throw error;
  }
  return shimPackageRoot(main) ?? path.dirname(main);
}

/** The fabric-shim the chaincode runs (shim-copies.ts): a MissingPeerDependencyError when there is none. */
function locateShim(): string {
  const choice = chooseShim({
    loaded: loadedShimRoots(moduleCache()),
    mainFile: require.main?.filename ?? process.argv[1],
    ownDir: __dirname,
    resolve: resolveShimFrom,
  });
  if (choice === null) throw new MissingPeerDependencyError('fabric-shim', shimPeerRange);
  return choice.root;
}

/** fabric-contract-api's logger module as the fabric-shim at `shimRoot` finds it, or null without one. */
function loadContractApiLogger(shimRoot: string): WinstonLoggerModule | null {
  let file: string;
  try {
    file = require.resolve('fabric-contract-api/lib/logger.js', { paths: [shimRoot] });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'MODULE_NOT_FOUND') return null;
    throw error;
  }
  return load<WinstonLoggerModule>(file);
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
  const { health: settings, maxFunctionNames, configChoice, logging } = readSettings(options, env);

  // The copy of fabric-shim the chaincode runs, not necessarily the one beside fabric-ops.
  const shimRoot = locateShim();
  const shim = load<ShimModule>(shimRoot);
  const ServerClass = load<ShimServerClass>(path.join(shimRoot, 'lib', 'server.js'));
  const governor = governShimLoggers(shimRoot, logging);
  enabled = true;

  const instrument = new TransactionInstrument(new FunctionNames(maxFunctionNames));
  const state = new ChaincodeServerState(settings);
  const pendingCheckers = new Map<string, HealthChecker>();
  let system: OperationsSystem | null = null;

  const { onStartError, handleSignals: _h, registrationTimeoutMs: _r, stuckTimeoutMs: _s, maxFunctionNames: _m, ...startOptions } = options;
  const chaincodeLogger = logging.getLogger('chaincode');
  // Always seen: written as a warning even when the logging spec hides warnings.
  const warnAlways = (warning: string): void => {
    if (chaincodeLogger.isEnabled('warn')) chaincodeLogger.warn(warning);
    else (options.logStream ?? process.stderr).write(`fabric-ops: warning: ${warning}\n`);
  };
  if (configChoice.warning !== undefined) warnAlways(configChoice.warning);
  // Another copy of fabric-shim in the process: looked for now, once the operations server
  // listens, and at each health check until a chaincode server is seen.
  const otherShims = new OtherShims(shimRoot, warnAlways);
  otherShims.warn();
  const ready = startOperationsSystem({
    ...startOptions,
    ...(configChoice.configFile === undefined ? {} : { configFile: configChoice.configFile }),
    env: configChoice.env,
    logging,
  }).then(async (started) => {
    try {
      instrument.attach(createTransactionMetrics(started.metrics));
      started.registerChecker(chaincodeComponent, { check: async () => state.check(instrument.oldest(), () => otherShims.noServerNote()) });
      for (const [component, checker] of pendingCheckers) started.registerChecker(component, checker);
    } catch (error) {
      await started.stop(0);
      throw error;
    }
    pendingCheckers.clear();
    system = started;
    otherShims.warn();
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

  // The command's rule (src/stop-signals.ts): the first SIGTERM or SIGINT shuts down, a second exits at once.
  const signals = (options.handleSignals ?? true) ? handleStopSignals({ warn: (line) => chaincodeLogger.warn(line), exitCodeOnSecond: 1 }) : null;
  let shuttingDown: Promise<void> | null = null;
  const stop = async (): Promise<void> => {
    signals?.remove();
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
  signals?.stopWith((signal) => exitAfter(shutdown, signal, chaincodeLogger));

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

/** fabric-shim's and fabric-contract-api's winston loggers (the copies beside `shimRoot`) held to the logging spec, as it changes. */
function governShimLoggers(shimRoot: string, logging: ChaincodeLogging): ShimLogGovernor {
  const governor = new ShimLogGovernor(parseLogSpec(logging.getSpec()));
  logging.onSpecChange((spec) => governor.setSpec(spec));
  governor.install('shim', load<WinstonLoggerModule>(path.join(shimRoot, 'lib', 'logger.js')));
  const contractApiLogger = loadContractApiLogger(shimRoot);
  if (contractApiLogger !== null) governor.install('contractapi', contractApiLogger);
  return governor;
}

/** A stop signal's end of the process: `shutdown` (running transactions get their grace), then exit 0, or 1 if stopping failed. */
function exitAfter(shutdown: () => Promise<void>, signal: NodeJS.Signals, logger: Logger): void {
  logger.info(
    `received ${signal}; stopping the chaincode server and the operations server (running transactions get up to ${shutdownTransactionGraceMs / 1000}s)`,
  );
  shutdown().then(
    () => {
      logger.info('stopped');
      process.exit(0);
    },
    (error: unknown) => {
      process.stderr.write(`fabric-ops: error while stopping: ${messageOf(error)}\n`);
      process.exit(1);
    },
  );
}

/** Other copies of fabric-shim loaded in the process than the one hooked: one warning per copy. */
class OtherShims {
  private readonly warned = new Set<string>();

  constructor(
    private readonly shimRoot: string,
    private readonly warnAlways: (warning: string) => void,
  ) {}

  /** Warns of the copies not warned of yet; returns them all. */
  warn(): string[] {
    const others = loadedShimRoots(moduleCache()).filter((root) => root !== this.shimRoot);
    if (others.some((root) => !this.warned.has(root))) {
      for (const root of others) this.warned.add(root);
      this.warnAlways(duplicateShimWarning(this.shimRoot, others));
    }
    return others;
  }

  /** What the health check says when no chaincode server was seen: the other copies, a likely cause. */
  noServerNote(): string | undefined {
    const others = this.warn();
    return others.length === 0 ? undefined : duplicateShimNote(this.shimRoot, others);
  }
}

/** Resolves once no transaction runs, or after `limitMs`. */
async function untilIdle(instrument: TransactionInstrument, limitMs: number): Promise<void> {
  const deadline = monotonicClock.now() + limitMs;
  // Timers that hold the process open (keepAliveScheduler): an unref'd one could let it exit before the servers are stopped.
  while (instrument.oldest() !== undefined && monotonicClock.now() < deadline) await sleep(keepAliveScheduler, 50);
}
