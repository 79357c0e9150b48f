import { quote } from '../text';
import { LogSpecError } from '../errors';
import { parseLevelName } from './levels';
import type { LogLevel } from './types';

/**
 * A parsed logging specification (Fabric's flogging grammar):
 *
 *   [<logger>[,<logger>...]=]<level>[:[<logger>[,<logger>...]=]<level>...]
 *
 * `loggers` keys are logger names as written; a key ending in `.` governs that exact
 * logger only, not its children.
 */
export interface LogSpec {
  readonly defaultLevel: LogLevel;
  readonly loggers: ReadonlyMap<string, LogLevel>;
}

/** ASCII `[[:alnum:]_#:-]` words joined by single dots (Fabric's logger-name rule). */
const loggerNamePattern = /^[A-Za-z0-9_#:-]+(\.[A-Za-z0-9_#:-]+)*$/;

/** Characters of a spec (or of a part of it) an error message shows. */
const echoedChars = 100;

/**
 * `'text'` as Fabric's messages quote it, cut at echoedChars: a 16 KB spec must not make a
 * 32 KB error (the spec and its bad segment are both echoed).
 */
function quoted(text: string): string {
  return quote(text, echoedChars, 'single');
}

/**
 * Throws LogSpecError when the normalised form of `spec` (what GET /logspec returns; it can be
 * longer than what was sent: `a,b=debug` becomes `a=debug:b=debug`) is over `maxLength`
 * characters, so that whatever is accepted can be sent back.
 */
export function checkNormalisedLength(spec: string, maxLength: number): void {
  const length = formatLogSpec(parseLogSpec(spec)).length;
  if (length > maxLength) {
    throw new LogSpecError(
      `the logging specification is ${length} characters once normalised (as GET /logspec returns it); at most ${maxLength} are accepted, so that it can be sent back`,
    );
  }
}

/**
 * Parses a logging specification exactly as Fabric does: split on `:`, then on `=`,
 * nothing trimmed. An empty segment (and so the empty spec) sets the default to `info`;
 * the last default wins; a later entry for a logger overwrites an earlier one.
 * Throws LogSpecError with Fabric's messages (what they quote cut at 100 characters).
 */
export function parseLogSpec(spec: string): LogSpec {
  const invalid = (problem: string): LogSpecError => new LogSpecError(`invalid logging specification ${quoted(spec)}: ${problem}`);

  let defaultLevel: LogLevel = 'info';
  const loggers = new Map<string, LogLevel>();

  for (const segment of spec.split(':')) {
    const parts = segment.split('=');
    if (parts.length === 1) {
      if (segment === '') {
        defaultLevel = 'info';
        continue;
      }
      const level = parseLevelName(segment);
      if (level === undefined) throw invalid(`bad segment ${quoted(segment)}`);
      defaultLevel = level;
    } else if (parts.length === 2) {
      const [names = '', levelName = ''] = parts;
      if (names === '') throw invalid(`no logger specified in segment ${quoted(segment)}`);
      const level = parseLevelName(levelName);
      if (level === undefined) throw invalid(`bad segment ${quoted(segment)}`);
      for (const name of names.split(',')) {
        const withoutExactMarker = name.endsWith('.') ? name.slice(0, -1) : name;
        if (!loggerNamePattern.test(withoutExactMarker)) throw invalid(`bad logger name ${quoted(name)}`);
        loggers.set(name, level);
      }
    } else {
      throw invalid(`bad segment ${quoted(segment)}`);
    }
  }

  return { defaultLevel, loggers };
}

/**
 * The normalised form of a spec, as Fabric's `Spec()` builds it: one `name=level` per
 * logger, those strings sorted by code unit (so `a.b=...` sorts before `a=...`), then the
 * default level; canonical lower-case level names (`payload` stays `payload`).
 * `parseLogSpec(formatLogSpec(s))` equals `s`.
 */
export function formatLogSpec(spec: LogSpec): string {
  const entries = Array.from(spec.loggers, ([name, level]) => `${name}=${level}`);
  entries.sort(compareCodeUnits);
  entries.push(spec.defaultLevel);
  return entries.join(':');
}

function compareCodeUnits(a: string, b: string): number {
  if (a < b) return -1;
  return a > b ? 1 : 0;
}

/**
 * The level that governs `loggerName`: the exact key `a.b.c.`, then `a.b.c`, `a.b`, `a`,
 * then the default. Only dot boundaries count (`a` does not cover `ab.c`).
 */
export function levelFor(spec: LogSpec, loggerName: string): LogLevel {
  const exact = spec.loggers.get(`${loggerName}.`);
  if (exact !== undefined) return exact;
  let candidate = loggerName;
  for (;;) {
    const level = spec.loggers.get(candidate);
    if (level !== undefined) return level;
    const lastDot = candidate.lastIndexOf('.');
    if (lastDot <= 0) return spec.defaultLevel;
    candidate = candidate.slice(0, lastDot);
  }
}
