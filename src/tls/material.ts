import { X509Certificate, createPrivateKey, type KeyObject } from 'node:crypto';
import { DEFAULT_CIPHERS, type SecureContextOptions } from 'node:tls';
import type { NormalisedConfig, TlsConfig } from '../config/types';
import { ConfigError, messageOf } from '../errors';
import { certificateBlocks, hasIncompletePemBlock, privateKeyBlockOf } from './pem';
import { trustAnchors } from './anchors';
import { subjectNameLength } from './der';
import { type FileRead, readPemFileSync } from './files';

/** The server's TLS material, read and checked, ready for a secure context. */
export interface TlsMaterial {
  /** The server certificate file's certificates (leaf first, then any chain it carries). */
  certPem: string;
  keyPem: string;
  /** One PEM per client root CA certificate, from every file of clientRootCAs. */
  clientCAPems: string[];
  /** The client root CAs as the secure context's trust anchors (see anchors.ts): what `ca` is given. */
  trustedClientCAPems: string[];
  /** When trustedClientCAPems next changes (an intermediate anchor's validity starts or ends), ms since the epoch; null if never. */
  trustChangesAt: number | null;
  /** SHA-256 of the server (leaf) certificate, colon-separated hex. */
  fingerprint: string;
}

export type ConfigKeys = NormalisedConfig['keys'];

/** The TLS 1.2 suites Fabric allows (reference doc, "TLS"); TLS 1.3 keeps Node's default suites. */
export const tls12CipherSuites = [
  'ECDHE-ECDSA-AES128-GCM-SHA256',
  'ECDHE-ECDSA-AES256-GCM-SHA384',
  'ECDHE-RSA-AES128-GCM-SHA256',
  'ECDHE-RSA-AES256-GCM-SHA384',
  'AES128-GCM-SHA256',
  'AES256-GCM-SHA384',
] as const;

const tls13CipherSuites: readonly string[] = DEFAULT_CIPHERS.split(':').filter((suite) => suite.startsWith('TLS_'));

export const minimumTlsVersion = 'TLSv1.2';

/** Options for `https.createServer` / `server.setSecureContext`; client-auth policy is the caller's. */
export function secureContextOptions(material: TlsMaterial): SecureContextOptions {
  return {
    cert: material.certPem,
    key: material.keyPem,
    ca: material.trustedClientCAPems,
    minVersion: minimumTlsVersion,
    ciphers: [...tls13CipherSuites, ...tls12CipherSuites].join(':'),
    honorCipherOrder: true,
  };
}

/** Reads one file for buildTlsMaterial: from the disk (readPemFileSync) or from bytes read already. */
export type ReadFile = (path: string) => FileRead;

/** Collects one line per problem; each reader returns undefined when it found one. */
class ProblemList {
  readonly lines: string[] = [];

  constructor(private readonly read: ReadFile) {}

  add(line: string): undefined {
    this.lines.push(line);
    return undefined;
  }

  readText(key: string, path: string): string | undefined {
    const read = this.read(path);
    if (!read.ok) return this.add(`${key}: cannot read ${path}: ${read.problem}`);
    const text = read.bytes.toString('utf8');
    if (text.trim().length === 0) return this.add(`${key}: ${path} is empty`);
    return text;
  }

  /** Every certificate in the file, parsed; at least one. */
  readCertificates(key: string, path: string): { pems: string[]; certificates: X509Certificate[] } | undefined {
    const text = this.readText(key, path);
    if (text === undefined) return undefined;
    const pems = certificateBlocks(text);
    if (pems.length === 0) {
      return this.add(
        hasIncompletePemBlock(text)
          ? `${key}: ${path} holds an incomplete PEM block (BEGIN without END; a file still being written?)`
          : `${key}: ${path} holds no PEM certificate`,
      );
    }
    const certificates: X509Certificate[] = [];
    for (const [index, pem] of pems.entries()) {
      try {
        certificates.push(new X509Certificate(pem));
      } catch (error) {
        const which = pems.length > 1 ? `certificate ${index + 1} of ${pems.length} in ${path}` : path;
        return this.add(`${key}: ${which} is not a valid X.509 certificate (${messageOf(error)})`);
      }
    }
    return { pems, certificates };
  }

  readPrivateKey(key: string, path: string): { pem: string; privateKey: KeyObject } | undefined {
    const text = this.readText(key, path);
    if (text === undefined) return undefined;
    const pem = privateKeyBlockOf(text);
    if (pem === null) {
      return this.add(
        hasIncompletePemBlock(text)
          ? `${key}: ${path} holds an incomplete PEM block (BEGIN without END; a file still being written?)`
          : `${key}: ${path} holds no PEM private key`,
      );
    }
    if (pem.startsWith('-----BEGIN ENCRYPTED PRIVATE KEY-----') || pem.includes('Proc-Type: 4,ENCRYPTED')) {
      return this.add(`${key}: ${path} holds an encrypted private key; passphrase-protected keys are not supported`);
    }
    try {
      return { pem, privateKey: createPrivateKey(pem) };
    } catch (error) {
      return this.add(`${key}: ${path} holds a private key that cannot be parsed (${messageOf(error)})`);
    }
  }
}

interface ClientCA {
  file: string;
  pem: string;
  certificate: X509Certificate;
}

/**
 * The most bytes of CA names (each with its 2-byte length) a CertificateRequest may carry. The
 * protocol's limit is 65,535 (RFC 8446 4.2.4, RFC 5246 7.4.4: `<0..2^16-1>`), past which OpenSSL
 * fails every handshake with internal_error; Go's TLS stack (Fabric's tools, Prometheus) refuses
 * any handshake message over 64 KiB (crypto/tls maxHandshake), and the rest of the message
 * (signature algorithms, extensions) takes well under 512 bytes: 65,536 - 512.
 */
export const maxClientCaNamesBytes = 65_024;

function nameLength(certificate: X509Certificate): number {
  try {
    return subjectNameLength(certificate.raw);
  } catch {
    // OpenSSL parsed it, our small DER reader did not: the whole certificate bounds its name.
    return certificate.raw.length;
  }
}

/** The CA names the server would send in each handshake, when they cannot fit in one. */
function caNamesProblem(key: string, clientCAs: readonly ClientCA[]): string | null {
  const perFile = new Map<string, { cas: number; bytes: number }>();
  let total = 0;
  for (const { file, certificate } of clientCAs) {
    const bytes = 2 + nameLength(certificate);
    total += bytes;
    const entry = perFile.get(file) ?? { cas: 0, bytes: 0 };
    entry.cas += 1;
    entry.bytes += bytes;
    perFile.set(file, entry);
  }
  if (total <= maxClientCaNamesBytes) return null;
  const files = [...perFile].map(([file, { cas, bytes }]) => `${file}: ${cas} CA${cas === 1 ? '' : 's'}, ${bytes} bytes`).join('; ');
  return (
    `${key}: the names of the ${clientCAs.length} distinct client root CAs come to ${total} bytes (${files}), ` +
    `more than the ${maxClientCaNamesBytes} bytes a TLS handshake can carry (the server sends every CA's name to each client): configure fewer CAs`
  );
}

/**
 * Reads the server certificate, its key and the client root CAs named by an enabled TLS
 * configuration, and checks that they can serve. Throws ConfigError with one line per
 * problem, each naming the configuration key and the file. Files are read with
 * readPemFileSync: regular files only, at most maxPemFileBytes each.
 */
export function loadTlsMaterial(tls: TlsConfig, keys: ConfigKeys, now: number = Date.now()): TlsMaterial {
  return buildTlsMaterial(tls, keys, readPemFileSync, now);
}

/** loadTlsMaterial over files read by `read`: the watcher builds from exactly the bytes it compared. */
export function buildTlsMaterial(tls: TlsConfig, keys: ConfigKeys, read: ReadFile, now: number): TlsMaterial {
  const problems = new ProblemList(read);
  const required = (key: string): undefined => problems.add(`${key}: required when ${keys.tlsEnabled} is true`);

  const cert = tls.certFile === '' ? required(keys.tlsCertFile) : problems.readCertificates(keys.tlsCertFile, tls.certFile);
  const key = tls.keyFile === '' ? required(keys.tlsKeyFile) : problems.readPrivateKey(keys.tlsKeyFile, tls.keyFile);
  const leaf = cert?.certificates[0];
  if (leaf !== undefined && key !== undefined && !leaf.checkPrivateKey(key.privateKey)) {
    problems.add(`${keys.tlsKeyFile}: the key in ${tls.keyFile} does not match the certificate in ${tls.certFile} (${keys.tlsCertFile})`);
  }

  // The same CA twice (in one file or across files) is one CA, as in Go's certificate pool:
  // OpenSSL would send its name once per copy in every handshake.
  const clientCAs: ClientCA[] = [];
  const seen = new Set<string>();
  for (const file of tls.clientRootCAFiles) {
    const cas = problems.readCertificates(keys.tlsClientRootCAs, file);
    cas?.pems.forEach((pem, index) => {
      const certificate = cas.certificates[index] as X509Certificate;
      if (seen.has(certificate.fingerprint256)) return;
      seen.add(certificate.fingerprint256);
      clientCAs.push({ file, pem, certificate });
    });
  }
  const namesProblem = caNamesProblem(keys.tlsClientRootCAs, clientCAs);
  if (namesProblem !== null) problems.add(namesProblem);

  if (problems.lines.length > 0 || cert === undefined || key === undefined || leaf === undefined) {
    throw new ConfigError(problems.lines);
  }
  const anchors = trustAnchors(clientCAs, now);
  return {
    certPem: `${cert.pems.join('\n')}\n`,
    keyPem: `${key.pem}\n`,
    clientCAPems: clientCAs.map(({ pem }) => pem),
    trustedClientCAPems: anchors.pems,
    trustChangesAt: anchors.changesAt,
    fingerprint: leaf.fingerprint256,
  };
}

const samePems = (a: readonly string[], b: readonly string[]): boolean => a.length === b.length && a.every((pem, index) => pem === b[index]);

/** Same contents and same trust anchors in force: nothing to reload. */
export function sameTlsMaterial(a: TlsMaterial, b: TlsMaterial): boolean {
  return a.certPem === b.certPem && a.keyPem === b.keyPem && samePems(a.clientCAPems, b.clientCAPems) && samePems(a.trustedClientCAPems, b.trustedClientCAPems);
}
