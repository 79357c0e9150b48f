import { inspect } from 'node:util';
import { escapeForLog, logUnsafeCharacter } from '../text';
import type { LogFields, LogLevel } from './types';

/** One entry as the text format needs it. */
export interface TextEntry {
  readonly time: Date;
  readonly logger: string;
  readonly level: LogLevel;
  readonly msg: string;
  readonly fields: LogFields;
}

const ansiReset = '\u001b[0m';

/** Fabric's console colours per level (flogging `fabenc`); `payload` is not coloured. */
const levelColours: Readonly<Record<LogLevel, string>> = {
  payload: '',
  debug: '\u001b[36m',
  info: '\u001b[34m',
  warn: '\u001b[33m',
  error: '\u001b[31m',
  dpanic: '\u001b[35m',
  panic: '\u001b[35m',
  fatal: '\u001b[35m',
};

/**
 * One readable line per entry, close to Fabric's console format:
 *
 *   2026-11-22 10:00:00.123 UTC [logger.name] INFO message key=value other="two words"
 *
 * - time: UTC, millisecond precision; level: upper-case Fabric name (PAYLOAD ... FATAL).
 * - message: control and bidirectional characters escaped (`\n`, `\t`, `\u0007`, `\u202e`; see
 *   escapeForLog), so an entry never spans lines nor shows reordered.
 * - fields in insertion order as `key=value`: strings bare when they contain no white space,
 *   `"`, `=`, `\` or such characters, else JSON-quoted with them escaped; numbers, booleans, bigints and
 *   null bare; Dates as ISO 8601; Errors as the quoted `Name: message`; other objects as
 *   compact JSON. `undefined` values are left out (as in JSON output). Keys that are not
 *   bare-safe are JSON-quoted.
 * - with `colour`, the prefix (time, logger, level) is wrapped in the level's ANSI colour.
 */
export function formatTextEntry(entry: TextEntry, colour: boolean): string {
  const prefix = `${formatTime(entry.time)} [${entry.logger}] ${entry.level.toUpperCase()}`;
  const colouredPrefix = colour && levelColours[entry.level] !== '' ? `${levelColours[entry.level]}${prefix}${ansiReset}` : prefix;
  let line = `${colouredPrefix} ${escapeForLog(entry.msg)}`;
  for (const key of Object.keys(entry.fields)) {
    const value = entry.fields[key];
    if (value === undefined) continue;
    line += ` ${formatBareOrQuoted(key)}=${formatValue(value)}`;
  }
  return `${line}\n`;
}

/** `2026-11-22 10:00:00.123 UTC` */
export function formatTime(time: Date): string {
  const iso = time.toISOString();
  return `${iso.slice(0, 10)} ${iso.slice(11, 23)} UTC`;
}

const needsQuoting = /[\s"=\\]/;

function formatBareOrQuoted(text: string): string {
  return text === '' || needsQuoting.test(text) || logUnsafeCharacter.test(text) ? escapeForLog(JSON.stringify(text)) : text;
}

function formatValue(value: unknown): string {
  switch (typeof value) {
    case 'string':
      return formatBareOrQuoted(value);
    case 'number':
    case 'boolean':
    case 'bigint':
      return String(value);
    case 'symbol':
    case 'function':
      return formatBareOrQuoted(String(value));
    default:
      break;
  }
  if (value === null) return 'null';
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? '"Invalid Date"' : value.toISOString();
  if (value instanceof Error) return escapeForLog(JSON.stringify(`${value.name}: ${value.message}`));
  try {
    const json = JSON.stringify(value);
    if (json !== undefined) return escapeForLog(json);
  } catch {
    // cycles or bigints inside: fall back to util.inspect below
  }
  return escapeForLog(inspect(value, { breakLength: Infinity, compact: true, depth: 4 }));
}
