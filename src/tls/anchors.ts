import type { X509Certificate } from 'node:crypto';

/**
 * Client root CAs as trust anchors, the way Fabric (Go) treats them: every configured CA is an
 * anchor, self-signed or not. A client issued by an intermediate CA configured alone is served;
 * one from a sibling intermediate under the same root is not.
 *
 * OpenSSL only ends a chain at a self-signed certificate unless X509_V_FLAG_PARTIAL_CHAIN is
 * set, and Node's `tls.Server` does not pass `allowPartialTrustChain` on to its secure context
 * (Node 24: `Server.prototype.setSecureContext` copies a fixed list of options that lacks it).
 * The other way OpenSSL knows: a "trusted certificate" (`openssl x509 -addtrust clientAuth`,
 * PEM `TRUSTED CERTIFICATE`), the certificate followed by auxiliary trust settings, which Node's
 * `ca` option reads. OpenSSL then ends the chain at that certificate.
 *
 * One difference remains: OpenSSL does not check the validity dates of such an anchor (it does
 * check them for a self-signed one), while Go refuses a chain through an expired or
 * not-yet-valid root. So an anchor outside its validity window is left out of the context, and
 * the material says when that set next changes, for the watcher to rebuild the context then.
 */

/** X509_CERT_AUX `{ trust: { id-kp-clientAuth (1.3.6.1.5.5.7.3.2) } }`, DER. */
const clientAuthTrust = Buffer.from('300c300a06082b06010505070302', 'hex');

function pemOf(label: string, der: Buffer): string {
  const lines = der.toString('base64').match(/.{1,64}/g) ?? [];
  return `-----BEGIN ${label}-----\n${lines.join('\n')}\n-----END ${label}-----`;
}

function selfSigned(certificate: X509Certificate): boolean {
  return certificate.checkIssued(certificate) && certificate.verify(certificate.publicKey);
}

export interface TrustAnchors {
  /** For the secure context's `ca`: a self-signed CA as it is, any other as a trusted certificate. */
  pems: string[];
  /** The next time (ms since the epoch) a non-self-signed anchor enters or leaves its validity window; null if none will. */
  changesAt: number | null;
}

/** The anchors for `certificates` (with their PEMs, same order) as of `now` (ms since the epoch). */
export function trustAnchors(certificates: ReadonlyArray<{ pem: string; certificate: X509Certificate }>, now: number): TrustAnchors {
  const pems: string[] = [];
  let changesAt: number | null = null;
  const boundary = (at: number): void => {
    if (at > now && (changesAt === null || at < changesAt)) changesAt = at;
  };
  for (const { pem, certificate } of certificates) {
    if (selfSigned(certificate)) {
      pems.push(pem);
      continue;
    }
    const notBefore = Date.parse(certificate.validFrom);
    // OpenSSL's notAfter is inclusive to the second.
    const notAfter = Date.parse(certificate.validTo) + 1000;
    boundary(notBefore);
    boundary(notAfter);
    if (now >= notBefore && now < notAfter) pems.push(pemOf('TRUSTED CERTIFICATE', Buffer.concat([certificate.raw, clientAuthTrust])));
  }
  return { pems, changesAt };
}
