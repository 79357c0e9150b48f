import * as path from 'node:path';
import type { SettingValues } from './settings';
import type { CompanionCertificateSource, CompanionConfig, Dialect, HostPort } from './types';
import { parseHostPort, parsePositiveDurationMs, quoteValue, type Parsed } from './values';
import { companionKeysFor, mspCertificateFolders } from './companion-keys';

/**
 * Companion mode's side of the configuration, read from the same resolved settings (file, then
 * Fabric's environment overrides) as the rest. Pure: reads no files. Called by the normaliser.
 */
export interface CompanionReading {
  readonly values: SettingValues;
  readonly report: (key: string, message: string) => void;
  readonly check: <T>(key: string, parsed: Parsed<T>, fallback: T) => T;
  /** A path resolved against the config file's folder, as Fabric resolves its file keys ('' stays ''). */
  readonly absolute: (file: string) => string;
  readonly absoluteList: (files: readonly string[]) => string[];
  readonly label: (key: string) => string;
}

const maxDays = 3650;

export function parseDays(text: string): Parsed<number> {
  const trimmed = text.trim();
  const days = /^\d+$/.test(trimmed) ? Number(trimmed) : NaN;
  if (Number.isSafeInteger(days) && days <= maxDays) return { ok: true, value: days };
  return { ok: false, problem: `must be a whole number of days from 0 to ${maxDays}; got ${quoteValue(text)}` };
}

/** A share of a volume in whole percent, 0 to 99 (100 would fail every volume). */
export function parsePercent(text: string): Parsed<number> {
  const trimmed = text.trim();
  const percent = /^\d+$/.test(trimmed) ? Number(trimmed) : NaN;
  if (Number.isSafeInteger(percent) && percent <= 99) return { ok: true, value: percent };
  return { ok: false, problem: `must be a whole number of percent from 0 to 99; got ${quoteValue(text)}` };
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
export function parseByteSize(text: string): Parsed<number> {
  const match = /^(\d+)\s*([a-z]*)$/i.exec(text.trim());
  const unit = match?.[2]?.toLowerCase() ?? '';
  const factor = byteUnits.get(unit);
  const bytes = match && factor !== undefined ? Number(match[1]) * factor : NaN;
  if (Number.isSafeInteger(bytes)) return { ok: true, value: bytes };
  const decimal = match && /^[kmgt]b?$/i.test(unit) ? ` (write ${unit[0]?.toUpperCase() ?? ''}iB: the units are powers of 1024)` : '';
  return { ok: false, problem: `must be a whole number of bytes with an optional unit B, KiB, MiB, GiB or TiB${decimal}; got ${quoteValue(text)}` };
}

/** The host to call for a listen address: an every-interface host is reached on the loopback address of its family. */
export function callableHost(host: string): string {
  if (host === '' || host === '0.0.0.0') return '127.0.0.1';
  if (host === '::') return '::1';
  return host;
}

/** Every certificate source the node's configuration names, resolved as Fabric resolves paths. */
export function certificateSources(dialect: Dialect, reading: Pick<CompanionReading, 'values' | 'absolute'>): CompanionCertificateSource[] {
  const { values, absolute } = reading;
  const sources: CompanionCertificateSource[] = [];
  for (const source of companionKeysFor(dialect).certificates) {
    if (source.onlyWhen !== undefined && !source.onlyWhen.every((key) => values.boolean(key))) continue;
    if (source.form === 'msp') {
      const dir = absolute(values.string(source.key));
      if (dir === '') continue;
      for (const { folder, kind } of mspCertificateFolders) sources.push({ key: source.key, kind, form: 'folder', path: path.join(dir, folder) });
      continue;
    }
    const files = [
      ...new Set(
        values
          .paths(source.key)
          .filter((file) => file !== '')
          .map(absolute),
      ),
    ];
    for (const file of files) sources.push({ key: source.key, kind: source.kind, form: 'file', path: file });
  }
  return sources;
}

export function readCompanion(dialect: Dialect, reading: CompanionReading): CompanionConfig {
  const { values, report, check, absolute, absoluteList, label } = reading;
  const keys = companionKeysFor(dialect);

  const explicitAddress = values.string(keys.nodeAddress);
  const addressKey = explicitAddress === '' ? keys.nodeListenAddress : keys.nodeAddress;
  const parsed = check<HostPort>(addressKey, parseHostPort(values.string(addressKey), 1), { host: '127.0.0.1', port: 0 });
  const address = { host: callableHost(parsed.host), port: parsed.port };

  const tlsEnabled = values.boolean(keys.nodeTlsEnabled);
  const tls = {
    enabled: tlsEnabled,
    rootCAFiles: absoluteList(values.list(keys.nodeRootCAs)),
    certFile: absolute(values.string(keys.nodeClientCertFile)),
    keyFile: absolute(values.string(keys.nodeClientKeyFile)),
    serverName: values.string(keys.nodeServerName) || address.host,
  };
  if (tlsEnabled && tls.rootCAFiles.length === 0) {
    report(keys.nodeRootCAs, `required when ${label(keys.nodeTlsEnabled)} is true: the CA certificates that issued the node's operations certificate`);
  }
  if ((tls.certFile === '') !== (tls.keyFile === '')) {
    const [given, missing] = tls.certFile === '' ? [keys.nodeClientKeyFile, keys.nodeClientCertFile] : [keys.nodeClientCertFile, keys.nodeClientKeyFile];
    report(missing, `required when ${label(given)} is set`);
  }
  if (tlsEnabled && values.boolean(keys.nodeTlsClientAuthRequired) && tls.certFile === '' && tls.keyFile === '') {
    report(
      keys.nodeClientCertFile,
      `required when ${label(keys.nodeTlsClientAuthRequired)} is true: the node refuses a handshake without a client certificate`,
    );
  }

  const warningDays = check(keys.warningDays, parseDays(values.string(keys.warningDays)), 7);
  const planningDays = check(keys.planningDays, parseDays(values.string(keys.planningDays)), 30);
  const recheckIntervalMs = check(keys.recheckInterval, parsePositiveDurationMs(values.string(keys.recheckInterval)), 60_000);

  const dataFolders = keys.dataFolders.map((key) => ({ key, path: absolute(values.string(key)) })).filter((folder) => folder.path !== '');
  const disk = {
    minFreePercent: check(keys.diskMinFreePercent, parsePercent(values.string(keys.diskMinFreePercent)), 10),
    minFreeBytes: check(keys.diskMinFreeBytes, parseByteSize(values.string(keys.diskMinFreeBytes)), 2 ** 30),
    recheckIntervalMs: check(keys.diskRecheckInterval, parsePositiveDurationMs(values.string(keys.diskRecheckInterval)), 30_000),
  };
  return {
    node: { address, addressKey, tls },
    certificates: { sources: certificateSources(dialect, reading), warningDays, planningDays, recheckIntervalMs },
    dataFolders,
    disk,
    logspec: readCompanionLogSpec(dialect, reading),
  };
}

/** The shortest poll of the node's spec: a node is not asked more than ten times a second. */
export const minLogSpecPollMs = 100;

/**
 * The node's log level through the companion. A writable /logspec is refused over plain HTTP:
 * writes through the companion are never less protected than the node's own endpoint (a client
 * certificate verified against the companion's client CAs, which its TLS requires).
 */
export function readCompanionLogSpec(
  dialect: Dialect,
  reading: Pick<CompanionReading, 'values' | 'report' | 'check' | 'absolute' | 'label'>,
): CompanionConfig['logspec'] {
  const { values, report, check, absolute, label } = reading;
  const keys = companionKeysFor(dialect);
  const writable = values.boolean(keys.logspecWritable);
  if (writable && !values.boolean(keys.server.tlsEnabled)) {
    report(
      keys.logspecWritable,
      `true needs ${label(keys.server.tlsEnabled)} true: a write to the node's logging spec must come with a client certificate from ${keys.server.tlsClientRootCAs}, as the node's own /logspec demands one (set it false to serve /logspec read-only)`,
    );
  }
  const interval = parsePositiveDurationMs(values.string(keys.logspecPollInterval));
  const pollIntervalMs = check<number>(
    keys.logspecPollInterval,
    interval.ok && interval.value < minLogSpecPollMs
      ? { ok: false, problem: `must be at least ${minLogSpecPollMs}ms; got ${quoteValue(values.string(keys.logspecPollInterval))}` }
      : interval,
    2000,
  );
  return { writable, stateDirectory: absolute(values.string(keys.logspecStateDirectory)), pollIntervalMs };
}
