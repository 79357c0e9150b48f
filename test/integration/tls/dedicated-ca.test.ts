import { copyFile, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describeDedicatedCaViolation, findOrganizationCAs } from '../../../src/tls/dedicated-ca';
import { baseTestConfig } from '../../support/config';
import { type KeyPair, createTestPki, type TestPki } from '../../support/pki';

let pki: TestPki;
let root: string;
let intermediate: KeyPair;
let serverByIntermediate: KeyPair;

beforeAll(async () => {
  pki = await createTestPki();
  root = await mkdtemp(join(tmpdir(), 'fabric-ops-dedicated-ca-'));
  intermediate = await pki.issue('org-intermediate', 'orgCA', { usage: 'ca', cn: 'intermediate.org1.example.com' });
  serverByIntermediate = await pki.issue('server-by-intermediate', intermediate);
});
afterAll(async () => {
  await pki.cleanup();
  await rm(root, { recursive: true, force: true });
});

const orgCASubject = 'O=Org1, CN=ca.org1.example.com';

/** A peer MSP directory as cryptogen lays it out, with the org CA in cacerts/ and a TLS CA in tlscacerts/. */
async function mspDir(name: string, tlsCa: string): Promise<string> {
  const msp = join(root, name, 'msp');
  await mkdir(join(msp, 'cacerts'), { recursive: true });
  await mkdir(join(msp, 'tlscacerts'), { recursive: true });
  await mkdir(join(msp, 'keystore'), { recursive: true });
  await copyFile(pki.orgCA.cert, join(msp, 'cacerts', 'ca.org1.example.com-cert.pem'));
  await copyFile(tlsCa, join(msp, 'tlscacerts', 'tlsca.pem'));
  await writeFile(join(msp, 'keystore', 'priv_sk'), 'not a certificate\n');
  await writeFile(join(msp, 'config.yaml'), 'NodeOUs:\n  Enable: false\n');
  return msp;
}

describe('findOrganizationCAs', () => {
  it('finds the organization CA that issued the server certificate', () => {
    expect(findOrganizationCAs(pki.serverByOrgCA.certPem, { files: [pki.orgCA.cert, pki.clientCA.cert], dirs: [] })).toEqual([
      { caFile: pki.orgCA.cert, caSubject: orgCASubject, serverSubject: 'O=Org1, CN=localhost' },
    ]);
  });

  it('finds nothing when the server certificate comes from its own CA', () => {
    expect(findOrganizationCAs(pki.server.certPem, { files: [pki.orgCA.cert, pki.clientCA.cert, pki.untrustedCA.cert], dirs: [] })).toEqual([]);
  });

  it('does not match a CA with the same name but a different key', async () => {
    const impostor = await pki.issue('impostor-ca', 'serverCA', { usage: 'ca', cn: 'ca.org1.example.com' });
    expect(findOrganizationCAs(pki.serverByOrgCA.certPem, { files: [impostor.cert], dirs: [] })).toEqual([]);
  });

  it('follows an intermediate found among the organization CAs up to the root', () => {
    expect(findOrganizationCAs(serverByIntermediate.certPem, { files: [pki.orgCA.cert, intermediate.cert], dirs: [] })).toEqual([
      { caFile: intermediate.cert, caSubject: 'O=fabric-ops tests, CN=intermediate.org1.example.com', serverSubject: 'O=fabric-ops tests, CN=localhost' },
      { caFile: pki.orgCA.cert, caSubject: orgCASubject, serverSubject: 'O=fabric-ops tests, CN=localhost' },
    ]);
  });

  it('follows an intermediate carried in the server certificate file', () => {
    const chain = `${serverByIntermediate.certPem}${intermediate.certPem}`;
    expect(findOrganizationCAs(chain, { files: [pki.orgCA.cert], dirs: [] }).map((m) => m.caFile)).toEqual([pki.orgCA.cert]);
    // Without the intermediate, the root alone is not the issuer.
    expect(findOrganizationCAs(serverByIntermediate.certPem, { files: [pki.orgCA.cert], dirs: [] })).toEqual([]);
  });

  it('reads the certificates in MSP cacerts/ and tlscacerts/ directories, whatever the file names', async () => {
    const msp = await mspDir('peer0', pki.serverCA.cert);
    const dirs = [join(msp, 'cacerts'), join(msp, 'tlscacerts')];
    expect(findOrganizationCAs(pki.serverByOrgCA.certPem, { files: [], dirs })).toEqual([
      { caFile: join(msp, 'cacerts', 'ca.org1.example.com-cert.pem'), caSubject: orgCASubject, serverSubject: 'O=Org1, CN=localhost' },
    ]);
    expect(findOrganizationCAs(pki.server.certPem, { files: [], dirs }).map((m) => m.caFile)).toEqual([join(msp, 'tlscacerts', 'tlsca.pem')]);
  });

  it('finds a CA in a bundle file holding several certificates', async () => {
    const bundle = join(root, 'bundle.pem');
    await writeFile(bundle, `${pki.clientCA.certPem}${pki.orgCA.certPem}`);
    expect(findOrganizationCAs(pki.serverByOrgCA.certPem, { files: [bundle], dirs: [] }).map((m) => m.caSubject)).toEqual([orgCASubject]);
  });

  it('skips files and directories that are missing, unreadable or not certificates', async () => {
    const msp = await mspDir('peer1', pki.clientCA.cert);
    const organizationCAs = {
      files: ['/no/such/ca.pem', join(msp, 'config.yaml'), join(msp, 'keystore', 'priv_sk'), msp, pki.orgCA.cert],
      dirs: ['/no/such/msp/cacerts', join(msp, 'keystore'), join(msp, 'config.yaml')],
    };
    expect(findOrganizationCAs(pki.serverByOrgCA.certPem, organizationCAs).map((m) => m.caFile)).toEqual([pki.orgCA.cert]);
  });
});

describe('describeDedicatedCaViolation', () => {
  it('names the key, both certificates and the CA file in one line', () => {
    const [match] = findOrganizationCAs(pki.serverByOrgCA.certPem, { files: [pki.orgCA.cert], dirs: [] });
    if (match === undefined) throw new Error('expected a match');
    expect(describeDedicatedCaViolation(match, baseTestConfig().keys)).toBe(
      `operations.tls.cert.file: the operations server certificate "O=Org1, CN=localhost" chains to "${orgCASubject}" ` +
        `(${pki.orgCA.cert}), a CA this node uses for organizations; its certificate must come from a CA dedicated to the operations service`,
    );
  });
});
