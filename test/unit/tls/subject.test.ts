import type { PeerCertificate } from 'node:tls';
import { formatClientSubject } from '../../../src/tls/subject';

/** As Node's getPeerCertificate() gives a subject: attributes in certificate order, repeated ones as arrays. */
function peer(subject: Record<string, string | string[]> | undefined): Pick<PeerCertificate, 'subject'> {
  return { subject } as unknown as Pick<PeerCertificate, 'subject'>;
}

describe('formatClientSubject', () => {
  it('writes the attributes in the certificate order, joined by commas (as fleet writers are listed)', () => {
    expect(formatClientSubject(peer({ O: 'org1', CN: 'operator' }))).toBe('O=org1,CN=operator');
  });

  it('joins the values of a repeated attribute with +', () => {
    expect(formatClientSubject(peer({ O: 'org1', OU: ['admin', 'client'], CN: 'operator' }))).toBe('O=org1,OU=admin+client,CN=operator');
  });

  it('an empty subject is an empty string', () => {
    expect(formatClientSubject(peer(undefined))).toBe('');
  });
});
