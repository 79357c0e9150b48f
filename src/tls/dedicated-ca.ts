import { X509Certificate } from 'node:crypto';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { NormalisedConfig } from '../config/types';
import { readPemFileSync } from './files';
import { certificateBlocks, oneLineName } from './pem';

/** A CA the node uses for organizations that the operations server certificate chains to. */
export interface OrganizationCaMatch {
  /** The file the CA certificate was read from. */
  caFile: string;
  caSubject: string;
  serverSubject: string;
}

interface SourcedCertificate {
  file: string;
  certificate: X509Certificate;
}

function certificatesIn(file: string): X509Certificate[] {
  // Not a regular file, too large or unreadable: skipped, as this is a warning rule, not validation.
  const read = readPemFileSync(file);
  if (!read.ok) return [];
  const text = read.bytes.toString('utf8');
  const certificates: X509Certificate[] = [];
  for (const pem of certificateBlocks(text)) {
    try {
      certificates.push(new X509Certificate(pem));
    } catch {
      // Not a certificate we can read: this is a warning rule, not validation.
    }
  }
  return certificates;
}

function filesIn(dir: string): string[] {
  try {
    return readdirSync(dir)
      .sort()
      .map((name) => join(dir, name));
  } catch {
    return [];
  }
}

/** The organization CA certificates named by the node's configuration, with their files. */
function readOrganizationCAs(organizationCAs: NormalisedConfig['organizationCAs']): SourcedCertificate[] {
  const files = [...organizationCAs.files, ...organizationCAs.dirs.flatMap(filesIn)];
  return files.flatMap((file) => certificatesIn(file).map((certificate) => ({ file, certificate })));
}

function issues(issuer: X509Certificate, subject: X509Certificate): boolean {
  return subject.checkIssued(issuer) && subject.verify(issuer.publicKey);
}

/**
 * The organization CAs (the dedicated-CA rule: README, TLS) that the server certificate chains to: its issuer
 * and every CA above it, through intermediates found among the same CAs or in the server
 * certificate file's own chain. Missing or unreadable files and directories are skipped.
 */
export function findOrganizationCAs(serverCertPem: string, organizationCAs: NormalisedConfig['organizationCAs']): OrganizationCaMatch[] {
  const [leafPem, ...chainPems] = certificateBlocks(serverCertPem);
  if (leafPem === undefined) return [];
  const leaf = new X509Certificate(leafPem);
  const serverSubject = oneLineName(leaf.subject);
  const candidates: SourcedCertificate[] = [
    ...readOrganizationCAs(organizationCAs),
    ...chainPems.map((pem) => ({ file: '', certificate: new X509Certificate(pem) })),
  ];

  const matches: OrganizationCaMatch[] = [];
  const reported = new Set<string>();
  const visited = new Set<string>([leaf.fingerprint256]);
  let frontier: X509Certificate[] = [leaf];
  while (frontier.length > 0) {
    const next: X509Certificate[] = [];
    for (const subject of frontier) {
      for (const { file, certificate } of candidates) {
        if (!issues(certificate, subject)) continue;
        if (file !== '' && !reported.has(`${certificate.fingerprint256}|${file}`)) {
          reported.add(`${certificate.fingerprint256}|${file}`);
          matches.push({ caFile: file, caSubject: oneLineName(certificate.subject), serverSubject });
        }
        if (!visited.has(certificate.fingerprint256)) {
          visited.add(certificate.fingerprint256);
          next.push(certificate);
        }
      }
    }
    frontier = next;
  }
  return matches;
}

/** One line for the warning, or the refusal, naming both certificates. */
export function describeDedicatedCaViolation(match: OrganizationCaMatch, keys: NormalisedConfig['keys']): string {
  return (
    `${keys.tlsCertFile}: the operations server certificate "${match.serverSubject}" chains to ` +
    `"${match.caSubject}" (${match.caFile}), a CA this node uses for organizations; ` +
    'its certificate must come from a CA dedicated to the operations service'
  );
}
