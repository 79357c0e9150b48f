import { X509Certificate } from 'node:crypto';
import { startOperationsSystem, type OperationsSystem } from '../../../src/system';
import { testConfig } from '../../support/config';
import { request } from '../../support/http';
import { LogCapture } from '../../support/log-capture';
import { createTestPki, type KeyPair, type TestPki } from '../../support/pki';
import { waitFor } from '../../support/wait';

/**
 * Issue 18, item 5: an intermediate CA configured alone in clientRootCAs is a trust anchor, as
 * in Fabric (Go puts every configured CA in its root pool, self-signed or not). A client it
 * issued is served; a client of a sibling intermediate (same root, not configured) is refused,
 * whether it sends its leaf alone or its whole chain up to the root.
 */

let pki: TestPki;
let intermediate: KeyPair;
let operator: KeyPair;
let sibling: KeyPair;
let expiredUnderIntermediate: KeyPair;
let serverEkuUnderIntermediate: KeyPair;
/** Leaf, its intermediate and the root, as a client that sends its whole chain. */
let siblingWithChain: KeyPair;

beforeAll(async () => {
  pki = await createTestPki();
  intermediate = await pki.issue('client-intermediate', 'clientCA', { usage: 'ca', cn: 'client intermediate CA' });
  const siblingCA = await pki.issue('sibling-intermediate', 'clientCA', { usage: 'ca', cn: 'sibling intermediate CA' });
  [operator, sibling, expiredUnderIntermediate, serverEkuUnderIntermediate] = await Promise.all([
    pki.issue('intermediate-operator', intermediate, { usage: 'client', cn: 'intermediate-operator' }),
    pki.issue('sibling-operator', siblingCA, { usage: 'client', cn: 'sibling-operator' }),
    pki.issue('intermediate-expiring', intermediate, { usage: 'client', cn: 'intermediate-expiring', days: 0 }),
    pki.issue('intermediate-server-eku', intermediate, { usage: 'server', cn: 'intermediate-server-eku' }),
  ]);
  siblingWithChain = { ...sibling, certPem: `${sibling.certPem}${siblingCA.certPem}${pki.clientCA.certPem}` };
});
afterAll(async () => pki.cleanup());

/** Until a second past `pair`'s notAfter (kept to the second): expired for every verifier. */
async function pastNotAfter(name: string, pair: KeyPair): Promise<void> {
  const notAfter = Date.parse(new X509Certificate(pair.certPem).validTo);
  await waitFor(`${name} past its notAfter`, () => Date.now() >= notAfter + 1000, { everyMs: 100 });
}

describe.each([false, true])('an intermediate CA alone in clientRootCAs, clientAuthRequired %s', (clientAuthRequired) => {
  let system: OperationsSystem;
  beforeAll(async () => {
    system = await startOperationsSystem({
      config: testConfig({
        operations: {
          tls: { enabled: true, certFile: pki.server.cert, keyFile: pki.server.key, clientAuthRequired, clientRootCAFiles: [intermediate.cert] },
        },
      }),
      env: { FABRIC_LOGGING_FORMAT: 'json' },
      logStream: new LogCapture(),
    });
  });
  afterAll(async () => system.stop());

  it.each(['/healthz', '/logspec'])('%s answers 200 to a client the intermediate issued', async (path) => {
    const answer = await request(`${system.url}${path}`, { ca: pki.serverCA.certPem, client: operator });
    expect(answer.status).toBe(200);
  });

  it('answers to that client over TLS 1.2 too', async () => {
    const answer = await request(`${system.url}/logspec`, { ca: pki.serverCA.certPem, client: operator, maxVersion: 'TLSv1.2' });
    expect(answer.status).toBe(200);
  });

  it.each([
    ['a sibling intermediate, leaf alone', () => sibling],
    ['a sibling intermediate, whole chain to the shared root', () => siblingWithChain],
  ])('refuses a client of %s at the handshake', async (_name, client) => {
    for (const path of ['/healthz', '/logspec']) {
      await expect(request(`${system.url}${path}`, { ca: pki.serverCA.certPem, client: client() })).rejects.toThrow();
    }
  });

  it('still refuses an expired client, and a server-only EKU, issued by the intermediate', async () => {
    // days: 0 makes a certificate whose notAfter is its notBefore: expired by the time it is used.
    await pastNotAfter('the expiring client', expiredUnderIntermediate);
    await expect(request(`${system.url}/healthz`, { ca: pki.serverCA.certPem, client: expiredUnderIntermediate })).rejects.toThrow();
    await expect(request(`${system.url}/healthz`, { ca: pki.serverCA.certPem, client: serverEkuUnderIntermediate })).rejects.toThrow();
  });
});

describe('an intermediate CA alone in clientRootCAs, past its own notAfter', () => {
  let system: OperationsSystem;
  let client: KeyPair;
  beforeAll(async () => {
    // days: 0 gives notAfter = notBefore: expired a second later. OpenSSL does not check the dates
    // of a trust anchor that is not self-signed; Go (Fabric) refuses a chain through an expired root.
    const expiredCA = await pki.issue('expired-intermediate', 'clientCA', { usage: 'ca', cn: 'expired intermediate CA', days: 0 });
    client = await pki.issue('expired-intermediate-operator', expiredCA, { usage: 'client', cn: 'expired-intermediate-operator' });
    await pastNotAfter('the expired intermediate', expiredCA);
    system = await startOperationsSystem({
      config: testConfig({
        operations: {
          tls: { enabled: true, certFile: pki.server.cert, keyFile: pki.server.key, clientAuthRequired: true, clientRootCAFiles: [expiredCA.cert] },
        },
      }),
      env: { FABRIC_LOGGING_FORMAT: 'json' },
      logStream: new LogCapture(),
    });
  });
  afterAll(async () => system.stop());

  it('refuses the clients it issued', async () => {
    await expect(request(`${system.url}/healthz`, { ca: pki.serverCA.certPem, client })).rejects.toThrow();
  });
});

describe('the intermediate judged by the system clock (StartOptions.clock), as every other date', () => {
  it('a clock past the intermediate notAfter leaves it out at start: its clients are refused; the real clock serves them', async () => {
    const later = Date.now() + 400 * 86_400_000; // the intermediate is valid 365 days
    const start = (clock?: { now(): number }): Promise<OperationsSystem> =>
      startOperationsSystem({
        config: testConfig({
          operations: {
            tls: { enabled: true, certFile: pki.server.cert, keyFile: pki.server.key, clientAuthRequired: true, clientRootCAFiles: [intermediate.cert] },
          },
        }),
        env: { FABRIC_LOGGING_FORMAT: 'json' },
        logStream: new LogCapture(),
        ...(clock ? { clock } : {}),
      });
    const future = await start({ now: () => later });
    try {
      await expect(request(`${future.url}/healthz`, { ca: pki.serverCA.certPem, client: operator })).rejects.toThrow();
    } finally {
      await future.stop();
    }
    const present = await start();
    try {
      expect((await request(`${present.url}/healthz`, { ca: pki.serverCA.certPem, client: operator })).status).toBe(200);
    } finally {
      await present.stop();
    }
  });
});
