/**
 * What the companion tests share (test/integration/companion/, fleet/certificates, and the
 * opt-in test/real/fabric/companion-real-node): the CORE_* variables that make fabric-ops a
 * companion with its own TLS listener, and what openssl and /metrics say of a certificate.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import type { FabricDouble } from './fabric-double';
import type { TestPki } from './pki';

const execFileAsync = promisify(execFile);

/**
 * Companion mode on, its own listener on a free loopback port over TLS with the test PKI's server
 * pair; with `clientCAs` (default true) client certificates of the test client CA are asked for.
 */
export function companionServerEnv(pki: TestPki, options: { clientCAs?: boolean } = {}): Record<string, string> {
  return {
    CORE_OPERATIONS_COMPANION_ENABLED: 'true',
    CORE_OPERATIONS_COMPANION_LISTENADDRESS: '127.0.0.1:0',
    CORE_OPERATIONS_COMPANION_TLS_ENABLED: 'true',
    CORE_OPERATIONS_COMPANION_TLS_CERT_FILE: pki.server.cert,
    CORE_OPERATIONS_COMPANION_TLS_KEY_FILE: pki.server.key,
    ...(options.clientCAs === false ? {} : { CORE_OPERATIONS_COMPANION_TLS_CLIENTROOTCAS_FILES: pki.clientCA.cert }),
  };
}

/**
 * Beside the Fabric node double `peer`: the node's operations endpoint (its port, its TLS, as the
 * node's core.yaml overrides would give them) and the companion's way in to it (the node's CA, the
 * operator's client certificate); no container-runtime checker.
 */
export function companionOfDoubleEnv(peer: FabricDouble): Record<string, string> {
  return {
    CORE_OPERATIONS_HEALTHCHECK_CONTAINERRUNTIME_TYPE: 'none',
    CORE_OPERATIONS_LISTENADDRESS: `0.0.0.0:${new URL(peer.url).port}`,
    CORE_OPERATIONS_TLS_ENABLED: 'true',
    CORE_OPERATIONS_TLS_CERT_FILE: peer.certFile,
    CORE_OPERATIONS_TLS_KEY_FILE: peer.keyFile,
    CORE_OPERATIONS_TLS_CLIENTROOTCAS_FILES: peer.caFile,
    CORE_OPERATIONS_COMPANION_NODE_ROOTCAS_FILES: peer.caFile,
    CORE_OPERATIONS_COMPANION_NODE_CLIENTCERT_FILE: peer.clientCertFile,
    CORE_OPERATIONS_COMPANION_NODE_CLIENTKEY_FILE: peer.clientKeyFile,
  };
}

/** Writes through the companion on (PUT /logspec to the node), their put-backs kept in `stateDir`. */
export function companionWritesEnv(stateDir: string): Record<string, string> {
  return {
    CORE_OPERATIONS_COMPANION_LOGSPEC_WRITABLE: 'true',
    CORE_OPERATIONS_COMPANION_LOGSPEC_STATEDIRECTORY: stateDir,
  };
}

/** What openssl says of a certificate file: its serial (hex, no leading zeros) and notAfter in seconds. */
export async function opensslFacts(file: string): Promise<{ serial: string; notAfterSeconds: number }> {
  const { stdout } = await execFileAsync('openssl', ['x509', '-noout', '-serial', '-enddate', '-in', file]);
  const serial = /serial=([0-9A-Fa-f]+)/.exec(stdout)?.[1];
  const enddate = /notAfter=(.+)/.exec(stdout)?.[1];
  if (serial === undefined || enddate === undefined) throw new Error(`openssl x509 of ${file} gave no serial or notAfter: ${stdout}`);
  return { serial: normalSerial(serial), notAfterSeconds: Date.parse(enddate) / 1000 };
}

/** A serial as the companion's label has it: upper-case hex without leading zeros. */
export function normalSerial(serial: string): string {
  return serial.toUpperCase().replace(/^0+/, '');
}

export interface Series {
  labels: Record<string, string>;
  value: number;
}

/** The companion_certificate_expiry_timestamp_seconds series of a Prometheus text exposition. */
export function expirySeries(text: string): Series[] {
  const series: Series[] = [];
  for (const line of text.split('\n')) {
    const match = /^companion_certificate_expiry_timestamp_seconds\{(.*)\} (\S+)$/.exec(line);
    if (!match) continue;
    const labels: Record<string, string> = {};
    for (const pair of (match[1] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) labels[pair[1] ?? ''] = JSON.parse(`"${pair[2] ?? ''}"`) as string;
    series.push({ labels, value: Number(match[2]) });
  }
  return series;
}

/**
 * Each certificate file of `expected` has exactly one series of its kind and serial on the
 * companion's /metrics, with its key and openssl's notAfter; and no other series is there.
 */
export async function expectEachCertificate(series: Series[], expected: ReadonlyArray<{ file: string; kind: string; key: string }>): Promise<void> {
  for (const { file, kind, key } of expected) {
    const facts = await opensslFacts(file);
    const found = series.filter((one) => one.labels.kind === kind && normalSerial(one.labels.serial ?? '') === facts.serial);
    expect({ file, kind, found: found.map((one) => ({ key: one.labels.key, value: one.value })) }).toEqual({
      file,
      kind,
      found: [{ key, value: facts.notAfterSeconds }],
    });
  }
  expect(series).toHaveLength(expected.length);
}
