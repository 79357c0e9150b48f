import { X509Certificate } from 'node:crypto';

/** Pure helpers over PEM text and parsed certificates. */

const certificateBlock = /-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g;
const privateKeyBlock = /-----BEGIN ((?:RSA |EC |DSA |ENCRYPTED )?PRIVATE KEY)-----[\s\S]*?-----END \1-----/;

/** Every complete `CERTIFICATE` block, in file order. */
export function certificateBlocks(text: string): string[] {
  return [...text.matchAll(certificateBlock)].map((match) => match[0]);
}

/** The first complete private-key block (PKCS#8, SEC1, PKCS#1 or encrypted PKCS#8), or null. */
export function privateKeyBlockOf(text: string): string | null {
  return privateKeyBlock.exec(text)?.[0] ?? null;
}

/** A `-----BEGIN` without its `-----END`: what a file caught mid-write looks like. */
export function hasIncompletePemBlock(text: string): boolean {
  const begins = text.match(/-----BEGIN [A-Z0-9 ]+-----/g)?.length ?? 0;
  const ends = text.match(/-----END [A-Z0-9 ]+-----/g)?.length ?? 0;
  return begins > ends;
}

/** `CN=localhost\nO=Org1` as Node prints it becomes `CN=localhost, O=Org1`. */
export function oneLineName(name: string): string {
  return name
    .split('\n')
    .filter((part) => part.length > 0)
    .join(', ');
}

export interface CertificateSummary {
  subject: string;
  issuer: string;
  /** Upper-case hex, as Node reports it. */
  serial: string;
  notBefore: string;
  /** ISO 8601. */
  notAfter: string;
  /** SHA-256, colon-separated hex. */
  fingerprint: string;
}

export function summariseCertificate(certificate: X509Certificate): CertificateSummary {
  return {
    subject: oneLineName(certificate.subject),
    issuer: oneLineName(certificate.issuer),
    serial: certificate.serialNumber,
    // validFrom/validTo (text) rather than validFromDate/validToDate: the engines floor (22.22) has
    // both, but test/integration/tls/rotation.test.ts holds the reload path to working without the Date getters.
    notBefore: new Date(certificate.validFrom).toISOString(),
    notAfter: new Date(certificate.validTo).toISOString(),
    fingerprint: certificate.fingerprint256,
  };
}

/** The first certificate of a PEM text (a server certificate file may carry its chain after it). */
export function summarisePem(certPem: string): CertificateSummary {
  return summariseCertificate(new X509Certificate(certPem));
}
