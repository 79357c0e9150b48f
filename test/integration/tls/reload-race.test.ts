import { X509Certificate } from 'node:crypto';
import { once } from 'node:events';
import fs, { mkdirSync, renameSync, symlinkSync, writeFileSync } from 'node:fs';
import { type Server, createServer, get } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { TLSSocket } from 'node:tls';
import { type TlsMaterial, loadTlsMaterial, secureContextOptions } from '../../../src/tls/material';
import { TlsMaterialWatcher } from '../../../src/tls/watcher';
import { CaptureLoggers } from '../../support/capture-logger';
import { baseTestConfig } from '../../support/config';
import { type KeyPair, createTestPki, secretDirTls, type TestPki } from '../../support/pki';

/**
 * Issue 18, item 13: during a reload storm the files can change between two reads of one poll.
 * The watcher must serve what it compared: here the Secret flips to certificate C just after a
 * poll has read certificate B, and back to B before the next poll. Whatever happens in that
 * window, once the files hold B and polls have run, new connections must get B.
 *
 * The flip is made at the worst moment by wrapping the file-opening functions the watcher may
 * use (fs.readFileSync, fs.open): after the poll has opened the last watched file.
 */

const keys = baseTestConfig().keys;
let pki: TestPki;
let server: Server;

beforeAll(async () => {
  pki = await createTestPki();
});
afterAll(async () => {
  server?.closeAllConnections();
  server?.close();
  await pki.cleanup();
});

function servedFingerprint(): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = get(
      { host: '127.0.0.1', port: (server.address() as AddressInfo).port, path: '/', servername: 'localhost', ca: [pki.serverCA.certPem], agent: false },
      (response) => {
        resolve((response.socket as TLSSocket).getPeerCertificate().fingerprint256);
        response.resume();
      },
    );
    req.once('error', reject);
  });
}

const fingerprintOf = (pair: KeyPair): string => new X509Certificate(pair.certPem).fingerprint256;

it('after the files change between the reads of one poll and back, new connections get the certificate the files hold', async () => {
  const [certB, certC] = await Promise.all([pki.issue('race-b', 'serverCA'), pki.issue('race-c', 'serverCA')]);
  // A Kubernetes-style secret volume with three prepared generations, flipped synchronously.
  const dir = join(pki.dir, 'race-secret');
  mkdirSync(dir);
  const generations: Record<string, KeyPair> = { a: pki.server, b: certB, c: certC };
  for (const [name, pair] of Object.entries(generations)) {
    mkdirSync(join(dir, `..gen-${name}`));
    writeFileSync(join(dir, `..gen-${name}`, 'tls.crt'), pair.certPem);
    writeFileSync(join(dir, `..gen-${name}`, 'tls.key'), pair.keyPem);
    writeFileSync(join(dir, `..gen-${name}`, 'ca.crt'), pki.clientCA.certPem);
  }
  const flip = (name: string): void => {
    symlinkSync(`..gen-${name}`, join(dir, '..data_tmp'));
    renameSync(join(dir, '..data_tmp'), join(dir, '..data'));
  };
  symlinkSync('..gen-a', join(dir, '..data'));
  for (const file of ['tls.crt', 'tls.key', 'ca.crt']) symlinkSync(join('..data', file), join(dir, file));

  const tls = secretDirTls(dir);
  const initial = loadTlsMaterial(tls, keys);
  server = createServer(secureContextOptions(initial), (_request, response) => response.end('ok'));
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const changes: TlsMaterial[] = [];
  const watcher = new TlsMaterialWatcher({
    tls,
    keys,
    logger: new CaptureLoggers().getLogger('operations.tls'),
    current: initial,
    onChange: (next) => {
      changes.push(next);
      server.setSecureContext(secureContextOptions(next));
    },
  });
  expect(await servedFingerprint()).toBe(fingerprintOf(pki.server));

  // Armed: once the poll has opened the CA file (the last one it reads), the secret flips to C.
  let armed = false;
  const flipAfterLastFile = (path: unknown): void => {
    if (armed && path === tls.clientRootCAFiles[0]) {
      armed = false;
      flip('c');
    }
  };
  const readFileSync = fs.readFileSync;
  const spies: Array<{ mockRestore(): void }> = [
    jest.spyOn(fs, 'readFileSync').mockImplementation(((path: fs.PathOrFileDescriptor, options?: unknown) => {
      const result = (readFileSync as (p: unknown, o?: unknown) => string | Buffer)(path, options);
      flipAfterLastFile(path);
      return result;
    }) as typeof fs.readFileSync),
  ];
  const open = fs.open;
  spies.push(
    jest.spyOn(fs, 'open').mockImplementation(((path: fs.PathLike, flags: number, callback: (error: NodeJS.ErrnoException | null, fd: number) => void) => {
      open(path, flags, (error, fd) => {
        flipAfterLastFile(path);
        callback(error, fd);
      });
    }) as unknown as typeof fs.open),
  );
  try {
    flip('b');
    armed = true;
    await watcher.checkNow();
    expect(armed).toBe(false); // the flip did happen inside the poll
    flip('b');
    for (let poll = 0; poll < 3; poll += 1) await watcher.checkNow();
  } finally {
    for (const spy of spies) spy.mockRestore();
  }
  expect(await servedFingerprint()).toBe(fingerprintOf(certB));
  expect(changes.at(-1)?.fingerprint).toBe(fingerprintOf(certB));
});
