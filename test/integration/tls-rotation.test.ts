import { X509Certificate } from 'node:crypto';
import { once } from 'node:events';
import { type Server, createServer, get } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { TLSSocket } from 'node:tls';
import type { TlsConfig } from '../../src/config/types';
import { loadTlsMaterial, secureContextOptions } from '../../src/tls/material';
import { TlsMaterialWatcher } from '../../src/tls/watcher';
import { CaptureLoggers } from '../support/capture-logger';
import { baseTestConfig } from '../support/config';
import { type KeyPair, type KubernetesSecretVolume, createKubernetesSecretVolume, createTestPki, type TestPki } from '../support/pki';

/**
 * Certificate rotation on a live HTTPS server: the files sit in a Kubernetes-style secret
 * volume, the watcher polls at its default period, and new connections must see the new
 * material within 5 seconds (the requirement), checked by polling with that deadline.
 */

const keys = baseTestConfig().keys;
const rotationDeadlineMs = 5000;
let pki: TestPki;
let volume: KubernetesSecretVolume;
let server: Server;
let port: number;
let watcher: TlsMaterialWatcher;
const logs = new CaptureLoggers();

beforeAll(async () => {
  pki = await createTestPki();
  volume = await createKubernetesSecretVolume(join(pki.dir, 'secret'), {
    'tls.crt': pki.server.certPem,
    'tls.key': pki.server.keyPem,
    'ca.crt': pki.clientCA.certPem,
  });
  const tls: TlsConfig = {
    enabled: true,
    certFile: join(volume.dir, 'tls.crt'),
    keyFile: join(volume.dir, 'tls.key'),
    clientAuthRequired: false,
    clientRootCAFiles: [join(volume.dir, 'ca.crt')],
    requireDedicatedCA: false,
  };
  const material = loadTlsMaterial(tls, keys);
  server = createServer({ ...secureContextOptions(material), requestCert: true, rejectUnauthorized: false }, (request, response) => {
    const socket = request.socket as TLSSocket;
    response.end(socket.authorized ? 'authorized' : `unauthorized: ${String(socket.authorizationError)}`);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  port = (server.address() as AddressInfo).port;
  watcher = new TlsMaterialWatcher({
    tls,
    keys,
    logger: logs.getLogger('operations.tls'),
    current: material,
    onChange: (next) => server.setSecureContext(secureContextOptions(next)),
  });
  watcher.start();
});

afterAll(async () => {
  watcher?.stop();
  server?.closeAllConnections();
  server?.close();
  await pki?.cleanup();
});

interface Served {
  fingerprint: string;
  body: string;
}

/** One request on a new connection (no agent, so no reused session or socket). */
function request(client?: KeyPair): Promise<Served> {
  return new Promise((resolve, reject) => {
    const req = get(
      {
        host: '127.0.0.1',
        port,
        path: '/',
        servername: 'localhost',
        ca: [pki.serverCA.certPem],
        agent: false,
        ...(client ? { cert: client.certPem, key: client.keyPem } : {}),
      },
      (response) => {
        const fingerprint = (response.socket as TLSSocket).getPeerCertificate().fingerprint256;
        let body = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (body += chunk));
        response.once('end', () => resolve({ fingerprint, body }));
      },
    );
    req.once('error', reject);
  });
}

/** Polls until `check` holds or the deadline passes; returns the last value seen. */
async function pollUntil<T>(probe: () => Promise<T>, check: (value: T) => boolean, deadlineMs: number): Promise<T> {
  const deadline = Date.now() + deadlineMs;
  for (;;) {
    const value = await probe();
    if (check(value) || Date.now() >= deadline) return value;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

const fingerprintOf = (pair: KeyPair): string => new X509Certificate(pair.certPem).fingerprint256;

describe('certificate rotation on a live server', () => {
  it('serves the certificate of the secret as mounted at start', async () => {
    expect((await request()).fingerprint).toBe(fingerprintOf(pki.server));
  });

  it('serves a rotated certificate to new connections within 5 seconds of a secret update', async () => {
    const rotated = await pki.issue('rotated-live', 'serverCA');
    await volume.update({ 'tls.crt': rotated.certPem, 'tls.key': rotated.keyPem, 'ca.crt': pki.clientCA.certPem });
    const served = await pollUntil(request, (s) => s.fingerprint === fingerprintOf(rotated), rotationDeadlineMs);
    expect(served.fingerprint).toBe(fingerprintOf(rotated));
    expect(logs.find('info', /TLS material reloaded/).map((e) => e.fields.fingerprint)).toEqual([fingerprintOf(rotated)]);
  });

  it('trusts a new client CA within 5 seconds of a secret update', async () => {
    const current = await request();
    expect((await request(pki.untrustedClient)).body).toMatch(/^unauthorized: /);
    const rotated = await pki.issue('rotated-live-2', 'serverCA');
    await volume.update({ 'tls.crt': rotated.certPem, 'tls.key': rotated.keyPem, 'ca.crt': `${pki.clientCA.certPem}${pki.untrustedCA.certPem}` });
    const served = await pollUntil(() => request(pki.untrustedClient), (s) => s.body === 'authorized', rotationDeadlineMs);
    expect(served.body).toBe('authorized');
    expect(served.fingerprint).not.toBe(current.fingerprint);
    expect((await request(pki.client)).body).toBe('authorized');
  });

  it('keeps serving the current certificate when the secret holds a mismatched pair, and logs it once', async () => {
    const before = await request();
    const stray = await pki.issue('stray', 'serverCA');
    const errorsBefore = logs.find('error', /TLS material not reloaded/).length;
    await volume.update({ 'tls.crt': stray.certPem, 'tls.key': pki.server.keyPem, 'ca.crt': pki.clientCA.certPem });
    // The watcher has seen the update once it has logged the refusal.
    await pollUntil(async () => logs.find('error', /TLS material not reloaded/).length, (n) => n > errorsBefore, rotationDeadlineMs);
    const errors = logs.find('error', /TLS material not reloaded/).slice(errorsBefore);
    expect(errors.map((e) => e.msg)).toEqual([expect.stringContaining('does not match the certificate')]);
    expect((await request()).fingerprint).toBe(before.fingerprint);
  });
});
