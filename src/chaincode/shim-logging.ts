import { levelFor, type LogSpec } from '../logging/spec';
import { fabricLoggerName, knownLoggerNames, winstonLevel, type LoggerSource } from './logger-names';
import type { WinstonLogger, WinstonLoggerModule, WinstonTransport } from './shim-types';

type TransportClass = new (options: { handleExceptions: boolean }) => WinstonTransport;

/** Replaces each transport the logger shares with another logger by a new one of the same class. */
function ownTransports(logger: WinstonLogger): void {
  for (const transport of [...logger.transports]) {
    if (transport.parent === logger) continue;
    const Transport = transport.constructor as TransportClass;
    logger.remove(transport);
    logger.add(new Transport({ handleExceptions: transport.handleExceptions === true }));
  }
}

/**
 * Puts the winston loggers of fabric-shim and fabric-contract-api under the Fabric logging
 * specification. Neither package has a per-logger level API: their logger module keeps its
 * loggers private and resets a logger's level from CORE_CHAINCODE_LOGGING_LEVEL whenever
 * `getLogger(name)` is called again. So `getLogger` is wrapped (every logger created or
 * fetched afterwards gets the spec's level back), and the names the packages create when
 * they load are fetched once, which hands over the loggers that already exist.
 *
 * Their loggers also share one Console transport, and a winston transport filters by the
 * level of the first logger piped into it, whatever logger writes: so each governed logger
 * gets a Console transport of its own (same class, same options), and its level holds.
 */
export class ShimLogGovernor {
  private readonly governed = new Map<WinstonLogger, string>();
  private readonly restores: Array<() => void> = [];

  constructor(private spec: LogSpec) {}

  install(source: LoggerSource, loggerModule: WinstonLoggerModule): void {
    const original = loggerModule.getLogger;
    const governed = (name?: string): WinstonLogger => {
      const logger = original(name);
      this.govern(fabricLoggerName(source, name ?? ''), logger);
      return logger;
    };
    loggerModule.getLogger = governed;
    this.restores.push(() => {
      if (loggerModule.getLogger === governed) loggerModule.getLogger = original;
    });
    for (const name of knownLoggerNames[source]) governed(name);
  }

  /** Re-levels every governed logger; called after each change of the spec. */
  setSpec(spec: LogSpec): void {
    this.spec = spec;
    for (const [logger, name] of this.governed) this.apply(logger, name);
  }

  /** The Fabric names of the loggers governed so far, sorted. */
  names(): string[] {
    return [...new Set(this.governed.values())].sort();
  }

  /** Gives the packages their own getLogger back; loggers keep their current level. */
  uninstall(): void {
    for (const restore of this.restores.splice(0)) restore();
    this.governed.clear();
  }

  private govern(name: string, logger: WinstonLogger): void {
    if (!this.governed.has(logger)) ownTransports(logger);
    this.governed.set(logger, name);
    this.apply(logger, name);
  }

  private apply(logger: WinstonLogger, name: string): void {
    const { level, silent } = winstonLevel(levelFor(this.spec, name));
    logger.level = level;
    logger.silent = silent;
  }
}
