import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rename, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { TlsConfig } from '../../src/config/types';
import { requireCommand } from './prerequisites';

/**
 * A throw-away PKI made with the `openssl` command, for tests that need real certificates:
 * a CA for the server, a separate CA for clients, an untrusted CA and an "organization" CA
 * (the dedicated-CA rule). EC P-256 keys, so the whole set takes well under a second.
 */

/** cert / key are file paths; certPem / keyPem their contents. */
export interface KeyPair {
  cert: string;
  key: string;
  certPem: string;
  keyPem: string;
}

/** A CA's certificate (cert = file path) and, for issuing more certificates, its key. */
export interface CertificateAuthority extends KeyPair {
  subject: string;
}

export type TestCaName = 'serverCA' | 'clientCA' | 'orgCA';

/** What an issued certificate is for: its extended key usage, or an intermediate CA. */
export type CertificateUsage = 'server' | 'client' | 'ca';

export interface IssueOptions {
  /** Common name; defaults to `localhost` for server certificates, else the name. */
  cn?: string;
  /** Validity from now; default 365. */
  days?: number;
  /** Default: `client` when issued by clientCA, else `server`. */
  usage?: CertificateUsage;
  /** Default `ec` (P-256); `rsa` is 2048-bit (for the ECDHE-RSA / RSA cipher suites). */
  keyType?: 'ec' | 'rsa';
}

export interface TestPki {
  dir: string;
  serverCA: CertificateAuthority;
  clientCA: CertificateAuthority;
  untrustedCA: CertificateAuthority;
  orgCA: CertificateAuthority;
  /** CN=localhost, SAN DNS:localhost, IP:127.0.0.1, IP:::1, signed by serverCA. */
  server: KeyPair;
  /** A server certificate issued by orgCA (the dedicated-CA rule). */
  serverByOrgCA: KeyPair;
  /** CN=operator, signed by clientCA, clientAuth EKU. */
  client: KeyPair;
  /** CN=intruder, signed by untrustedCA. */
  untrustedClient: KeyPair;
  /** CN=expired-operator, signed by clientCA, valid only in January 2020. */
  expiredClient: KeyPair;
  /**
   * Issues one more certificate with a fresh key, as `<dir>/issued/<name>.crt|.key`.
   * `ca` is one of the PKI's CAs or any CA made with usage `ca` (an intermediate).
   * Each name can be issued once.
   */
  issue(name: string, ca: TestCaName | KeyPair, opts?: IssueOptions): Promise<KeyPair>;
  cleanup(): Promise<void>;
}

const execFileAsync = promisify(execFile);

async function openssl(args: string[], cwd: string): Promise<void> {
  try {
    await execFileAsync('openssl', args, { cwd });
  } catch (error) {
    const stderr = (error as { stderr?: string }).stderr ?? '';
    throw new Error(`openssl ${args.join(' ')} failed: ${stderr.trim() || String(error)}`, { cause: error });
  }
}

const ecKeyArgs = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes'];
const rsaKeyArgs = ['-newkey', 'rsa:2048', '-nodes'];

const caExtensions = [
  'basicConstraints=critical,CA:TRUE',
  'keyUsage=critical,keyCertSign,cRLSign,digitalSignature',
  'subjectKeyIdentifier=hash',
  'authorityKeyIdentifier=keyid:always',
];

function leafExtensions(usage: CertificateUsage): string[] {
  if (usage === 'ca') return caExtensions;
  const common = [
    'basicConstraints=critical,CA:FALSE',
    'keyUsage=critical,digitalSignature,keyEncipherment',
    'subjectKeyIdentifier=hash',
    'authorityKeyIdentifier=keyid',
  ];
  return usage === 'server'
    ? [...common, 'extendedKeyUsage=serverAuth', 'subjectAltName=DNS:localhost,IP:127.0.0.1,IP:::1']
    : [...common, 'extendedKeyUsage=clientAuth'];
}

function randomSerial(): string {
  // Positive: clear the top bit.
  const bytes = randomBytes(16);
  bytes[0] = (bytes[0] ?? 0) & 0x7f;
  return `0x${bytes.toString('hex')}`;
}

async function readPair(cert: string, key: string): Promise<KeyPair> {
  const [certPem, keyPem] = await Promise.all([readFile(cert, 'utf8'), readFile(key, 'utf8')]);
  return { cert, key, certPem, keyPem };
}

async function createCA(dir: string, name: string, subject: string): Promise<CertificateAuthority> {
  const cert = join(dir, `${name}.crt`);
  const key = join(dir, `${name}.key`);
  const extensions = caExtensions.flatMap((e) => ['-addext', e]);
  await openssl(
    ['req', '-x509', ...ecKeyArgs, '-keyout', key, '-out', cert, '-subj', subject, '-days', '3650', '-set_serial', randomSerial(), ...extensions],
    dir,
  );
  return { ...(await readPair(cert, key)), subject };
}

async function writeExtensionFile(path: string, usage: CertificateUsage): Promise<void> {
  await writeFile(path, `[ext]\n${leafExtensions(usage).join('\n')}\n`);
}

async function issueCertificate(
  dir: string,
  name: string,
  issuer: KeyPair,
  subject: string,
  usage: CertificateUsage,
  days: number,
  keyType: 'ec' | 'rsa' = 'ec',
): Promise<KeyPair> {
  const cert = join(dir, `${name}.crt`);
  const key = join(dir, `${name}.key`);
  const csr = join(dir, `${name}.csr`);
  const extFile = join(dir, `${name}.ext`);
  await writeExtensionFile(extFile, usage);
  await openssl(['req', '-new', ...(keyType === 'rsa' ? rsaKeyArgs : ecKeyArgs), '-keyout', key, '-out', csr, '-subj', subject], dir);
  await openssl(
    [
      'x509',
      '-req',
      '-in',
      csr,
      '-CA',
      issuer.cert,
      '-CAkey',
      issuer.key,
      '-set_serial',
      randomSerial(),
      '-days',
      String(days),
      '-sha256',
      '-extfile',
      extFile,
      '-extensions',
      'ext',
      '-out',
      cert,
    ],
    dir,
  );
  await Promise.all([rm(csr), rm(extFile)]);
  return readPair(cert, key);
}

/** `openssl x509 -req` (3.0) cannot set dates in the past; `openssl ca` can. */
async function issueExpiredCertificate(dir: string, name: string, issuer: KeyPair, subject: string): Promise<KeyPair> {
  const caDir = join(dir, `${name}.ca`);
  await mkdir(caDir);
  const cert = join(dir, `${name}.crt`);
  const key = join(dir, `${name}.key`);
  const csr = join(caDir, 'request.csr');
  const config = join(caDir, 'ca.cnf');
  await writeFile(join(caDir, 'index.txt'), '');
  await writeFile(join(caDir, 'serial'), `${randomSerial().slice(2)}\n`);
  await writeFile(
    config,
    [
      '[ca]',
      'default_ca = test_ca',
      '[test_ca]',
      `database = ${join(caDir, 'index.txt')}`,
      `new_certs_dir = ${caDir}`,
      `serial = ${join(caDir, 'serial')}`,
      'default_md = sha256',
      'policy = any_subject',
      'unique_subject = no',
      '[any_subject]',
      'commonName = supplied',
      '[ext]',
      ...leafExtensions('client'),
      '',
    ].join('\n'),
  );
  await openssl(['req', '-new', ...ecKeyArgs, '-keyout', key, '-out', csr, '-subj', subject], dir);
  await openssl(
    [
      'ca',
      '-batch',
      '-notext',
      '-config',
      config,
      '-cert',
      issuer.cert,
      '-keyfile',
      issuer.key,
      '-in',
      csr,
      '-out',
      cert,
      '-startdate',
      '20200101000000Z',
      '-enddate',
      '20200131000000Z',
      '-extensions',
      'ext',
    ],
    dir,
  );
  await rm(caDir, { recursive: true });
  return readPair(cert, key);
}

/**
 * One more self-signed CA, as `<dir>/<name>.crt|.key`, with the given subject (`/O=.../CN=...`):
 * for tests that need many distinct CAs, or CAs with large names.
 */
export async function createCertificateAuthority(dir: string, name: string, subject: string): Promise<CertificateAuthority> {
  requireCommand('openssl');
  return createCA(dir, name, subject);
}

export async function createTestPki(): Promise<TestPki> {
  requireCommand('openssl');
  const dir = await mkdtemp(join(tmpdir(), 'fabric-ops-pki-'));
  const issuedDir = join(dir, 'issued');
  await mkdir(issuedDir);

  const [serverCA, clientCA, untrustedCA, orgCA] = await Promise.all([
    createCA(dir, 'server-ca', '/O=fabric-ops tests/CN=fabric-ops test server CA'),
    createCA(dir, 'client-ca', '/O=fabric-ops tests/CN=fabric-ops test client CA'),
    createCA(dir, 'untrusted-ca', '/O=nobody/CN=untrusted CA'),
    createCA(dir, 'org-ca', '/O=Org1/CN=ca.org1.example.com'),
  ]);
  const [server, serverByOrgCA, client, untrustedClient, expiredClient] = await Promise.all([
    issueCertificate(dir, 'server', serverCA, '/O=fabric-ops tests/CN=localhost', 'server', 365),
    issueCertificate(dir, 'server-by-org-ca', orgCA, '/O=Org1/CN=localhost', 'server', 365),
    issueCertificate(dir, 'client', clientCA, '/O=fabric-ops tests/CN=operator', 'client', 365),
    issueCertificate(dir, 'untrusted-client', untrustedCA, '/O=nobody/CN=intruder', 'client', 365),
    issueExpiredCertificate(dir, 'expired-client', clientCA, '/O=fabric-ops tests/CN=expired-operator'),
  ]);

  const cas: Record<TestCaName, CertificateAuthority> = { serverCA, clientCA, orgCA };
  const issuedNames = new Set<string>();

  return {
    dir,
    serverCA,
    clientCA,
    untrustedCA,
    orgCA,
    server,
    serverByOrgCA,
    client,
    untrustedClient,
    expiredClient,
    async issue(name, ca, opts = {}) {
      if (!/^[\w.-]+$/.test(name)) throw new Error(`pki.issue: name ${JSON.stringify(name)} must be a plain file name`);
      if (issuedNames.has(name)) throw new Error(`pki.issue: ${name} was already issued; use a new name`);
      issuedNames.add(name);
      const issuer = typeof ca === 'string' ? cas[ca] : ca;
      const usage = opts.usage ?? (ca === 'clientCA' ? 'client' : 'server');
      const cn = opts.cn ?? (usage === 'server' ? 'localhost' : name);
      return issueCertificate(issuedDir, name, issuer, `/O=fabric-ops tests/CN=${cn}`, usage, opts.days ?? 365, opts.keyType);
    },
    async cleanup() {
      await rm(dir, { recursive: true, force: true });
    },
  };
}

export interface KubernetesSecretVolume {
  /** The mount directory: `<dir>/<file>` are the paths to configure. */
  dir: string;
  /** Replaces the whole secret in one atomic step, as kubelet does. */
  update(files: Record<string, string>): Promise<void>;
}

/**
 * A directory laid out as kubelet mounts a secret: each `<dir>/<file>` is a symlink to
 * `..data/<file>`, `..data` a symlink to a timestamped directory. An update writes a new
 * timestamped directory, renames a fresh `..data` link over the old one and removes the
 * old directory, so the configured paths never change and no file is ever written in place.
 * `dir` must not exist yet.
 */
export async function createKubernetesSecretVolume(dir: string, files: Record<string, string>): Promise<KubernetesSecretVolume> {
  await mkdir(dir);
  let generation = 0;
  const writeGeneration = async (contents: Record<string, string>): Promise<string> => {
    generation += 1;
    const name = `..2026_01_01_10_00_${String(generation).padStart(2, '0')}.${process.pid}${generation}`;
    await mkdir(join(dir, name));
    for (const [file, content] of Object.entries(contents)) await writeFile(join(dir, name, file), content);
    return name;
  };
  let current = await writeGeneration(files);
  await symlink(current, join(dir, '..data'));
  for (const file of Object.keys(files)) await symlink(join('..data', file), join(dir, file));
  return {
    dir,
    async update(next) {
      const missing = Object.keys(next).filter((file) => !(file in files));
      if (missing.length > 0) throw new Error(`secret update adds files the volume does not link: ${missing.join(', ')}`);
      const name = await writeGeneration(next);
      await symlink(name, join(dir, '..data_tmp'));
      await rename(join(dir, '..data_tmp'), join(dir, '..data'));
      await rm(join(dir, current), { recursive: true });
      current = name;
    },
  };
}

/** The operations TLS section most tests serve with: the test server pair, client certificates from clientCA. */
export function serverTls(
  pki: TestPki,
  clientAuthRequired = false,
): { enabled: true; certFile: string; keyFile: string; clientAuthRequired: boolean; clientRootCAFiles: string[] } {
  return { enabled: true, certFile: pki.server.cert, keyFile: pki.server.key, clientAuthRequired, clientRootCAFiles: [pki.clientCA.cert] };
}

/** The TLS section of a server reading a Kubernetes TLS Secret's files in `dir`: tls.crt, tls.key, and ca.crt as the client CA. */
export function secretDirTls(dir: string): TlsConfig {
  return {
    enabled: true,
    certFile: join(dir, 'tls.crt'),
    keyFile: join(dir, 'tls.key'),
    clientAuthRequired: false,
    clientRootCAFiles: [join(dir, 'ca.crt')],
    requireDedicatedCA: false,
  };
}
