import * as path from 'node:path';
import type { SettingValues } from './settings';
import type { CompanionCertificateSource, CompanionConfig, Dialect, HostPort } from './types';
import { parseHostPort, type Parsed } from './values';
import { companionKeysFor, mspCertificateFolders } from './companion-keys';

/**
 * Companion mode's side of the configuration, read from the same resolved settings (file, then
 * Fabric's environment overrides) as the rest. Pure: reads no files. Called by the normaliser.
 */
export interface CompanionReading {
  readonly values: SettingValues;
  readonly report: (key: string, message: string) => void;
  readonly check: <T>(key: string, parsed: Parsed<T>, fallback: T) => T;
  /** The value of a setting through its declared format; its default's when the text does not parse (the problem reported). */
  readonly formatted: <T>(key: string) => T;
  /** A path resolved against the config file's folder, as Fabric resolves its file keys ('' stays ''). */
  readonly absolute: (file: string) => string;
  readonly absoluteList: (files: readonly string[]) => string[];
  readonly label: (key: string) => string;
}

/** The host to call for a listen address: an every-interface host is reached on the loopback address of its family. */
export function callableHost(host: string): string {
  if (host === '' || host === '0.0.0.0') return '127.0.0.1';
  if (host === '::') return '::1';
  return host;
}

/** Every certificate source the node's configuration names, resolved as Fabric resolves paths. */
function certificateSources(dialect: Dialect, reading: Pick<CompanionReading, 'values' | 'absolute'>): CompanionCertificateSource[] {
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
  const { values, report, check, formatted, absolute, absoluteList, label } = reading;
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

  const warningDays = formatted<number>(keys.warningDays);
  const planningDays = formatted<number>(keys.planningDays);
  const recheckIntervalMs = formatted<number>(keys.recheckInterval);

  const dataFolders = keys.dataFolders.map((key) => ({ key, path: absolute(values.string(key)) })).filter((folder) => folder.path !== '');
  const disk = {
    minFreePercent: formatted<number>(keys.diskMinFreePercent),
    minFreeBytes: formatted<number>(keys.diskMinFreeBytes),
    recheckIntervalMs: formatted<number>(keys.diskRecheckInterval),
  };
  return {
    node: { address, addressKey, tls },
    certificates: { sources: certificateSources(dialect, reading), warningDays, planningDays, recheckIntervalMs },
    dataFolders,
    disk,
    logspec: readCompanionLogSpec(dialect, reading),
  };
}

/**
 * The node's log level through the companion. A writable /logspec is refused over plain HTTP:
 * writes through the companion are never less protected than the node's own endpoint (a client
 * certificate verified against the companion's client CAs, which its TLS requires).
 */
function readCompanionLogSpec(
  dialect: Dialect,
  reading: Pick<CompanionReading, 'values' | 'report' | 'formatted' | 'absolute' | 'label'>,
): CompanionConfig['logspec'] {
  const { values, report, formatted, absolute, label } = reading;
  const keys = companionKeysFor(dialect);
  const writable = values.boolean(keys.logspecWritable);
  if (writable && !values.boolean(keys.server.tlsEnabled)) {
    report(
      keys.logspecWritable,
      `true needs ${label(keys.server.tlsEnabled)} true: a write to the node's logging spec must come with a client certificate from ${keys.server.tlsClientRootCAs}, as the node's own /logspec demands one (set it false to serve /logspec read-only)`,
    );
  }
  const pollIntervalMs = formatted<number>(keys.logspecPollInterval);
  return { writable, stateDirectory: absolute(values.string(keys.logspecStateDirectory)), pollIntervalMs };
}
