import type { PeerCertificate } from 'node:tls';

/**
 * A client certificate's subject as one line, the one form used wherever a client is named (the
 * access log of refused clients, the audit actor of PUT /logspec, fleet `writers`): its attributes
 * in the certificate's order, `type=value` joined by `,` (`O=org1,CN=operator`); an attribute the
 * certificate carries more than once (two OU) has its values joined by `+`.
 */
export function formatClientSubject(certificate: Pick<PeerCertificate, 'subject'>): string {
  // Node leaves `subject` undefined when the certificate has an empty one, whatever its type says.
  const subject = (certificate.subject as PeerCertificate['subject'] | undefined) ?? {};
  return Object.entries(subject as unknown as Record<string, string | string[]>)
    .map(([type, value]) => `${type}=${Array.isArray(value) ? value.join('+') : String(value)}`)
    .join(',');
}
