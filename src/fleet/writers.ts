/**
 * Who may write to the fleet (PUT and DELETE /fleet/logspec). Pure: rules from the fleet file,
 * the verified client certificate from the request.
 */

/** The verified client certificate of a request, in the forms rules are written in. */
export interface ClientIdentity {
  /** formatClientSubject: `O=org1,CN=operator`. */
  subject: string;
  /** The issuer's name, in the same form. */
  issuer: string;
  /** SHA-256 of the certificate, upper-case hex pairs joined by `:` (as openssl x509 -fingerprint -sha256 prints it). */
  fingerprint256: string;
}

/**
 * A writer: every given field must match. A subject alone matches a certificate from any CA the
 * server trusts for clients; `issuer` or `fingerprint` pins it to one CA or one certificate.
 */
export interface WriterRule {
  subject: string | null;
  issuer: string | null;
  fingerprint256: string | null;
}

/** Pure: `ab:cd...` or `abcd...` (64 hex digits) as `AB:CD:...`; null when it is not a SHA-256 fingerprint. */
export function normaliseFingerprint(text: string): string | null {
  const hex = text.replace(/^sha256:/i, '').replace(/:/g, '');
  if (!/^[0-9a-fA-F]{64}$/.test(hex)) return null;
  return (hex.toUpperCase().match(/../g) as string[]).join(':');
}

export function writerAllowed(rules: readonly WriterRule[], identity: ClientIdentity): boolean {
  return rules.some(
    (rule) =>
      (rule.subject === null || rule.subject === identity.subject) &&
      (rule.issuer === null || rule.issuer === identity.issuer) &&
      (rule.fingerprint256 === null || rule.fingerprint256 === identity.fingerprint256),
  );
}
