/**
 * Who may write to the fleet, over real mTLS with a fleet server trusting two organisations'
 * client CAs (ours, and org2's, whose holder is the attacker here):
 * - a subject is compared as a name: a certificate whose one attribute holds ",CN=", or whose one
 *   RDN holds two attributes (O=...+CN=...), is not the writer O=...,CN=...;
 * - an issuer is a CA certificate that must have signed the writer's certificate, pinned by its
 *   fingerprint or file: org2's CA can issue an intermediate *named* like our CA, and a leaf with
 *   the operator's subject under it, and still not write; an issuer given by its name is refused
 *   at start;
 * - a writer given by subject alone is what it says: the same subject from any trusted CA may
 *   write, and the audit line then names that certificate's issuer and fingerprint;
 * - a selector that cannot be honoured (`__proto__`, `constructor`...) is a 400, never the fleet.
 */
import { execFile } from 'node:child_process';
import { randomBytes, X509Certificate } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { ConfigError } from '../../../src/errors';
import { fleetConfigFrom, fleetExtension } from '../../../src/fleet';
import { startOperationsSystem, type OperationsSystem } from '../../../src/system';
import { testConfig } from '../../support/config';
import { request, type HttpAnswer } from '../../support/http';
import { LogCapture } from '../../support/log-capture';
import { createCertificateAuthority, createTestPki, serverTls, type CertificateAuthority, type KeyPair, type TestPki } from '../../support/pki';

jest.setTimeout(60_000);

const execFileAsync = promisify(execFile);

let pki: TestPki;
let otherCA: CertificateAuthority;
/** O=fabric-ops tests,CN=operator from another trusted client CA (another org's). */
let impostor: KeyPair;
/** The same subject from the same CA as pki.client, another key. */
let sibling: KeyPair;
/** org2's intermediate named exactly as our client CA (O=fabric-ops tests,CN=fabric-ops test client CA), and the operator's subject under it. */
let forgedByName: KeyPair;
/** org2's intermediate whose one attribute is O="fabric-ops tests,CN=fabric-ops test client CA", and the operator's subject under it. */
let forgedByOneAttribute: KeyPair;
/** From org2's CA: one attribute O="fabric-ops tests,CN=operator". */
let oneAttributeSubject: KeyPair;
/** From org2's CA: one RDN of two attributes, O=fabric-ops tests+CN=operator. */
let multiValuedSubject: KeyPair;
/** An intermediate of our client CA, and the operator's subject under it. */
let ourIntermediate: KeyPair;
let viaIntermediate: KeyPair;
let node: OperationsSystem;
let stateDir: string;

const operatorSubject = 'O=fabric-ops tests,CN=operator';
const ourCASubject = 'O=fabric-ops tests,CN=fabric-ops test client CA';

async function openssl(args: string[]): Promise<void> {
  await execFileAsync('openssl', args, { cwd: pki.dir });
}

/**
 * A certificate with exactly this `-subj` (OpenSSL's syntax: `/` separates RDNs, `+` with
 * `multiValued` joins attributes into one RDN, `,` is an ordinary character), issued by `issuer`.
 * The PEM presented is the certificate followed by `chain` (the intermediates the client sends).
 */
async function issueNamed(
  name: string,
  issuer: KeyPair,
  subject: string,
  usage: 'ca' | 'client',
  options: { multiValued?: boolean; chain?: KeyPair[] } = {},
): Promise<KeyPair> {
  const file = (ext: string): string => path.join(pki.dir, `${name}.${ext}`);
  const extensions =
    usage === 'ca'
      ? [
          'basicConstraints=critical,CA:TRUE',
          'keyUsage=critical,keyCertSign,cRLSign,digitalSignature',
          'subjectKeyIdentifier=hash',
          'authorityKeyIdentifier=keyid:always',
        ]
      : [
          'basicConstraints=critical,CA:FALSE',
          'keyUsage=critical,digitalSignature',
          'extendedKeyUsage=clientAuth',
          'subjectKeyIdentifier=hash',
          'authorityKeyIdentifier=keyid',
        ];
  await writeFile(file('ext'), `[ext]\n${extensions.join('\n')}\n`);
  await openssl([
    'req',
    '-new',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:P-256',
    '-nodes',
    '-keyout',
    file('key'),
    '-out',
    file('csr'),
    '-subj',
    subject,
    ...(options.multiValued ? ['-multivalue-rdn'] : []),
  ]);
  await openssl([
    'x509',
    '-req',
    '-in',
    file('csr'),
    '-CA',
    issuer.cert,
    '-CAkey',
    issuer.key,
    '-set_serial',
    `0x1${randomBytes(8).toString('hex')}`,
    '-days',
    '30',
    '-sha256',
    '-extfile',
    file('ext'),
    '-extensions',
    'ext',
    '-out',
    file('crt'),
  ]);
  const certPem = await readFile(file('crt'), 'utf8');
  const keyPem = await readFile(file('key'), 'utf8');
  return { cert: file('crt'), key: file('key'), certPem: [certPem, ...(options.chain ?? []).map((ca) => ca.certPem)].join(''), keyPem };
}

beforeAll(async () => {
  pki = await createTestPki();
  otherCA = await createCertificateAuthority(pki.dir, 'org2-client-ca', '/O=org2/CN=org2 client CA');
  impostor = await pki.issue('impostor', otherCA, { usage: 'client', cn: 'operator' });
  sibling = await pki.issue('sibling', 'clientCA', { usage: 'client', cn: 'operator' });
  const forgedCA = await issueNamed('forged-ca', otherCA, '/O=fabric-ops tests/CN=fabric-ops test client CA', 'ca');
  forgedByName = await issueNamed('forged-by-name', forgedCA, '/O=fabric-ops tests/CN=operator', 'client', { chain: [forgedCA] });
  const oneAttributeCA = await issueNamed('one-attribute-ca', otherCA, '/O=fabric-ops tests,CN=fabric-ops test client CA', 'ca');
  forgedByOneAttribute = await issueNamed('forged-by-one-attribute', oneAttributeCA, '/O=fabric-ops tests/CN=operator', 'client', { chain: [oneAttributeCA] });
  oneAttributeSubject = await issueNamed('one-attribute', otherCA, '/O=fabric-ops tests,CN=operator', 'client');
  multiValuedSubject = await issueNamed('multi-valued', otherCA, '/O=fabric-ops tests+CN=operator', 'client', { multiValued: true });
  ourIntermediate = await issueNamed('our-intermediate', pki.clientCA, '/O=fabric-ops tests/CN=operators intermediate', 'ca');
  viaIntermediate = await issueNamed('via-intermediate', ourIntermediate, '/O=fabric-ops tests/CN=operator', 'client', { chain: [ourIntermediate] });
  node = await startOperationsSystem({ config: testConfig({ operations: { tls: serverTls(pki) } }), logStream: new LogCapture() });
  stateDir = await mkdtemp(path.join(tmpdir(), 'fabric-ops-fleet-writers-'));
});

afterAll(async () => {
  await node?.stop();
  if (stateDir !== undefined) await rm(stateDir, { recursive: true, force: true });
  await pki?.cleanup();
});

const fleetFile = (): string => path.join(stateDir, 'fleet.yaml');

interface Fleet {
  put: (client: KeyPair, selector?: string) => Promise<HttpAnswer>;
  write: (method: 'PUT' | 'DELETE', body: string, client?: KeyPair) => Promise<HttpAnswer>;
  logs: LogCapture;
}

/** A fleet server trusting both client CAs, with these writers, over the one node (labels role=peer). */
async function withFleet(writers: unknown[], run: (fleet: Fleet) => Promise<void>): Promise<void> {
  const config = fleetConfigFrom(
    {
      stateDirectory: stateDir,
      pollInterval: '0s',
      minRoundInterval: '0s',
      writers,
      groups: { ops: { tls: { caFiles: [pki.serverCA.cert], certFile: pki.client.cert, keyFile: pki.client.key } } },
      nodes: [{ name: 'ops0', url: node.url, group: 'ops', labels: { role: 'peer' } }],
    },
    fleetFile(),
  );
  const logs = new LogCapture();
  const fleet = await startOperationsSystem({
    config: testConfig({ operations: { tls: { ...serverTls(pki), clientRootCAFiles: [pki.clientCA.cert, otherCA.cert] } } }),
    env: { FABRIC_LOGGING_FORMAT: 'json' },
    logStream: logs,
    extensions: [fleetExtension(config)],
  });
  const write = (method: 'PUT' | 'DELETE', body: string, client: KeyPair = pki.client): Promise<HttpAnswer> =>
    request(`${fleet.url}/fleet/logspec`, {
      method,
      ca: pki.serverCA.certPem,
      client,
      // Node sends a DELETE body unframed without a length (the server would read none).
      headers: { 'Content-Type': 'application/json', 'Content-Length': String(Buffer.byteLength(body)) },
      body,
    });
  try {
    await run({ put: (client, selector = '{}') => write('PUT', `{"spec": "gossip=debug:info", "selector": ${selector}}`, client), write, logs });
  } finally {
    await fleet.stop();
    node.setLogSpec('info');
  }
}

async function nodeSpec(): Promise<string> {
  const answer = await request(`${node.url}/logspec`, { ca: pki.serverCA.certPem, client: pki.client });
  return (answer.json as { spec: string }).spec;
}

const fingerprintOf = (pair: KeyPair | CertificateAuthority): string => new X509Certificate(pair.certPem).fingerprint256;
const errorOf = (answer: HttpAnswer): string => (answer.json as { error: string }).error;

describe('an issuer is a CA certificate, not a name', () => {
  test('pinned by fingerprint: org2 intermediates named as our CA (two RDNs, or one attribute) issue the operator subject, and get 403; no node changes', async () => {
    await withFleet([{ subject: operatorSubject, issuerFingerprint: `sha256:${fingerprintOf(pki.clientCA)}` }], async ({ put }) => {
      for (const forged of [forgedByName, forgedByOneAttribute, impostor]) {
        const refused = await put(forged);
        expect([refused.status, errorOf(refused)]).toEqual([403, expect.stringMatching(/^client "O=fabric-ops tests,CN=operator" \(issued by "/)]);
        expect(await nodeSpec()).toBe('info');
      }
      expect(errorOf(await put(forgedByName))).toBe(
        `client "${operatorSubject}" (issued by "${ourCASubject}", certificate SHA-256 ${fingerprintOf(forgedByName)}) may not change the fleet; writers are listed in ${fleetFile()} (writers)`,
      );
      expect(errorOf(await put(forgedByOneAttribute))).toContain(`(issued by "O=fabric-ops tests\\,CN=fabric-ops test client CA", certificate SHA-256 `);
      expect((await put(pki.client)).status).toBe(200);
      expect(await nodeSpec()).toBe('gossip=debug:info');
    });
  });

  test('pinned by its file: the same; and an intermediate of ours, given as the issuer, admits the operator it signed and no other', async () => {
    await withFleet([{ subject: operatorSubject, issuerCertFile: pki.clientCA.cert }], async ({ put }) => {
      expect((await put(forgedByName)).status).toBe(403);
      expect((await put(forgedByOneAttribute)).status).toBe(403);
      expect(await nodeSpec()).toBe('info');
      expect((await put(pki.client)).status).toBe(200);
    });
    await withFleet([{ subject: operatorSubject, issuerCertFile: ourIntermediate.cert }], async ({ put }) => {
      expect((await put(pki.client)).status).toBe(403);
      expect(await nodeSpec()).toBe('info');
      expect((await put(viaIntermediate)).status).toBe(200);
      expect(await nodeSpec()).toBe('gossip=debug:info');
    });
  });

  test('{ subject, issuer } (an issuer by its name, which the forged intermediates carry) is refused at start, naming the key and the new forms', () => {
    let problems: readonly string[] = [];
    try {
      fleetConfigFrom(
        {
          stateDirectory: stateDir,
          writers: [{ subject: operatorSubject, issuer: ourCASubject }],
          groups: { ops: { tls: { caFiles: [pki.serverCA.cert] } } },
          nodes: [{ name: 'ops0', url: node.url, group: 'ops' }],
        },
        fleetFile(),
      );
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error;
      problems = error.problems;
    }
    expect(problems).toEqual([
      expect.stringMatching(/^\/.*fleet\.yaml: writers\[0\]\.issuer: an issuer given by its name is refused: .*issuerFingerprint: .*issuerCertFile: /),
    ]);
  });

  test('an issuerCertFile that is not exactly one CA certificate is refused at start, naming the key and the file', async () => {
    const bundle = path.join(stateDir, 'two-cas.crt');
    await writeFile(bundle, pki.clientCA.certPem + otherCA.certPem);
    const problemsOf = (issuerCertFile: string): readonly string[] => {
      try {
        fleetConfigFrom(
          {
            stateDirectory: stateDir,
            writers: [{ subject: operatorSubject, issuerCertFile }],
            groups: { ops: { tls: { caFiles: [pki.serverCA.cert] } } },
            nodes: [{ name: 'ops0', url: node.url, group: 'ops' }],
          },
          fleetFile(),
        );
      } catch (error) {
        if (error instanceof ConfigError) return error.problems;
        throw error;
      }
      return [];
    };
    expect(problemsOf(pki.client.cert)).toEqual([
      `${fleetFile()}: writers[0].issuerCertFile: ${pki.client.cert} is not a CA certificate (basicConstraints CA:TRUE) but "O=fabric-ops tests, CN=operator"; give the CA that signs the writer's certificate`,
    ]);
    expect(problemsOf(bundle)).toEqual([
      `${fleetFile()}: writers[0].issuerCertFile: ${bundle} holds 2 certificates; give a file with the one CA certificate that signs the writer's certificate`,
    ]);
  });

  test('an issuerFingerprint that no client root CA has stops the start, naming the rule (the intermediate is given with issuerCertFile)', async () => {
    await expect(withFleet([{ subject: operatorSubject, issuerFingerprint: fingerprintOf(ourIntermediate) }], async () => undefined)).rejects.toThrow(
      new RegExp(
        `writers\\[0\\]\\.issuerFingerprint: no certificate of operations\\.tls\\.clientRootCAs\\.files .* has the SHA-256 fingerprint ${fingerprintOf(ourIntermediate)}; .*issuerCertFile`,
      ),
    );
  });
});

describe('a subject is a name, compared exactly', () => {
  test('a subject-only writer: one attribute O="fabric-ops tests,CN=operator" or one RDN O=fabric-ops tests+CN=operator, from a trusted CA, get 403', async () => {
    await withFleet([operatorSubject], async ({ put }) => {
      const oneAttribute = await put(oneAttributeSubject);
      expect([oneAttribute.status, errorOf(oneAttribute)]).toEqual([
        403,
        expect.stringMatching(/^client "O=fabric-ops tests\\,CN=operator" \(issued by "O=org2,CN=org2 client CA"/),
      ]);
      const multiValued = await put(multiValuedSubject);
      // DER sorts the attributes of an RDN (a SET OF) by their encoding: CN (2.5.4.3) before O (2.5.4.10).
      expect([multiValued.status, errorOf(multiValued)]).toEqual([
        403,
        expect.stringMatching(/^client "CN=operator\+O=fabric-ops tests" \(issued by "O=org2,CN=org2 client CA"/),
      ]);
      expect(await nodeSpec()).toBe('info');
    });
  });

  test('the names a refusal shows are the form a writer is written in: listing them admits exactly that certificate name (an RDN in any order)', async () => {
    await withFleet(['O=fabric-ops tests\\,CN=operator', 'O=fabric-ops tests+CN=operator'], async ({ put }) => {
      expect((await put(pki.client)).status).toBe(403);
      expect((await put(oneAttributeSubject)).status).toBe(200);
      expect((await put(multiValuedSubject)).status).toBe(200);
    });
  });

  test('a writer by subject alone: the same subject from another trusted CA may write too (why the README says to pin the issuer), and the audit line tells them apart', async () => {
    await withFleet([operatorSubject], async ({ put, logs }) => {
      expect((await put(impostor)).status).toBe(200);
      expect(await nodeSpec()).toBe('gossip=debug:info');
      expect((await put(pki.client)).status).toBe(200);
      const audits = logs.records().filter((record) => record.audit === 'fleet.logspec.set');
      expect(audits.map(({ actor, issuer, fingerprint256 }) => ({ actor, issuer, fingerprint256 }))).toEqual([
        { actor: operatorSubject, issuer: 'O=org2,CN=org2 client CA', fingerprint256: fingerprintOf(impostor) },
        { actor: operatorSubject, issuer: ourCASubject, fingerprint256: fingerprintOf(pki.client) },
      ]);
    });
  });

  test('the audit line of a writer pinned to its CA names that CA too', async () => {
    await withFleet([{ subject: operatorSubject, issuerFingerprint: fingerprintOf(pki.clientCA) }], async ({ put, logs }) => {
      expect((await put(pki.client)).status).toBe(200);
      const [audit] = logs.records().filter((record) => record.audit === 'fleet.logspec.set');
      expect(audit).toMatchObject({
        actor: operatorSubject,
        issuer: ourCASubject,
        fingerprint256: fingerprintOf(pki.client),
        issuerFingerprint256: fingerprintOf(pki.clientCA),
      });
    });
  });

  test('a writer pinned to its certificate: another certificate with the same subject from the same CA gets 403', async () => {
    await withFleet([{ fingerprint: fingerprintOf(pki.client).toLowerCase() }], async ({ put }) => {
      expect((await put(sibling)).status).toBe(403);
      expect(await nodeSpec()).toBe('info');
      expect((await put(pki.client)).status).toBe(200);
      expect(await nodeSpec()).toBe('gossip=debug:info');
    });
  });
});

describe('a selector that cannot be honoured is a 400 naming it, never every node', () => {
  test('labels __proto__, constructor, toString, or a label no node has: PUT and DELETE answer 400 naming the key; no node changes, no put-back is cancelled', async () => {
    await withFleet([operatorSubject], async ({ put, write }) => {
      expect((await write('PUT', '{"spec": "gossip=debug:info", "selector": {"labels": {"role": "peer"}}, "ttl": "1h"}')).status).toBe(200);
      node.setLogSpec('info');
      const proto = await put(pki.client, '{"labels": {"__proto__": "x"}}');
      expect([proto.status, errorOf(proto)]).toEqual([400, expect.stringMatching(/^selector\.labels: "__proto__" is not a label key/)]);
      for (const key of ['constructor', 'toString', 'hasOwnProperty', 'zone']) {
        const answer = await put(pki.client, `{"labels": {"${key}": "x"}}`);
        expect([answer.status, errorOf(answer)]).toEqual([400, `selector.labels: no node of the fleet has the label "${key}"`]);
      }
      expect(await nodeSpec()).toBe('info');
      const cancel = await write('DELETE', '{"selector": {"labels": {"__proto__": "x"}}}');
      expect([cancel.status, errorOf(cancel)]).toEqual([400, expect.stringMatching(/^selector\.labels: "__proto__" is not a label key/)]);
      const cancelByConstructor = await write('DELETE', '{"selector": {"labels": {"constructor": "x"}}}');
      expect([cancelByConstructor.status, errorOf(cancelByConstructor)]).toEqual([400, 'selector.labels: no node of the fleet has the label "constructor"']);
      // The put-back is still pending: cancelling it by its label restores the node.
      node.setLogSpec('gossip=debug:info');
      const restored = await write('DELETE', '{"selector": {"labels": {"role": "peer"}}}');
      expect([restored.status, (restored.json as { nodes: Array<{ name: string; result: string }> }).nodes]).toEqual([
        200,
        [expect.objectContaining({ name: 'ops0', result: 'restored' })],
      ]);
      expect(await nodeSpec()).toBe('info');
    });
  });
});
