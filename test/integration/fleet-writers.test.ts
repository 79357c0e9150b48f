/**
 * Who may write to the fleet, over real mTLS: a writer given by subject alone matches a
 * certificate with that subject from any CA the server trusts for clients (another org's CA can
 * issue it); a writer pinned to its issuer or to its certificate's fingerprint does not.
 */
import { X509Certificate } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { fleetConfigFrom, fleetExtension } from '../../src/fleet';
import { startOperationsSystem, type OperationsSystem } from '../../src/system';
import { testConfig } from '../support/config';
import { request, type HttpAnswer } from '../support/http';
import { fleetWrite } from './fleet-harness';
import { createCertificateAuthority, createTestPki, serverTls, type CertificateAuthority, type KeyPair, type TestPki } from '../support/pki';

jest.setTimeout(60_000);

let pki: TestPki;
let otherCA: CertificateAuthority;
/** O=fabric-ops tests,CN=operator from another trusted client CA (another org's). */
let impostor: KeyPair;
/** The same subject from the same CA as pki.client, another key. */
let sibling: KeyPair;
let node: OperationsSystem;
let stateDir: string;

const devNull = (): NodeJS.WritableStream => new Writable({ write: (_chunk, _encoding, done) => done() });
const operatorSubject = 'O=fabric-ops tests,CN=operator';

beforeAll(async () => {
  pki = await createTestPki();
  otherCA = await createCertificateAuthority(pki.dir, 'org2-client-ca', '/O=org2/CN=org2 client CA');
  impostor = await pki.issue('impostor', otherCA, { usage: 'client', cn: 'operator' });
  sibling = await pki.issue('sibling', 'clientCA', { usage: 'client', cn: 'operator' });
  node = await startOperationsSystem({ config: testConfig({ operations: { tls: serverTls(pki) } }), logStream: devNull() });
  stateDir = await mkdtemp(path.join(tmpdir(), 'fabric-ops-fleet-writers-'));
});

afterAll(async () => {
  await node?.stop();
  await rm(stateDir, { recursive: true, force: true });
  await pki?.cleanup();
});

/** A fleet server trusting both client CAs, with these writers, over the one node. */
async function withFleet(
  writers: unknown[],
  run: (call: (client: KeyPair) => Promise<HttpAnswer>) => Promise<void>,
  more: (fleetUrl: string) => Promise<void> = async () => undefined,
): Promise<void> {
  const config = fleetConfigFrom(
    {
      stateDirectory: stateDir,
      pollInterval: '0s',
      minRoundInterval: '0s',
      writers,
      groups: { ops: { tls: { caFiles: [pki.serverCA.cert], certFile: pki.client.cert, keyFile: pki.client.key } } },
      nodes: [{ name: 'ops0', url: node.url, group: 'ops' }],
    },
    path.join(stateDir, 'fleet.yaml'),
  );
  const fleet = await startOperationsSystem({
    config: testConfig({ operations: { tls: { ...serverTls(pki), clientRootCAFiles: [pki.clientCA.cert, otherCA.cert] } } }),
    logStream: devNull(),
    extensions: [fleetExtension(config)],
  });
  try {
    await run((client) =>
      request(`${fleet.url}/fleet/logspec`, {
        method: 'PUT',
        ca: pki.serverCA.certPem,
        client,
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ spec: 'gossip=debug:info', selector: {} }),
      }),
    );
    await more(fleet.url);
  } finally {
    await fleet.stop();
    node.setLogSpec('info');
  }
}

async function nodeSpec(): Promise<string> {
  const answer = await request(`${node.url}/logspec`, { ca: pki.serverCA.certPem, client: pki.client });
  return (answer.json as { spec: string }).spec;
}

test('a writer by subject alone: the same subject from another trusted CA may write too (why the README says to pin it)', async () => {
  await withFleet([operatorSubject], async (put) => {
    expect((await put(impostor)).status).toBe(200);
    expect(await nodeSpec()).toBe('gossip=debug:info');
  });
});

test('a writer pinned to its issuer: the same subject from another trusted CA gets 403 naming both, and no node changes', async () => {
  await withFleet([{ subject: operatorSubject, issuer: 'O=fabric-ops tests,CN=fabric-ops test client CA' }], async (put) => {
    const refused = await put(impostor);
    expect(refused.status).toBe(403);
    expect((refused.json as { error: string }).error).toBe(
      `client "${operatorSubject}" (issued by "O=org2,CN=org2 client CA") may not change the fleet; writers are listed in ${path.join(stateDir, 'fleet.yaml')} (writers)`,
    );
    expect(await nodeSpec()).toBe('info');
    expect((await put(pki.client)).status).toBe(200);
    expect(await nodeSpec()).toBe('gossip=debug:info');
  });
});

test('a DELETE whose selector names no node of the fleet is 400 naming it, as a PUT is', async () => {
  await withFleet(
    [operatorSubject],
    async () => undefined,
    async (fleetUrl) => {
      const answer = await fleetWrite(fleetUrl, pki, 'DELETE', { selector: { names: ['nope'] } });
      expect(answer.status).toBe(400);
      expect((answer.json as { error: string }).error).toBe('selector.names: no node named "nope" in the fleet');
    },
  );
});

test('a writer pinned to its certificate: another certificate with the same subject from the same CA gets 403', async () => {
  const fingerprint = new X509Certificate(pki.client.certPem).fingerprint256.toLowerCase();
  await withFleet([{ fingerprint }], async (put) => {
    expect((await put(sibling)).status).toBe(403);
    expect(await nodeSpec()).toBe('info');
    expect((await put(pki.client)).status).toBe(200);
    expect(await nodeSpec()).toBe('gossip=debug:info');
  });
});
