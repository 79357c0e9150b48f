import type { X509Certificate } from 'node:crypto';
import { certificateNames, distinguishedNameMatches, formatDistinguishedName, type DistinguishedName } from '../tls/distinguished-name';

/**
 * Who may write to the fleet (PUT and DELETE /fleet/logspec): rules from the fleet file, the
 * verified client certificate from the request. A subject is compared as a name (every RDN, every
 * attribute's type and value, exactly: src/tls/distinguished-name.ts), never as text; an issuer
 * is a CA certificate, pinned by its SHA-256 fingerprint, that must have signed the client's
 * certificate (its signature checked with that certificate's public key), never a name, which
 * any CA the server trusts for clients can give to an intermediate of its own. Pure.
 */

/** The verified client certificate of a request, as rules read it and the audit names it. */
export interface ClientIdentity {
  readonly certificate: X509Certificate;
  readonly subject: DistinguishedName;
  readonly issuer: DistinguishedName;
  /** formatDistinguishedName: `O=org1,CN=operator`, escaped (RFC 4514 escapes, control characters as `\XX`). */
  readonly subjectText: string;
  readonly issuerText: string;
  /** SHA-256 of the certificate, upper-case hex pairs joined by `:` (as openssl x509 -fingerprint -sha256 prints it). */
  readonly fingerprint256: string;
}

/** The CA certificate that must have signed a writer's certificate. */
export interface IssuerPin {
  /** `AB:CD:...`. */
  readonly fingerprint256: string;
  /** The certificate (its public key checks the signature); null until bound (issuerFingerprint: at start, from clientRootCAs). */
  readonly certificate: X509Certificate | null;
  /** The key the rule gave it with, for messages. */
  readonly key: 'issuerFingerprint' | 'issuerCertFile';
}

/** A writer: every given field must match. */
export interface WriterRule {
  /** The subject as written (for messages) and as a name (for the comparison). */
  readonly subject: { readonly text: string; readonly name: DistinguishedName } | null;
  readonly issuer: IssuerPin | null;
  /** The client certificate itself. */
  readonly fingerprint256: string | null;
}

/** Pure: `ab:cd...` or `abcd...` (64 hex digits, optional `sha256:` prefix) as `AB:CD:...`; null when it is not a SHA-256 fingerprint. */
export function normaliseFingerprint(text: string): string | null {
  const hex = text.replace(/^sha256:/i, '').replace(/:/g, '');
  if (!/^[0-9a-fA-F]{64}$/.test(hex)) return null;
  return (hex.toUpperCase().match(/../g) as string[]).join(':');
}

/** The names and fingerprint of a verified client certificate. Throws RangeError when its DER cannot be read (the write is then refused). */
export function clientIdentity(certificate: X509Certificate): ClientIdentity {
  const { subject, issuer } = certificateNames(certificate.raw);
  return {
    certificate,
    subject,
    issuer,
    subjectText: formatDistinguishedName(subject),
    issuerText: formatDistinguishedName(issuer),
    fingerprint256: certificate.fingerprint256,
  };
}

/** Was `certificate` signed with the key of `ca`? (A signature, not a name: a name anyone trusted can claim.) */
function signedBy(certificate: X509Certificate, ca: X509Certificate): boolean {
  try {
    return certificate.verify(ca.publicKey);
  } catch {
    return false;
  }
}

function ruleMatches(rule: WriterRule, identity: ClientIdentity): boolean {
  if (rule.fingerprint256 !== null && rule.fingerprint256 !== identity.fingerprint256) return false;
  if (rule.subject !== null && !distinguishedNameMatches(rule.subject.name, identity.subject)) return false;
  if (rule.issuer !== null) {
    // An issuer never bound to its certificate matches nobody.
    if (rule.issuer.certificate === null || !signedBy(identity.certificate, rule.issuer.certificate)) return false;
  }
  return true;
}

/** The first rule this client satisfies, or null (no rule: nobody). */
export function matchingWriter(rules: readonly WriterRule[], identity: ClientIdentity): WriterRule | null {
  return rules.find((rule) => ruleMatches(rule, identity)) ?? null;
}

export function writerAllowed(rules: readonly WriterRule[], identity: ClientIdentity): boolean {
  return matchingWriter(rules, identity) !== null;
}

/** The audit log's fields for a write: who (subject, as `actor`), issued by whom, which certificate; and the CA the rule pinned, when it pinned one. */
export function writerAuditFields(identity: ClientIdentity, rule: WriterRule | null): Record<string, string> {
  return {
    issuer: identity.issuerText,
    fingerprint256: identity.fingerprint256,
    ...(rule?.issuer ? { issuerFingerprint256: rule.issuer.fingerprint256 } : {}),
  };
}
