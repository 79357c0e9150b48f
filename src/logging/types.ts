/** Fields attached to one log entry. */
export type LogFields = Record<string, unknown>;

/** Fabric's levels, most verbose first. `warning`, `notice` and `critical` are aliases. */
export const logLevels = ['payload', 'debug', 'info', 'warn', 'error', 'dpanic', 'panic', 'fatal'] as const;
export type LogLevel = (typeof logLevels)[number];

/**
 * A named logger, governed by the active logging specification. Everything in
 * fabric-ops logs through this interface; tests can pass their own implementation.
 */
export interface Logger {
  readonly name: string;
  payload(msg: string, fields?: LogFields): void;
  debug(msg: string, fields?: LogFields): void;
  info(msg: string, fields?: LogFields): void;
  warn(msg: string, fields?: LogFields): void;
  error(msg: string, fields?: LogFields): void;
  isEnabled(level: LogLevel): boolean;
}

/** Hands out named loggers (`a.b.c`). */
export interface LoggerFactory {
  getLogger(name: string): Logger;
}
