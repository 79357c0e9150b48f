import { X509Certificate } from 'node:crypto';
import { clip } from '../text';
import { messageOf } from '../errors';
import { certificateBlocks, hasIncompletePemBlock, privateKeyBlockOf, summariseCertificate } from '../tls/pem';

/** The node's certificates as companion mode sees them: pure helpers over names, PEM text and dates. */

/** One certificate the node's configuration names. */
export interface NodeCertificate {
  /** The node's key naming it (`peer.tls.cert.file`, `peer.mspConfigPath`, ...). */
  key: string;
  kind: string;
  /** The file it was read from (absolute). */
  path: string;
  subject: string;
  issuer: string;
  /** Upper-case hex. */
  serial: string;
  notBefore: string;
  /** ISO 8601. */
  notAfter: string;
  notAfterMs: number;
  fingerprint: string;
}

/** A file named by the configuration (or found in an MSP folder) that gave no certificate. */
export interface CertificateProblem {
  key: string;
  kind: string;
  path: string;
  /** Completes "<key> <path>: ...". */
  problem: string;
}

/**
 * Names of files that are never opened in a certificate folder: what private keys are called
 * (`priv_sk`, `<ski>_sk` by Fabric's tools, `*.key`, `key.pem`). The MSP's `keystore/` is never
 * listed at all.
 */
export function looksLikeKeyFile(name: string): boolean {
  return /_sk$/i.test(name) || /\.key$/i.test(name) || /(^|[._-])(priv|private)?key(\.pem)?$/i.test(name);
}

/** The certificates of one file's text, or why it holds none; a block that does not parse is a problem, the others still count. */
export function parseCertificateText(
  text: string,
  source: { key: string; kind: string; path: string },
): { certificates: NodeCertificate[]; problems: CertificateProblem[] } {
  const problems: CertificateProblem[] = [];
  const problem = (what: string): void => {
    problems.push({ ...source, problem: what });
  };
  const blocks = certificateBlocks(text);
  if (blocks.length === 0) {
    if (text.trim() === '') problem('is empty');
    else if (hasIncompletePemBlock(text)) problem('holds an incomplete PEM block (BEGIN without END; a file still being written?)');
    else if (privateKeyBlockOf(text) !== null) problem('holds a private key, not a certificate');
    else problem('holds no PEM certificate');
    return { certificates: [], problems };
  }
  const certificates: NodeCertificate[] = [];
  for (const [index, block] of blocks.entries()) {
    try {
      const summary = summariseCertificate(new X509Certificate(block));
      certificates.push({ ...source, ...summary, notAfterMs: Date.parse(summary.notAfter) });
    } catch (error) {
      problem(`holds a certificate that does not parse (block ${index + 1}: ${clip(messageOf(error), 120)})`);
    }
  }
  return { certificates, problems };
}

export type ExpiryStage = 'expired' | 'warning' | 'planning' | 'ok';

const dayMs = 86_400_000;

/** Where a certificate stands: expired, inside the warning window, inside the planning window, or neither. */
export function expiryStage(notAfterMs: number, nowMs: number, windows: { warningDays: number; planningDays: number }): ExpiryStage {
  const left = notAfterMs - nowMs;
  if (left <= 0) return 'expired';
  if (left <= windows.warningDays * dayMs) return 'warning';
  if (left <= windows.planningDays * dayMs) return 'planning';
  return 'ok';
}

/** Days left, rounded down (negative once expired), for messages. */
export function daysLeft(notAfterMs: number, nowMs: number): number {
  return Math.floor((notAfterMs - nowMs) / dayMs);
}

/** The longest subject or issuer a label carries: names are the CA's to choose, series must stay bounded. */
export const maxLabelLength = 200;

/** A name clipped so that with clip's `... (N characters)` (N below 10^8) it stays within maxLabelLength. */
function boundedLabel(text: string): string {
  return clip(text, maxLabelLength - 24);
}

/** The metric labels of one certificate: which it is to the node, and which certificate it is. */
export function certificateLabels(certificate: NodeCertificate): { kind: string; key: string; subject: string; issuer: string; serial: string } {
  return {
    kind: certificate.kind,
    key: certificate.key,
    subject: boundedLabel(certificate.subject),
    issuer: boundedLabel(certificate.issuer),
    serial: clip(certificate.serial, 64),
  };
}

/** One identity per (labels): the same certificate twice in one folder is one series. */
export function seriesId(labels: Readonly<Record<string, string>>): string {
  return JSON.stringify(labels);
}
