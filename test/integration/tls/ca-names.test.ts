import { copyFile, mkdir, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ConfigError } from '../../../src/errors';
import { startOperationsSystem, type OperationsSystem } from '../../../src/system';
import { maxClientCaNamesBytes } from '../../../src/tls/material';
import { testConfig } from '../../support/config';
import { request } from '../../support/http';
import { LogCapture } from '../../support/log-capture';
import { type CertificateAuthority, createCertificateAuthority, createTestPki, type TestPki } from '../../support/pki';
import { waitFor } from '../../support/wait';

/**
 * Issue 18, item 11: the server sends the name of every client root CA in each handshake, in a
 * list a handshake message can hold only up to 64 KiB of. The same CA many times is one CA;
 * distinct CAs whose names cannot fit are refused at start, and on reload the current material
 * keeps serving.
 */

let pki: TestPki;
let bigNameCAs: CertificateAuthority[];
let count = 0;

beforeAll(async () => {
  pki = await createTestPki();
  // 45 CAs with names of about 1.45 KB (20 OUs of 60 characters): about 65.6 KB of names.
  const units = Array.from({ length: 20 }, (_, index) => `/OU=unit${String(index).padStart(2, '0')}-${'x'.repeat(53)}`).join('');
  const dir = join(pki.dir, 'big-name-cas');
  await mkdir(dir);
  bigNameCAs = await Promise.all(
    Array.from({ length: 45 }, (_, index) => createCertificateAuthority(dir, `ca${index}`, `/O=big ${index}${units}/CN=big CA ${index}`)),
  );
});
afterAll(async () => pki.cleanup());

async function freshDir(name: string, caPem: string): Promise<string> {
  const dir = join(pki.dir, `${name}-${++count}`);
  await mkdir(dir);
  await Promise.all([copyFile(pki.server.cert, join(dir, 'tls.crt')), copyFile(pki.server.key, join(dir, 'tls.key')), writeFile(join(dir, 'ca.crt'), caPem)]);
  return dir;
}

function config(dir: string, clientAuthRequired: boolean) {
  return testConfig({
    operations: {
      tls: { enabled: true, certFile: join(dir, 'tls.crt'), keyFile: join(dir, 'tls.key'), clientAuthRequired, clientRootCAFiles: [join(dir, 'ca.crt')] },
    },
    metrics: { provider: 'prometheus' },
  });
}

describe.each([false, true])('the client CA file holds the client CA 2,500 times, clientAuthRequired %s', (clientAuthRequired) => {
  let system: OperationsSystem;
  beforeAll(async () => {
    const dir = await freshDir('same-ca-2500', pki.clientCA.certPem.repeat(2500));
    system = await startOperationsSystem({ config: config(dir, clientAuthRequired), logStream: new LogCapture() });
  });
  afterAll(async () => system.stop());

  it.each(['/healthz', '/logspec'])('%s answers a client of that CA', async (path) => {
    expect((await request(`${system.url}${path}`, { ca: pki.serverCA.certPem, client: pki.client })).status).toBe(200);
  });

  it('still refuses a client of another CA', async () => {
    await expect(request(`${system.url}/logspec`, { ca: pki.serverCA.certPem, client: pki.untrustedClient })).rejects.toThrow();
  });
});

describe('client root CAs whose names a handshake cannot carry', () => {
  it('are refused at start, naming the file, the number of CAs and the bytes', async () => {
    const dir = await freshDir('big-names-at-start', bigNameCAs.map((ca) => ca.certPem).join(''));
    const started = startOperationsSystem({ config: config(dir, false), logStream: new LogCapture() });
    await expect(started).rejects.toThrow(ConfigError);
    await expect(started).rejects.toThrow(
      new RegExp(
        `^operations\\.tls\\.clientRootCAs\\.files: the names of the 45 distinct client root CAs come to (\\d+) bytes \\(${join(dir, 'ca.crt').replace(/[.]/g, '\\.')}: 45 CAs, \\1 bytes\\), more than the ${maxClientCaNamesBytes} bytes a TLS handshake can carry`,
      ),
    );
  });

  it('as many CAs as fit are served', async () => {
    const dir = await freshDir('big-names-fitting', [pki.clientCA, ...bigNameCAs.slice(0, 40)].map((ca) => ca.certPem).join(''));
    const system = await startOperationsSystem({ config: config(dir, true), logStream: new LogCapture() });
    try {
      expect((await request(`${system.url}/healthz`, { ca: pki.serverCA.certPem, client: pki.client })).status).toBe(200);
    } finally {
      await system.stop();
    }
  });

  it('on reload: refused, logged, counted, and the current CAs keep serving', async () => {
    const dir = await freshDir('big-names-on-reload', pki.clientCA.certPem);
    const logs = new LogCapture();
    const system = await startOperationsSystem({
      config: config(dir, true),
      env: { FABRIC_LOGGING_FORMAT: 'json' },
      logStream: logs,
      tlsPollIntervalMs: 50,
    });
    try {
      const path = join(dir, 'ca.crt');
      await writeFile(`${path}.new`, [pki.clientCA, ...bigNameCAs].map((ca) => ca.certPem).join(''));
      await rename(`${path}.new`, path);
      await waitFor('the refused reload logged', () => logs.matching(/TLS material not reloaded/).length > 0, { timeoutMs: 5000 });
      const refused = logs.records().filter((r) => typeof r.msg === 'string' && r.msg.startsWith('TLS material not reloaded'));
      expect(refused.map((r) => r.problem)).toEqual([expect.stringMatching(/the names of the 46 distinct client root CAs come to \d+ bytes/)]);
      for (const p of ['/healthz', '/logspec']) {
        expect((await request(`${system.url}${p}`, { ca: pki.serverCA.certPem, client: pki.client })).status).toBe(200);
      }
      const metrics = await request(`${system.url}/metrics`, { ca: pki.serverCA.certPem, client: pki.client });
      expect(metrics.body).toMatch(/^operations_tls_reload_failures_total 1$/m);
    } finally {
      await system.stop();
    }
  });
});
