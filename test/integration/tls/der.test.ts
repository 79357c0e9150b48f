import { execFileSync } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { subjectNameLength } from '../../../src/tls/der';
import { requireCommand } from '../../support/prerequisites';
import { createCertificateAuthority, createTestPki, type TestPki } from '../../support/pki';

let pki: TestPki;
beforeAll(async () => {
  pki = await createTestPki();
});
afterAll(async () => pki.cleanup());

/** The subject's DER length as `openssl asn1parse` sees it: the 6th element at depth 2 (after [0] version). */
function opensslSubjectLength(certFile: string): number {
  requireCommand('openssl');
  const der = execFileSync('openssl', ['x509', '-in', certFile, '-outform', 'der']);
  const parsed = execFileSync('openssl', ['asn1parse', '-inform', 'der'], { input: der, encoding: 'utf8' });
  const children = parsed.split('\n').filter((line) => /\bd=2\b/.test(line));
  const hasVersion = children[0]?.includes('cont [ 0 ]') ?? false;
  const subject = children[hasVersion ? 5 : 4] ?? '';
  const match = /hl=\s*(\d+) l=\s*(\d+) cons: SEQUENCE/.exec(subject);
  if (!match) throw new Error(`no subject in:\n${parsed}`);
  return Number(match[1]) + Number(match[2]);
}

describe('subjectNameLength', () => {
  it.each(['serverCA', 'clientCA', 'server', 'client', 'expiredClient'] as const)('matches openssl asn1parse for %s', (name) => {
    const pair = pki[name];
    expect(subjectNameLength(new X509Certificate(pair.certPem).raw)).toBe(opensslSubjectLength(pair.cert));
  });

  it('matches for a name over 1 KB (two-byte DER lengths)', async () => {
    const units = Array.from({ length: 20 }, (_, index) => `/OU=unit${index}-${'x'.repeat(50)}`).join('');
    const big = await createCertificateAuthority(pki.dir, 'long-name', `/O=long${units}/CN=long name CA`);
    const length = subjectNameLength(new X509Certificate(big.certPem).raw);
    expect(length).toBeGreaterThan(1000);
    expect(length).toBe(opensslSubjectLength(big.cert));
  });

  it('refuses what is not a certificate', () => {
    expect(() => subjectNameLength(Buffer.from('3003020100', 'hex'))).toThrow(RangeError);
    expect(() => subjectNameLength(Buffer.alloc(0))).toThrow(RangeError);
  });
});
