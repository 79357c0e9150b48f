import { X509Certificate } from 'node:crypto';
import { copyFile, mkdir, rename, symlink, unlink } from 'node:fs/promises';
import path from 'node:path';
import tls from 'node:tls';
import { DedicatedCaError } from '../../../src/errors';
import { startOperationsSystem, type OperationsSystem } from '../../../src/system';
import { testConfig } from '../../support/config';
import { request } from '../../support/http';
import { LogCapture } from '../../support/log-capture';
import { createTestPki, type KeyPair, type TestPki } from '../../support/pki';
import { waitFor } from '../../support/wait';

let pki: TestPki;
beforeAll(async () => {
  pki = await createTestPki();
});
afterAll(async () => pki.cleanup());

function tlsConfig(clientAuthRequired: boolean, extra: { certFile?: string; keyFile?: string } = {}) {
  return testConfig({
    operations: {
      tls: {
        enabled: true,
        certFile: extra.certFile ?? pki.server.cert,
        keyFile: extra.keyFile ?? pki.server.key,
        clientAuthRequired,
        clientRootCAFiles: [pki.clientCA.cert],
      },
    },
    metrics: { provider: 'prometheus' },
  });
}

/** Serial of the certificate a new TLS connection is served. */
function servedSerial(url: string): Promise<string> {
  const { port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = tls.connect(
      { host: '127.0.0.1', port: Number(port), ca: pki.serverCA.certPem, servername: 'localhost', cert: pki.client.certPem, key: pki.client.keyPem },
      () => {
        const serial = socket.getPeerCertificate().serialNumber;
        socket.end();
        resolve(serial);
      },
    );
    socket.on('error', reject);
  });
}

function serialOf(pair: KeyPair): string {
  return new X509Certificate(pair.certPem).serialNumber;
}

describe.each([false, true])('TLS on, clientAuthRequired %s', (clientAuthRequired) => {
  let system: OperationsSystem;
  let logs: LogCapture;
  beforeAll(async () => {
    logs = new LogCapture();
    system = await startOperationsSystem({ config: tlsConfig(clientAuthRequired), env: { FABRIC_LOGGING_FORMAT: 'json' }, logStream: logs });
  });
  afterAll(async () => system.stop());

  const trusted = () => ({ ca: pki.serverCA.certPem, client: pki.client });
  const anonymous = () => ({ ca: pki.serverCA.certPem });

  it('serves https', () => {
    expect(system.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
  });

  it.each(['/logspec', '/metrics', '/healthz', '/version'])('%s answers 200 to a client certificate from the client CA', async (p) => {
    const answer = await request(`${system.url}${p}`, trusted());
    expect(answer.status).toBe(200);
  });

  it.each(['/healthz', '/version', '/logspec', '/metrics'])('%s refuses an untrusted client certificate at the handshake', async (p) => {
    const before = logs.records().length;
    await expect(request(`${system.url}${p}`, { ca: pki.serverCA.certPem, client: pki.untrustedClient })).rejects.toThrow();
    const after = logs.records().slice(before);
    expect(after.filter((r) => r.msg === 'client certificate required')).toEqual([]);
    if (!clientAuthRequired) {
      expect(after).toEqual([expect.objectContaining({ msg: 'client certificate refused', subject: expect.stringContaining('CN=intruder') })]);
    }
  });

  it('refuses an expired client certificate at the handshake', async () => {
    await expect(request(`${system.url}/healthz`, { ca: pki.serverCA.certPem, client: pki.expiredClient })).rejects.toThrow();
  });

  it('refuses TLS 1.1', async () => {
    await expect(request(`${system.url}/healthz`, { ...trusted(), minVersion: 'TLSv1', maxVersion: 'TLSv1.1' })).rejects.toThrow();
  });

  it('accepts TLS 1.2', async () => {
    expect((await request(`${system.url}/healthz`, { ...trusted(), maxVersion: 'TLSv1.2' })).status).toBe(200);
  });

  it('logs a logspec change with the client certificate subject', async () => {
    const put = await request(`${system.url}/logspec`, { ...trusted(), method: 'PUT', body: '{"spec":"debug"}' });
    expect(put.status).toBe(204);
    const record = logs.records().find((r) => typeof r.msg === 'string' && r.msg.startsWith('logging specification changed'));
    expect(record).toMatchObject({ previous: 'info', current: 'debug' });
    expect(String(record?.certificateSubject)).toContain('CN=operator');
    system.setLogSpec('info');
  });

  if (clientAuthRequired) {
    it.each(['/healthz', '/version', '/logspec'])('%s fails the handshake without a client certificate', async (p) => {
      await expect(request(`${system.url}${p}`, anonymous())).rejects.toThrow();
    });
  } else {
    it.each(['/healthz', '/version'])('%s answers 200 without a client certificate', async (p) => {
      expect((await request(`${system.url}${p}`, anonymous())).status).toBe(200);
    });

    it('OPTIONS /logspec answers 204 with Allow without a client certificate', async () => {
      const answer = await request(`${system.url}/logspec`, { ...anonymous(), method: 'OPTIONS' });
      expect(answer.status).toBe(204);
      expect(answer.headers.allow).toBe('GET, HEAD, PUT, OPTIONS');
    });

    it.each([
      ['GET', '/logspec'],
      ['PUT', '/logspec'],
      ['GET', '/metrics'],
      // A method the path does not take: the certificate is asked for before the 405.
      ['DELETE', '/logspec'],
    ])('%s %s answers 401 JSON without a client certificate and logs a warning', async (method, p) => {
      const answer = await request(`${system.url}${p}`, { ...anonymous(), method, body: method === 'PUT' ? '{"spec":"debug"}' : undefined });
      expect(answer.status).toBe(401);
      expect((answer.json as { error: string }).error).toMatch(/client certificate/);
      const warning = logs.records().find((r) => r.msg === 'client certificate required' && r.path === p && r.method === method);
      expect(warning).toMatchObject({ remoteAddress: expect.stringMatching(/127\.0\.0\.1/) });
      expect(system.getLogSpec()).toBe('info');
    });
  }
});

describe('TLS off', () => {
  it('everything is open over plain HTTP', async () => {
    const system = await startOperationsSystem({ config: testConfig({ metrics: { provider: 'prometheus' } }), env: {}, logStream: new LogCapture() });
    try {
      for (const p of ['/logspec', '/metrics', '/healthz', '/version']) {
        expect((await request(`${system.url}${p}`)).status).toBe(200);
      }
      expect((await request(`${system.url}/logspec`, { method: 'PUT', body: '{"spec":"warn"}' })).status).toBe(204);
    } finally {
      await system.stop();
    }
  });
});

describe('the dedicated-CA rule', () => {
  function orgConfig(requireDedicatedCA: boolean) {
    const config = tlsConfig(false, { certFile: pki.serverByOrgCA.cert, keyFile: pki.serverByOrgCA.key });
    config.operations.tls.requireDedicatedCA = requireDedicatedCA;
    config.organizationCAs = { files: [pki.orgCA.cert], dirs: [] };
    return config;
  }

  it('warns, naming both certificates, when the server certificate comes from an organization CA', async () => {
    const logs = new LogCapture();
    const system = await startOperationsSystem({ config: orgConfig(false), env: { FABRIC_LOGGING_FORMAT: 'json' }, logStream: logs });
    await system.stop();
    const warning = logs.records().find((r) => r.caFile === pki.orgCA.cert);
    expect(warning).toBeDefined();
    expect(String(warning?.msg)).toContain(pki.orgCA.cert);
  });

  it('refuses to start when requireDedicatedCA is set', async () => {
    await expect(startOperationsSystem({ config: orgConfig(true), env: {}, logStream: new LogCapture() })).rejects.toBeInstanceOf(DedicatedCaError);
  });

  it('says nothing when the server certificate comes from its own CA', async () => {
    const logs = new LogCapture();
    const config = tlsConfig(false);
    config.organizationCAs = { files: [pki.orgCA.cert], dirs: [] };
    const system = await startOperationsSystem({ config, env: { FABRIC_LOGGING_FORMAT: 'json' }, logStream: logs });
    await system.stop();
    expect(logs.records().filter((r) => r.caFile !== undefined)).toEqual([]);
  });
});

describe('certificate rotation on a live server', () => {
  it('serves a new certificate written in place, refuses a mismatched pair, follows a Kubernetes symlink swap', async () => {
    // Kubernetes secret layout: tls.crt -> ..data/tls.crt, ..data -> ..<timestamp>/
    const secret = path.join(pki.dir, 'secret');
    const first = path.join(secret, '..v1');
    await mkdir(first, { recursive: true });
    await copyFile(pki.server.cert, path.join(first, 'tls.crt'));
    await copyFile(pki.server.key, path.join(first, 'tls.key'));
    await symlink('..v1', path.join(secret, '..data'));
    await symlink('..data/tls.crt', path.join(secret, 'tls.crt'));
    await symlink('..data/tls.key', path.join(secret, 'tls.key'));

    const logs = new LogCapture();
    const config = tlsConfig(false, { certFile: path.join(secret, 'tls.crt'), keyFile: path.join(secret, 'tls.key') });
    const system = await startOperationsSystem({ config, env: { FABRIC_LOGGING_FORMAT: 'json' }, logStream: logs, tlsPollIntervalMs: 100 });
    try {
      expect(await servedSerial(system.url)).toBe(serialOf(pki.server));

      // A mismatched pair (new cert, old key) is refused; the old material stays.
      const second = await pki.issue('rotated-1', 'serverCA', { cn: 'localhost' });
      const mismatched = path.join(secret, '..v2');
      await mkdir(mismatched);
      await copyFile(second.cert, path.join(mismatched, 'tls.crt'));
      await copyFile(pki.server.key, path.join(mismatched, 'tls.key'));
      await symlink('..v2', path.join(secret, '..data_tmp'));
      await rename(path.join(secret, '..data_tmp'), path.join(secret, '..data'));
      await waitFor('an error line', () => logs.records().some((r) => r.level !== undefined && Number(r.level) >= 50), { timeoutMs: 5000 });
      expect(await servedSerial(system.url)).toBe(serialOf(pki.server));

      // The matching pair arrives by an atomic symlink swap: new connections get it.
      const good = path.join(secret, '..v3');
      await mkdir(good);
      await copyFile(second.cert, path.join(good, 'tls.crt'));
      await copyFile(second.key, path.join(good, 'tls.key'));
      await symlink('..v3', path.join(secret, '..data_tmp'));
      await rename(path.join(secret, '..data_tmp'), path.join(secret, '..data'));
      await waitFor('the second certificate served', async () => (await servedSerial(system.url)) === serialOf(second), { timeoutMs: 5000 });
      expect((await request(`${system.url}/logspec`, { ca: pki.serverCA.certPem, client: pki.client })).status).toBe(200);
    } finally {
      await system.stop();
      await unlink(path.join(secret, 'tls.crt')).catch(() => undefined);
    }
  });
});
