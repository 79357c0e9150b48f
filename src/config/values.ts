import { quote } from '../text';
import { isIPv6 } from 'node:net';
import type { HostPort } from './types';

/**
 * Parsers for the value syntaxes of Fabric's configuration (Go's time.ParseDuration,
 * net.SplitHostPort, Docker/CRI endpoints). Each returns the value or a problem text
 * that the caller prefixes with the key.
 */
export type Parsed<T> = { ok: true; value: T } | { ok: false; problem: string };

const ok = <T>(value: T): Parsed<T> => ({ ok: true, value });

/** How much of a value an error message quotes (an environment variable can hold megabytes). */
const maxQuotedLength = 64;

/**
 * A value quoted for an error message, bounded: JSON-quoted whole when short, else its first
 * `maxQuotedLength` characters (never half a surrogate pair) and its length. Every echo of a
 * configuration value goes through here, so that no error line grows with the value.
 */
export function quoteValue(text: string, max = maxQuotedLength): string {
  return quote(text, max);
}
const fail = <T>(problem: string): Parsed<T> => ({ ok: false, problem });

const nanosecondsPerUnit: Readonly<Record<string, number>> = {
  ns: 1,
  us: 1e3,
  µs: 1e3, // U+00B5 micro sign
  μs: 1e3, // U+03BC Greek mu
  ms: 1e6,
  s: 1e9,
  m: 60e9,
  h: 3600e9,
};

const durationExamples = '(e.g. 10s, 1m30s, 500ms)';

/** Go duration syntax (`300ms`, `10s`, `1m30s`, `1h`, `1.5s`), as nanoseconds. */
export function parseGoDuration(text: string): number | null {
  let rest = text;
  let sign = 1;
  if (rest.startsWith('-') || rest.startsWith('+')) {
    sign = rest.startsWith('-') ? -1 : 1;
    rest = rest.slice(1);
  }
  if (rest === '0') return 0;
  if (rest === '') return null;
  const component = /^(\d*)(?:\.(\d*))?([a-zµμ]+)/;
  let total = 0;
  while (rest !== '') {
    const match = component.exec(rest);
    if (!match) return null;
    const [whole, integerPart = '', fractionPart, unit = ''] = match;
    if (integerPart === '' && (fractionPart === undefined || fractionPart === '')) return null;
    const perUnit = nanosecondsPerUnit[unit];
    if (perUnit === undefined) return null;
    total += Number(`${integerPart || '0'}.${fractionPart ?? '0'}`) * perUnit;
    rest = rest.slice(whole.length);
  }
  return sign * total;
}

/**
 * The longest delay a Node.js timer holds: setTimeout/setInterval take a signed 32-bit count of
 * milliseconds and turn anything longer into 1 ms (with a TimeoutOverflowWarning), so a longer
 * timeout would fire at once and a longer interval would spin. Every duration that becomes a
 * timer is bounded by this.
 */
export const maxTimerDelayMs = 2 ** 31 - 1;
/** maxTimerDelayMs as a Go duration, for messages. */
const maxTimerDelayText = '596h31m23.647s';
const maxTimerDelayLimit = `${maxTimerDelayText} (${maxTimerDelayMs} ms, the longest delay a Node.js timer can hold)`;

/** A positive Go duration, in whole milliseconds (at least 1 ms, at most maxTimerDelayMs). */
export function parsePositiveDurationMs(text: string): Parsed<number> {
  const nanoseconds = parseGoDuration(text);
  if (nanoseconds === null) return fail(`${quoteValue(text)} is not a duration ${durationExamples}`);
  if (nanoseconds <= 0) return fail(`must be greater than 0; got ${quoteValue(text)}`);
  const milliseconds = Math.round(nanoseconds / 1e6);
  if (milliseconds < 1) return fail(`must be at least 1ms; got ${quoteValue(text)}`);
  if (milliseconds > maxTimerDelayMs) return fail(`must be at most ${maxTimerDelayLimit}; got ${quoteValue(text)}`);
  return ok(milliseconds);
}

/**
 * A delay in milliseconds given to the library (a configuration object, an option): a problem
 * naming it unless it is a whole number from 1 to maxTimerDelayMs.
 */
export function timerDelayProblem(name: string, value: number): string | null {
  if (Number.isInteger(value) && value >= 1 && value <= maxTimerDelayMs) return null;
  return `${name}: must be a whole number of milliseconds from 1 to ${maxTimerDelayMs} (${maxTimerDelayText}, the longest delay a Node.js timer can hold); got ${String(value)}`;
}

const hostNamePattern = /^[A-Za-z0-9._-]*$/;

/**
 * `host:port`, `:port` (host '' = every interface) or `[ipv6]:port`, like Go's
 * net.SplitHostPort; the port must be decimal and at least `minPort`.
 */
export function parseHostPort(text: string, minPort: 0 | 1): Parsed<HostPort> {
  const notHostPort = fail<HostPort>(`${quoteValue(text)} is not host:port`);
  let host: string;
  let portText: string;
  if (text.startsWith('[')) {
    const close = text.indexOf(']');
    if (close < 0 || text[close + 1] !== ':') return notHostPort;
    host = text.slice(1, close);
    portText = text.slice(close + 2);
    if (!isIPv6(host)) return fail(`${quoteValue(text)} is not host:port (${quoteValue(host)} in brackets is not an IPv6 address)`);
  } else {
    const colon = text.lastIndexOf(':');
    if (colon < 0) return notHostPort;
    host = text.slice(0, colon);
    portText = text.slice(colon + 1);
    if (host.includes(':')) {
      return isIPv6(host) ? fail(`${quoteValue(text)} is not host:port (write an IPv6 host in brackets: [${host}]:${portText})`) : notHostPort;
    }
    if (!hostNamePattern.test(host)) return notHostPort;
  }
  if (!/^\d+$/.test(portText)) return notHostPort;
  const port = Number(portText);
  if (port < minPort || port > 65535) {
    return fail(`port ${portText} in ${quoteValue(text)} is not in ${minPort}..65535`);
  }
  return ok({ host, port });
}

export type EndpointKind = 'unix' | 'tcp';
export interface Endpoint {
  kind: EndpointKind;
  /** `unix:///absolute/path` or `tcp://host:port`. */
  url: string;
}

const endpointForms = 'use unix:///path/to.sock, /path/to.sock, or tcp://host:port (docker only)';

/**
 * A container runtime endpoint: `unix:///abs/path`, `/abs/path` (a unix socket), or, for
 * Docker, `tcp://host:port` (Fabric's `vm.endpoint` also allows `http://` and `https://`,
 * which mean the same TCP connection; TLS comes from `vm.docker.tls.*`).
 */
export function parseEndpoint(text: string): Parsed<Endpoint> {
  if (text.startsWith('unix://') || text.startsWith('/')) {
    const socketPath = text.startsWith('unix://') ? text.slice('unix://'.length) : text;
    if (!socketPath.startsWith('/')) {
      return fail(`${quoteValue(text)} is not an absolute socket path (${endpointForms})`);
    }
    return ok({ kind: 'unix', url: `unix://${socketPath}` });
  }
  const tcp = /^(?:tcp|https?):\/\/([^/]*)\/?$/.exec(text);
  if (tcp) {
    const address = parseHostPort(tcp[1] ?? '', 1);
    if (!address.ok) return fail(`${quoteValue(text)} is not an endpoint: ${address.problem}`);
    const host = address.value.host.includes(':') ? `[${address.value.host}]` : address.value.host;
    if (host === '') return fail(`${quoteValue(text)} is not an endpoint: the host is missing`);
    return ok({ kind: 'tcp', url: `tcp://${host}:${address.value.port}` });
  }
  return fail(`${quoteValue(text)} is not an endpoint (${endpointForms})`);
}

/*
 * Formats: the syntax a setting's text must have and the value it becomes, declared with the
 * setting (./declarations). Each returns the value or a problem text the caller prefixes with the key.
 */
export type Format<T> = (text: string) => Parsed<T>;

/** The longest span of days a setting takes (ten years). */
export const maxDays = 3650;

/** A whole number from `min` to `max`; `unit` ('days', 'percent') is named in the problem. */
export function wholeNumber(range: { min: number; max: number; unit?: string }): Format<number> {
  const what = range.unit === undefined ? 'a whole number' : `a whole number of ${range.unit}`;
  return (text) => {
    const trimmed = text.trim();
    const count = /^\d+$/.test(trimmed) ? Number(trimmed) : NaN;
    if (Number.isSafeInteger(count) && count >= range.min && count <= range.max) return ok(count);
    return fail(`must be ${what} from ${range.min} to ${range.max}; got ${quoteValue(text)}`);
  };
}

/** One of `allowed` (listed in the problem in that order, or sorted). */
export function oneOf<T extends string>(allowed: readonly T[], options: { sorted?: boolean } = {}): Format<T> {
  const listed = options.sorted === true ? [...allowed].sort() : [...allowed];
  return (text) => ((allowed as readonly string[]).includes(text) ? ok(text as T) : fail(`must be one of ${listed.join(', ')}; got ${quoteValue(text)}`));
}

/** A positive Go duration in milliseconds (parsePositiveDurationMs), at least `minMs` when given. */
export function duration(options: { minMs?: number } = {}): Format<number> {
  return (text) => {
    const parsed = parsePositiveDurationMs(text);
    if (parsed.ok && options.minMs !== undefined && parsed.value < options.minMs) return fail(`must be at least ${options.minMs}ms; got ${quoteValue(text)}`);
    return parsed;
  };
}

/** `host:port` (parseHostPort) with a port of at least `minPort`. */
export function hostPort(options: { minPort: 0 | 1 }): Format<HostPort> {
  return (text) => parseHostPort(text, options.minPort);
}

const byteUnits: ReadonlyMap<string, number> = new Map([
  ['', 1],
  ['b', 1],
  ['kib', 2 ** 10],
  ['mib', 2 ** 20],
  ['gib', 2 ** 30],
  ['tib', 2 ** 40],
]);

/** A size in bytes: a whole number with an optional binary unit (`B`, `KiB`, `MiB`, `GiB`, `TiB`, any case), e.g. `1GiB`, `512 MiB`, `0`. */
export const byteSize: Format<number> = (text) => {
  const match = /^(\d+)\s*([a-z]*)$/i.exec(text.trim());
  const unit = match?.[2]?.toLowerCase() ?? '';
  const factor = byteUnits.get(unit);
  const bytes = match && factor !== undefined ? Number(match[1]) * factor : NaN;
  if (Number.isSafeInteger(bytes)) return ok(bytes);
  const decimal = match && /^[kmgt]b?$/i.test(unit) ? ` (write ${unit[0]?.toUpperCase() ?? ''}iB: the units are powers of 1024)` : '';
  return fail(`must be a whole number of bytes with an optional unit B, KiB, MiB, GiB or TiB${decimal}; got ${quoteValue(text)}`);
};
