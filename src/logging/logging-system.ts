import bunyan from 'bunyan';
import { LogSpecError } from '../errors';
import { bunyanLevels } from './levels';
import { formatLogSpec, levelFor, parseLogSpec, type LogSpec } from './spec';
import { formatTextEntry } from './text-format';
import type { LogFields, LogLevel, Logger, LoggerFactory } from './types';
import { systemClock, type Clock } from '../time';
import { escapeForLog } from '../text';

/** `json`: bunyan JSON lines. `text`: one readable line per entry (see text-format.ts). */
export type LogFormat = 'json' | 'text';

/**
 * Sees every log call, for the metrics `logging_entries_checked` (every call, whatever
 * its level) and `logging_entries_written{level}` (calls that pass the level).
 */
export interface LoggingObserver {
  checked(level: LogLevel): void;
  written(level: LogLevel): void;
  /**
   * A spec parsed and is about to be activated (the operations system logs, counts and reports
   * it here, so that every setSpec is audited); what this returns runs once the spec is active.
   */
  specChanging?(change: SpecChange & { actor: LogSpecActor }): (() => void) | undefined;
  /** A spec that does not parse was refused; nothing changed. */
  specRefused?(refusal: { spec: string; reason: string; actor: LogSpecActor }): void;
}

/** Who changes the logging spec: `name` as events show it, `fields` logged with the change. */
export interface LogSpecActor {
  name: string;
  fields: LogFields;
  /** @internal A remote request (PUT /logspec): its client gets the refusal in the answer, so no event reports it. */
  remote?: boolean;
}

/**
 * What embedding code may do with the logging of a running operations system
 * (`OperationsSystem.logging`): get loggers, read the spec, and change it the audited way. The
 * wiring behind it (the observer that counts log calls and audits every change) is not part of
 * it. To follow changes, `OperationsSystem.onEvent` adds a listener (`logspec.changed`,
 * `logspec.refused`) and returns its unsubscribe function.
 */
export interface OperationsLogging {
  /** The logger named `name` (dotted, e.g. `myapp.orders`), ruled by the spec; one object per name. */
  getLogger(name: string): Logger;
  /** The active specification, normalised. */
  getSpec(): string;
  /**
   * Activates `spec` for every logger, existing and future, audited as PUT /logspec is: a log line
   * at info on the `operations` logger, the `logging_spec_changes` metric and a `logspec.changed`
   * event. A spec that does not parse throws LogSpecError and changes nothing (a `logspec.refused`
   * event reports it). `actor` names who asked; default `local`.
   */
  setSpec(spec: string, actor?: LogSpecActor): SpecChange;
}

/** A call of the library (`setSpec(spec)` without an actor). */
export const localActor: LogSpecActor = { name: 'local', fields: { caller: 'local' } };

export interface LoggingSystemOptions {
  /** Initial logging specification (Fabric grammar). Default `info`. */
  spec?: string;
  /** Default `text`. */
  format?: LogFormat;
  /** Where entries go. Default `process.stderr`, as Fabric. */
  stream?: NodeJS.WritableStream;
  /** Colour the text format's prefix. Default: only when `stream` is a TTY. */
  colour?: boolean;
  /** The wall clock that entries are dated by; default Date.now. */
  clock?: Clock;
}

export interface SpecChange {
  previous: string;
  current: string;
}

/** The Logger methods that write; they map onto bunyan's emitters. */
type EmittingLevel = 'payload' | 'debug' | 'info' | 'warn' | 'error';

/** Record keys bunyan (or this system) owns; a user field with one of these names is written as `field.<key>`. */
const reservedKeys: ReadonlySet<string> = new Set(['name', 'hostname', 'pid', 'level', 'levelName', 'msg', 'time', 'v']);
const renamedKeyPrefix = 'field.';

/** What every logger of one system shares. */
interface Shared {
  observer: LoggingObserver | null;
  readonly format: LogFormat;
  readonly clock: Clock;
}

class SystemLogger implements Logger {
  /** bunyan number of the lowest level this logger writes; set by the LoggingSystem. */
  threshold: number;

  constructor(
    readonly name: string,
    threshold: number,
    private readonly shared: Shared,
    private readonly output: bunyan,
  ) {
    this.threshold = threshold;
  }

  payload(msg: string, fields?: LogFields): void {
    this.log('payload', msg, fields);
  }

  debug(msg: string, fields?: LogFields): void {
    this.log('debug', msg, fields);
  }

  info(msg: string, fields?: LogFields): void {
    this.log('info', msg, fields);
  }

  warn(msg: string, fields?: LogFields): void {
    this.log('warn', msg, fields);
  }

  error(msg: string, fields?: LogFields): void {
    this.log('error', msg, fields);
  }

  isEnabled(level: LogLevel): boolean {
    return bunyanLevels[level] >= this.threshold;
  }

  private log(level: EmittingLevel, msg: string, fields: LogFields | undefined): void {
    const observer = this.shared.observer;
    if (observer !== null) observer.checked(level);
    if (bunyanLevels[level] < this.threshold) return;
    this.emit(level, msg, fields);
    if (observer !== null) observer.written(level);
  }

  private emit(level: EmittingLevel, msg: string, fields: LogFields | undefined): void {
    const record = this.recordFields(level, fields);
    // '%s' keeps bunyan's util.format from interpreting `%` in the message.
    switch (level) {
      case 'payload':
        this.output.trace(record, '%s', msg);
        break;
      case 'debug':
        this.output.debug(record, '%s', msg);
        break;
      case 'info':
        this.output.info(record, '%s', msg);
        break;
      case 'warn':
        this.output.warn(record, '%s', msg);
        break;
      case 'error':
        this.output.error(record, '%s', msg);
        break;
    }
  }

  private recordFields(level: LogLevel, fields: LogFields | undefined): LogFields {
    const record: LogFields = { levelName: level, time: new Date(this.shared.clock.now()) };
    if (fields === undefined) return record;
    const json = this.shared.format === 'json';
    for (const key of Object.keys(fields)) {
      const value = fields[key];
      record[reservedKeys.has(key) ? renamedKeyPrefix + key : key] = json && value instanceof Error ? bunyan.stdSerializers.err(value) : value;
    }
    return record;
  }
}

/**
 * Named loggers on bunyan, governed by one Fabric logging specification. Levels are
 * resolved once per logger when the spec changes, so a call at a disabled level costs
 * a comparison (plus its count in `logging_entries_checked` under an operations system).
 */
export class LoggingSystem implements LoggerFactory, OperationsLogging {
  private spec: LogSpec;
  private readonly loggers = new Map<string, SystemLogger>();
  private readonly shared: Shared;
  private readonly bunyanStream: bunyan.Stream;

  /** Throws LogSpecError when `options.spec` does not parse. */
  constructor(options: LoggingSystemOptions = {}) {
    this.spec = parseLogSpec(options.spec ?? 'info');
    const format = options.format ?? 'text';
    const stream = options.stream ?? process.stderr;
    this.shared = { observer: null, format, clock: options.clock ?? systemClock };
    if (format === 'json') {
      this.bunyanStream = { type: 'stream', stream: jsonLines(stream), level: bunyanLevels.payload };
    } else {
      const colour = options.colour ?? (stream as { isTTY?: boolean }).isTTY === true;
      this.bunyanStream = { type: 'raw', stream: new TextSink(stream, colour), level: bunyanLevels.payload };
    }
  }

  /**
   * `FABRIC_LOGGING_SPEC` (default `info`; an invalid one is a LogSpecError naming it) and
   * `FABRIC_LOGGING_FORMAT` (exactly `json` gives JSON lines; anything else, including
   * Fabric's `%{...}` format strings, gives the text format).
   */
  static fromEnvironment(env: NodeJS.ProcessEnv, stream?: NodeJS.WritableStream): LoggingSystem {
    const spec = env.FABRIC_LOGGING_SPEC ?? 'info';
    const format: LogFormat = env.FABRIC_LOGGING_FORMAT === 'json' ? 'json' : 'text';
    try {
      return new LoggingSystem({ spec, format, ...(stream === undefined ? {} : { stream }) });
    } catch (error) {
      if (error instanceof LogSpecError) throw new LogSpecError(`FABRIC_LOGGING_SPEC: ${error.message}`);
      throw error;
    }
  }

  /** The logger named `name` (dotted, e.g. `fabric-ops.http`); one object per name. */
  getLogger(name: string): Logger {
    const existing = this.loggers.get(name);
    if (existing !== undefined) return existing;
    if (name === '') throw new TypeError('a logger name must not be empty');
    const output = bunyan.createLogger({ name, level: bunyanLevels.payload, streams: [this.bunyanStream] });
    const logger = new SystemLogger(name, bunyanLevels[levelFor(this.spec, name)], this.shared, output);
    this.loggers.set(name, logger);
    return logger;
  }

  /** The active specification, normalised. */
  getSpec(): string {
    return formatLogSpec(this.spec);
  }

  /**
   * Activates `spec` for every logger, existing and future, and tells the observer (which audits
   * it: log line, metric, `logspec.changed`). A spec that does not parse throws LogSpecError and
   * changes nothing. `actor` names who asked; default `local`.
   */
  setSpec(spec: string, actor: LogSpecActor = localActor): SpecChange {
    let next: LogSpec;
    try {
      next = parseLogSpec(spec);
    } catch (error) {
      if (error instanceof LogSpecError) this.shared.observer?.specRefused?.({ spec, reason: error.message, actor });
      throw error;
    }
    const change = { previous: this.getSpec(), current: formatLogSpec(next) };
    const afterwards = this.shared.observer?.specChanging?.({ ...change, actor });
    this.spec = next;
    for (const logger of this.loggers.values()) {
      logger.threshold = bunyanLevels[levelFor(next, logger.name)];
    }
    afterwards?.();
    return change;
  }

  /**
   * @internal The operations system's (one at a time; null removes it): not in the published
   * types, since replacing it would silently end the audit of every later spec change.
   */
  setObserver(observer: LoggingObserver | null): void {
    this.shared.observer = observer;
  }
}

/**
 * What bunyan writes (one JSON text and a newline per record), with the characters JSON leaves
 * as they are (C1 controls, DEL, U+2028/2029, bidirectional controls) escaped as in the text
 * format: still JSON, same values, shown as what they are.
 */
function jsonLines(stream: NodeJS.WritableStream): NodeJS.WritableStream {
  const write = (chunk: unknown): boolean => {
    if (typeof chunk !== 'string') return stream.write(chunk as Uint8Array);
    const line = chunk.endsWith('\n') ? chunk.slice(0, -1) : chunk;
    return stream.write(`${escapeForLog(line)}${line === chunk ? '' : '\n'}`);
  };
  return { write } as unknown as NodeJS.WritableStream;
}

/** bunyan raw stream that writes each record as one text line. */
class TextSink implements bunyan.WriteFn {
  constructor(
    private readonly stream: NodeJS.WritableStream,
    private readonly colour: boolean,
  ) {}

  write(record: object): void {
    const { name, levelName, msg, time, ...rest } = record as BunyanRecord;
    const fields: LogFields = {};
    for (const key of Object.keys(rest)) {
      if (!reservedKeys.has(key)) fields[key] = rest[key];
    }
    this.stream.write(formatTextEntry({ time, logger: name, level: levelName, msg, fields }, this.colour));
  }
}

interface BunyanRecord {
  name: string;
  levelName: LogLevel;
  msg: string;
  time: Date;
  [key: string]: unknown;
}
