import type { LogFields, LogLevel, Logger, LoggerFactory } from '../../src/logging/types';

export interface CapturedEntry {
  logger: string;
  level: LogLevel;
  msg: string;
  fields: LogFields;
}

/** A LoggerFactory that keeps every entry in memory, for assertions. */
export class CaptureLoggers implements LoggerFactory {
  readonly entries: CapturedEntry[] = [];

  getLogger(name: string): Logger {
    const entries = this.entries;
    const log =
      (level: LogLevel) =>
      (msg: string, fields: LogFields = {}): void => {
        entries.push({ logger: name, level, msg, fields });
      };
    return {
      name,
      payload: log('payload'),
      debug: log('debug'),
      info: log('info'),
      warn: log('warn'),
      error: log('error'),
      isEnabled: () => true,
    };
  }

  find(level: LogLevel, pattern: RegExp): CapturedEntry[] {
    return this.entries.filter((e) => e.level === level && pattern.test(e.msg));
  }
}
