import { X509Certificate, createPrivateKey } from 'node:crypto';
import { existsSync } from 'node:fs';
import { createTestPki, type TestPki } from '../../support/pki';

let pki: TestPki;
beforeAll(async () => {
  pki = await createTestPki();
});
afterAll(async () => {
  await pki.cleanup();
});

const parse = (pem: string): X509Certificate => new X509Certificate(pem);

describe('test PKI', () => {
  it('issues the server certificate for localhost and both loopback addresses from the server CA', () => {
    const server = parse(pki.server.certPem);
    expect(server.subject).toContain('CN=localhost');
    expect(server.subjectAltName).toBe('DNS:localhost, IP Address:127.0.0.1, IP Address:0:0:0:0:0:0:0:1');
    expect(server.checkIssued(parse(pki.serverCA.certPem))).toBe(true);
    expect(server.verify(parse(pki.serverCA.certPem).publicKey)).toBe(true);
    expect(server.checkPrivateKey(createPrivateKey(pki.server.keyPem))).toBe(true);
    expect(server.keyUsage).toEqual(['1.3.6.1.5.5.7.3.1']);
  });

  it('issues client certificates from a separate client CA with the clientAuth usage', () => {
    const client = parse(pki.client.certPem);
    expect(client.subject).toContain('CN=operator');
    expect(client.verify(parse(pki.clientCA.certPem).publicKey)).toBe(true);
    expect(client.verify(parse(pki.serverCA.certPem).publicKey)).toBe(false);
    expect(client.keyUsage).toEqual(['1.3.6.1.5.5.7.3.2']);
  });

  it('gives the untrusted client and the org-issued server certificate their own issuers', () => {
    expect(parse(pki.untrustedClient.certPem).verify(parse(pki.untrustedCA.certPem).publicKey)).toBe(true);
    expect(parse(pki.untrustedClient.certPem).verify(parse(pki.clientCA.certPem).publicKey)).toBe(false);
    expect(parse(pki.serverByOrgCA.certPem).verify(parse(pki.orgCA.certPem).publicKey)).toBe(true);
  });

  it('makes an expired client certificate signed by the client CA, valid only in the past', () => {
    const expired = parse(pki.expiredClient.certPem);
    expect(expired.verify(parse(pki.clientCA.certPem).publicKey)).toBe(true);
    expect(new Date(expired.validTo).getTime()).toBeLessThan(Date.now());
    expect(new Date(expired.validFrom).toISOString()).toBe('2020-01-01T00:00:00.000Z');
  });

  it('issues further certificates with fresh keys, including intermediates, and refuses a reused name', async () => {
    const first = await pki.issue('rotated-1', 'serverCA');
    const second = await pki.issue('rotated-2', 'serverCA', { days: 2 });
    expect(first.keyPem).not.toBe(second.keyPem);
    expect(existsSync(first.cert)).toBe(true);
    const intermediate = await pki.issue('org-intermediate', 'orgCA', { usage: 'ca', cn: 'Org1 intermediate' });
    const leaf = await pki.issue('leaf-of-intermediate', intermediate);
    expect(parse(leaf.certPem).verify(parse(intermediate.certPem).publicKey)).toBe(true);
    expect(parse(intermediate.certPem).ca).toBe(true);
    await expect(pki.issue('rotated-1', 'serverCA')).rejects.toThrow(/already issued/);
    const rsa = await pki.issue('rsa-server', 'serverCA', { keyType: 'rsa' });
    expect(createPrivateKey(rsa.keyPem).asymmetricKeyType).toBe('rsa');
    expect(createPrivateKey(first.keyPem).asymmetricKeyType).toBe('ec');
  });
});
