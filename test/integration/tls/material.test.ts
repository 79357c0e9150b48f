import { X509Certificate, createPrivateKey } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createSecureContext } from 'node:tls';
import type { TlsConfig } from '../../../src/config/types';
import { ConfigError } from '../../../src/errors';
import { loadTlsMaterial, secureContextOptions, tls12CipherSuites } from '../../../src/tls/material';
import { baseTestConfig } from '../../support/config';
import { createTestPki, type TestPki } from '../../support/pki';

const peerKeys = baseTestConfig().keys;
const ordererKeys = {
  ...peerKeys,
  tlsEnabled: 'Operations.TLS.Enabled',
  tlsCertFile: 'Operations.TLS.Certificate',
  tlsKeyFile: 'Operations.TLS.PrivateKey',
  tlsClientRootCAs: 'Operations.TLS.ClientRootCAs',
};

let pki: TestPki;
let dir: string;
beforeAll(async () => {
  pki = await createTestPki();
  dir = await mkdtemp(join(tmpdir(), 'fabric-ops-material-'));
});
afterAll(async () => {
  await pki.cleanup();
  await rm(dir, { recursive: true, force: true });
});

function tlsConfig(overrides: Partial<TlsConfig> = {}): TlsConfig {
  return {
    enabled: true,
    certFile: pki.server.cert,
    keyFile: pki.server.key,
    clientAuthRequired: false,
    clientRootCAFiles: [pki.clientCA.cert],
    requireDedicatedCA: false,
    ...overrides,
  };
}

async function fileWith(name: string, content: string): Promise<string> {
  const path = join(dir, name);
  await writeFile(path, content);
  return path;
}

/** The ConfigError's problem lines (fails the test when loading succeeds). */
function problemsOf(tls: TlsConfig, keys = peerKeys): readonly string[] {
  try {
    loadTlsMaterial(tls, keys);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as ConfigError).problems;
  }
  throw new Error('loadTlsMaterial accepted the configuration');
}

describe('loadTlsMaterial', () => {
  it('loads the certificate, key and client root CAs (each CA once) and fingerprints the server certificate', async () => {
    const bundle = await fileWith('two-cas.pem', `${pki.clientCA.certPem}\n${pki.orgCA.certPem}`);
    const material = loadTlsMaterial(tlsConfig({ clientRootCAFiles: [pki.clientCA.cert, bundle] }), peerKeys);
    expect(new X509Certificate(material.certPem).fingerprint256).toBe(new X509Certificate(pki.server.certPem).fingerprint256);
    expect(material.fingerprint).toBe(new X509Certificate(pki.server.certPem).fingerprint256);
    expect(createPrivateKey(material.keyPem).asymmetricKeyType).toBe('ec');
    // clientCA is in both files: one CA, as in Go's certificate pool.
    expect(material.clientCAPems.map((pem) => new X509Certificate(pem).subject)).toEqual([
      new X509Certificate(pki.clientCA.certPem).subject,
      new X509Certificate(pki.orgCA.certPem).subject,
    ]);
  });

  it('keeps a chain carried after the server certificate', async () => {
    const chain = await fileWith('server-chain.crt', `${pki.server.certPem}${pki.serverCA.certPem}`);
    const material = loadTlsMaterial(tlsConfig({ certFile: chain }), peerKeys);
    expect(material.certPem.match(/BEGIN CERTIFICATE/g)).toHaveLength(2);
    expect(material.fingerprint).toBe(new X509Certificate(pki.server.certPem).fingerprint256);
  });

  it('names the key and path of a file that does not exist', () => {
    expect(problemsOf(tlsConfig({ certFile: '/x/server.crt' }))).toEqual(['operations.tls.cert.file: cannot read /x/server.crt: no such file']);
  });

  it('names a directory given as a file', () => {
    expect(problemsOf(tlsConfig({ keyFile: dir }))).toEqual([`operations.tls.key.file: cannot read ${dir}: is a directory`]);
  });

  it('says when a certificate file is empty or holds no PEM certificate', async () => {
    const empty = await fileWith('empty.crt', '\n');
    const text = await fileWith('text.crt', 'hello, I am not a certificate\n');
    expect(problemsOf(tlsConfig({ certFile: empty }))).toEqual([`operations.tls.cert.file: ${empty} is empty`]);
    expect(problemsOf(tlsConfig({ certFile: text }))).toEqual([`operations.tls.cert.file: ${text} holds no PEM certificate`]);
    // A key where the certificate should be.
    expect(problemsOf(tlsConfig({ certFile: pki.server.key }))).toEqual([`operations.tls.cert.file: ${pki.server.key} holds no PEM certificate`]);
  });

  it('says when a PEM certificate block does not parse', async () => {
    const garbage = await fileWith('garbage.crt', '-----BEGIN CERTIFICATE-----\nAAAAAAAA\n-----END CERTIFICATE-----\n');
    const [problem, ...rest] = problemsOf(tlsConfig({ certFile: garbage }));
    expect(rest).toEqual([]);
    expect(problem).toMatch(new RegExp(`^operations\\.tls\\.cert\\.file: ${garbage} is not a valid X\\.509 certificate \\(.+\\)$`));
  });

  it('says when a file was cut short in the middle of a PEM block', async () => {
    const half = await fileWith('half.key', pki.server.keyPem.slice(0, 60));
    expect(problemsOf(tlsConfig({ keyFile: half }))).toEqual([
      `operations.tls.key.file: ${half} holds an incomplete PEM block (BEGIN without END; a file still being written?)`,
    ]);
  });

  it('says when the key file holds no private key, an unparsable one or an encrypted one', async () => {
    const unparsable = await fileWith('bad.key', '-----BEGIN PRIVATE KEY-----\nAAAAAAAA\n-----END PRIVATE KEY-----\n');
    const encrypted = await fileWith(
      'encrypted.key',
      createPrivateKey(pki.server.keyPem).export({ type: 'pkcs8', format: 'pem', cipher: 'aes-256-cbc', passphrase: 'secret' }) as string,
    );
    expect(problemsOf(tlsConfig({ keyFile: pki.server.cert }))).toEqual([`operations.tls.key.file: ${pki.server.cert} holds no PEM private key`]);
    expect(problemsOf(tlsConfig({ keyFile: unparsable }))[0]).toMatch(
      new RegExp(`^operations\\.tls\\.key\\.file: ${unparsable} holds a private key that cannot be parsed \\(.+\\)$`),
    );
    expect(problemsOf(tlsConfig({ keyFile: encrypted }))).toEqual([
      `operations.tls.key.file: ${encrypted} holds an encrypted private key; passphrase-protected keys are not supported`,
    ]);
  });

  it('refuses a key that does not match the certificate', () => {
    expect(problemsOf(tlsConfig({ keyFile: pki.client.key }))).toEqual([
      `operations.tls.key.file: the key in ${pki.client.key} does not match the certificate in ${pki.server.cert} (operations.tls.cert.file)`,
    ]);
  });

  it('accepts a traditional SEC1 "EC PRIVATE KEY" file', async () => {
    const sec1 = await fileWith('sec1.key', createPrivateKey(pki.server.keyPem).export({ type: 'sec1', format: 'pem' }) as string);
    expect(loadTlsMaterial(tlsConfig({ keyFile: sec1 }), peerKeys).fingerprint).toBe(new X509Certificate(pki.server.certPem).fingerprint256);
  });

  it('says which client root CA file is missing or holds no certificate', async () => {
    const notCa = await fileWith('not-a-ca.pem', 'nothing here\n');
    expect(problemsOf(tlsConfig({ clientRootCAFiles: [pki.clientCA.cert, notCa, '/x/ca.pem'] }))).toEqual([
      `operations.tls.clientRootCAs.files: ${notCa} holds no PEM certificate`,
      'operations.tls.clientRootCAs.files: cannot read /x/ca.pem: no such file',
    ]);
  });

  it('lists every problem at once, with the orderer dialect key names', async () => {
    const notCa = await fileWith('orderer-not-a-ca.pem', 'nothing\n');
    expect(problemsOf(tlsConfig({ certFile: '/x/server.crt', keyFile: '/x/server.key', clientRootCAFiles: [notCa] }), ordererKeys)).toEqual([
      'Operations.TLS.Certificate: cannot read /x/server.crt: no such file',
      'Operations.TLS.PrivateKey: cannot read /x/server.key: no such file',
      `Operations.TLS.ClientRootCAs: ${notCa} holds no PEM certificate`,
    ]);
  });

  it('says a certificate or key path is required when none is set', () => {
    expect(problemsOf(tlsConfig({ certFile: '', keyFile: '' }))).toEqual([
      'operations.tls.cert.file: required when operations.tls.enabled is true',
      'operations.tls.key.file: required when operations.tls.enabled is true',
    ]);
  });
});

describe('secureContextOptions', () => {
  it("sets TLS 1.2 as the minimum, Fabric's TLS 1.2 suites and Node's TLS 1.3 suites", () => {
    const options = secureContextOptions(loadTlsMaterial(tlsConfig(), peerKeys));
    expect(options.minVersion).toBe('TLSv1.2');
    const suites = (options.ciphers ?? '').split(':');
    expect(suites.filter((suite) => !suite.startsWith('TLS_')).sort()).toEqual(
      [
        'AES128-GCM-SHA256',
        'AES256-GCM-SHA384',
        'ECDHE-ECDSA-AES128-GCM-SHA256',
        'ECDHE-ECDSA-AES256-GCM-SHA384',
        'ECDHE-RSA-AES128-GCM-SHA256',
        'ECDHE-RSA-AES256-GCM-SHA384',
      ].sort(),
    );
    expect([...tls12CipherSuites].sort()).toEqual(suites.filter((suite) => !suite.startsWith('TLS_')).sort());
    expect(suites.filter((suite) => suite.startsWith('TLS_')).sort()).toEqual(
      ['TLS_AES_128_GCM_SHA256', 'TLS_AES_256_GCM_SHA384', 'TLS_CHACHA20_POLY1305_SHA256'].sort(),
    );
  });

  it('carries the certificate, key and client CAs, and OpenSSL accepts the whole set', () => {
    const material = loadTlsMaterial(tlsConfig(), peerKeys);
    const options = secureContextOptions(material);
    expect(options.cert).toBe(material.certPem);
    expect(options.key).toBe(material.keyPem);
    expect(options.ca).toEqual(material.clientCAPems);
    expect(() => createSecureContext(options)).not.toThrow();
  });
});
