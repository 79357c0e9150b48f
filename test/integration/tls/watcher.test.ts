import { X509Certificate } from 'node:crypto';
import { lstatSync, readlinkSync } from 'node:fs';
import { copyFile, mkdir, mkdtemp, rm, truncate, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TlsConfig } from '../../../src/config/types';
import { type TlsMaterial, buildTlsMaterial, loadTlsMaterial } from '../../../src/tls/material';
import { TlsMaterialWatcher } from '../../../src/tls/watcher';
import * as files from '../../../src/tls/files';
import { CaptureLoggers } from '../../support/capture-logger';
import { baseTestConfig } from '../../support/config';
import { type KeyPair, createKubernetesSecretVolume, createTestPki, secretDirTls, type TestPki } from '../../support/pki';

const keys = baseTestConfig().keys;
let pki: TestPki;
let root: string;
let caseCount = 0;

beforeAll(async () => {
  pki = await createTestPki();
  root = await mkdtemp(join(tmpdir(), 'fabric-ops-watcher-'));
});
afterAll(async () => {
  await pki.cleanup();
  await rm(root, { recursive: true, force: true });
});

const fingerprintOf = (pair: KeyPair): string => new X509Certificate(pair.certPem).fingerprint256;

interface Harness {
  dir: string;
  tls: TlsConfig;
  watcher: TlsMaterialWatcher;
  logs: CaptureLoggers;
  changes: TlsMaterial[];
  initial: TlsMaterial;
}

/** Plain files tls.crt, tls.key, ca.crt in a fresh directory, holding pki.server and pki.clientCA. */
async function plainFiles(onChange?: (material: TlsMaterial) => void): Promise<Harness> {
  const dir = join(root, `case-${++caseCount}`);
  await mkdir(dir);
  await Promise.all([
    copyFile(pki.server.cert, join(dir, 'tls.crt')),
    copyFile(pki.server.key, join(dir, 'tls.key')),
    copyFile(pki.clientCA.cert, join(dir, 'ca.crt')),
  ]);
  return harness(dir, onChange);
}

function harness(dir: string, onChange?: (material: TlsMaterial) => void): Harness {
  const tls = secretDirTls(dir);
  const logs = new CaptureLoggers();
  const changes: TlsMaterial[] = [];
  const initial = loadTlsMaterial(tls, keys);
  const watcher = new TlsMaterialWatcher({
    tls,
    keys,
    logger: logs.getLogger('operations.tls'),
    current: initial,
    onChange: (material) => {
      onChange?.(material);
      changes.push(material);
    },
  });
  return { dir, tls, watcher, logs, changes, initial };
}

describe('TlsMaterialWatcher', () => {
  it('does nothing while the files stay the same', async () => {
    const h = await plainFiles();
    await h.watcher.checkNow();
    await h.watcher.checkNow();
    expect(h.changes).toEqual([]);
    expect(h.logs.entries).toEqual([]);
  });

  it('hands over new material when the certificate and key files are rewritten, and logs its subject, serial and expiry', async () => {
    const h = await plainFiles();
    const next = await pki.issue('rewritten', 'serverCA', { cn: 'localhost' });
    await writeFile(h.tls.certFile, next.certPem);
    await writeFile(h.tls.keyFile, next.keyPem);
    await h.watcher.checkNow();

    expect(h.changes.map((m) => m.fingerprint)).toEqual([fingerprintOf(next)]);
    const parsed = new X509Certificate(next.certPem);
    const [entry, ...others] = h.logs.find('info', /TLS material reloaded/);
    expect(others).toEqual([]);
    expect(entry?.msg).toContain('subject "O=fabric-ops tests, CN=localhost"');
    expect(entry?.msg).toContain(`serial ${parsed.serialNumber}`);
    expect(entry?.msg).toContain(`valid until ${new Date(parsed.validTo).toISOString()}`);
    expect(entry?.fields).toMatchObject({ serial: parsed.serialNumber, fingerprint: parsed.fingerprint256, certificateChanged: true });

    await h.watcher.checkNow();
    expect(h.changes).toHaveLength(1);
  });

  it('hands over new client root CAs when only the CA file changes', async () => {
    const h = await plainFiles();
    await writeFile(join(h.dir, 'ca.crt'), `${pki.clientCA.certPem}${pki.untrustedCA.certPem}`);
    await h.watcher.checkNow();
    expect(h.changes).toHaveLength(1);
    expect(h.changes[0]?.clientCAPems).toHaveLength(2);
    expect(h.changes[0]?.fingerprint).toBe(h.initial.fingerprint);
    expect(h.logs.find('info', /TLS material reloaded/)[0]?.fields).toMatchObject({ certificateChanged: false, clientRootCAsChanged: true });
  });

  it('follows a Kubernetes secret update that re-points the ..data symlink', async () => {
    const volume = await createKubernetesSecretVolume(join(root, `secret-${++caseCount}`), {
      'tls.crt': pki.server.certPem,
      'tls.key': pki.server.keyPem,
      'ca.crt': pki.clientCA.certPem,
    });
    const h = harness(volume.dir);
    expect(lstatSync(h.tls.certFile).isSymbolicLink()).toBe(true);
    const firstTarget = readlinkSync(join(volume.dir, '..data'));
    await h.watcher.checkNow();
    expect(h.changes).toEqual([]);

    const next = await pki.issue('k8s-rotated', 'serverCA');
    await volume.update({ 'tls.crt': next.certPem, 'tls.key': next.keyPem, 'ca.crt': pki.clientCA.certPem });
    expect(readlinkSync(join(volume.dir, '..data'))).not.toBe(firstTarget);
    await h.watcher.checkNow();
    expect(h.changes.map((m) => m.fingerprint)).toEqual([fingerprintOf(next)]);

    const third = await pki.issue('k8s-rotated-again', 'serverCA');
    await volume.update({ 'tls.crt': third.certPem, 'tls.key': third.keyPem, 'ca.crt': pki.clientCA.certPem });
    await h.watcher.checkNow();
    expect(h.changes.map((m) => m.fingerprint)).toEqual([fingerprintOf(next), fingerprintOf(third)]);
  });

  it('keeps the old material while the key is half written, logs the error once, then takes the completed pair', async () => {
    const h = await plainFiles();
    const next = await pki.issue('half-written', 'serverCA');
    await writeFile(h.tls.certFile, next.certPem);
    await writeFile(h.tls.keyFile, next.keyPem.slice(0, Math.floor(next.keyPem.length / 2)));
    await h.watcher.checkNow();
    await h.watcher.checkNow();
    await h.watcher.checkNow();

    expect(h.changes).toEqual([]);
    const errors = h.logs.find('error', /TLS material not reloaded/);
    expect(errors).toHaveLength(1);
    expect(errors[0]?.msg).toContain(`operations.tls.key.file: ${h.tls.keyFile} holds an incomplete PEM block`);
    expect(errors[0]?.fields).toMatchObject({ fingerprint: h.initial.fingerprint });

    await writeFile(h.tls.keyFile, next.keyPem);
    await h.watcher.checkNow();
    expect(h.changes.map((m) => m.fingerprint)).toEqual([fingerprintOf(next)]);
    expect(h.logs.find('error', /./)).toHaveLength(1);
  });

  it('refuses a certificate with a key that does not match it', async () => {
    const h = await plainFiles();
    const next = await pki.issue('mismatched', 'serverCA');
    await writeFile(h.tls.certFile, next.certPem);
    await h.watcher.checkNow();
    await h.watcher.checkNow();

    expect(h.changes).toEqual([]);
    const errors = h.logs.find('error', /TLS material not reloaded/);
    expect(errors).toHaveLength(1);
    expect(errors[0]?.msg).toContain(`the key in ${h.tls.keyFile} does not match the certificate in ${h.tls.certFile}`);
  });

  it('logs a new, different failure once too, and a repeated failure again after a success', async () => {
    const h = await plainFiles();
    const next = await pki.issue('failures', 'serverCA');
    await writeFile(h.tls.certFile, next.certPem); // mismatched
    await h.watcher.checkNow();
    await writeFile(h.tls.keyFile, 'junk\n'); // no key
    await h.watcher.checkNow();
    await h.watcher.checkNow();
    await writeFile(h.tls.keyFile, next.keyPem);
    await h.watcher.checkNow();
    await writeFile(h.tls.keyFile, 'junk\n');
    await h.watcher.checkNow();

    expect(h.logs.find('error', /./).map((e) => e.fields.problem)).toEqual([
      expect.stringContaining('does not match'),
      expect.stringContaining('holds no PEM private key'),
      expect.stringContaining('holds no PEM private key'),
    ]);
    expect(h.changes).toHaveLength(1);
  });

  it('keeps the old material and does not retry when onChange refuses the new one', async () => {
    let refusals = 0;
    const h = await plainFiles(() => {
      refusals += 1;
      throw new Error('chains to an organization CA');
    });
    const next = await pki.issue('refused', 'orgCA');
    await writeFile(h.tls.certFile, next.certPem);
    await writeFile(h.tls.keyFile, next.keyPem);
    await h.watcher.checkNow();
    await h.watcher.checkNow();

    expect(refusals).toBe(1);
    expect(h.logs.find('error', /new TLS material refused: chains to an organization CA/)).toHaveLength(1);
    expect(h.logs.find('info', /reloaded/)).toEqual([]);
  });

  it('never lets an exception out of a poll: logged once with its type, counted, retried, the old material kept', async () => {
    const dir = join(root, `case-${++caseCount}`);
    await mkdir(dir);
    await Promise.all([
      copyFile(pki.server.cert, join(dir, 'tls.crt')),
      copyFile(pki.server.key, join(dir, 'tls.key')),
      copyFile(pki.clientCA.cert, join(dir, 'ca.crt')),
    ]);
    const tls = secretDirTls(dir);
    const logs = new CaptureLoggers();
    let failures = 0;
    let fault: Error | null = new RangeError('Maximum call stack size exceeded');
    const changes: TlsMaterial[] = [];
    const watcher = new TlsMaterialWatcher({
      tls,
      keys,
      logger: logs.getLogger('operations.tls'),
      current: loadTlsMaterial(tls, keys),
      failures: { add: (delta) => (failures += delta) },
      build: (config, configKeys, read, now) => {
        if (fault) throw fault;
        return buildTlsMaterial(config, configKeys, read, now);
      },
      onChange: (material) => changes.push(material),
    });
    const next = await pki.issue('fault', 'serverCA');
    await writeFile(tls.certFile, next.certPem);
    await writeFile(tls.keyFile, next.keyPem);
    await expect(watcher.checkNow()).resolves.toBeUndefined();
    await expect(watcher.checkNow()).resolves.toBeUndefined();
    expect(changes).toEqual([]);
    expect(failures).toBe(1);
    expect(logs.find('error', /./).map((e) => e.msg)).toEqual([
      'TLS material not reloaded, keeping the current certificate: RangeError: Maximum call stack size exceeded',
    ]);

    fault = null;
    await watcher.checkNow();
    expect(changes.map((m) => m.fingerprint)).toEqual([fingerprintOf(next)]);
    expect(failures).toBe(1);
  });

  it('a certificate that cannot be described once in use is still reported as reloaded', async () => {
    const h = await plainFiles();
    const next = await pki.issue('undescribed', 'serverCA');
    await writeFile(h.tls.certFile, next.certPem);
    await writeFile(h.tls.keyFile, next.keyPem);
    const descriptor = Object.getOwnPropertyDescriptor(X509Certificate.prototype, 'subject');
    Object.defineProperty(X509Certificate.prototype, 'subject', {
      get: () => {
        throw new TypeError('no subject here');
      },
      configurable: true,
    });
    try {
      await expect(h.watcher.checkNow()).resolves.toBeUndefined();
    } finally {
      if (descriptor) Object.defineProperty(X509Certificate.prototype, 'subject', descriptor);
    }
    expect(h.changes.map((m) => m.fingerprint)).toEqual([fingerprintOf(next)]);
    expect(h.logs.find('info', /./).map((e) => e.msg)).toEqual([
      `TLS material reloaded: server certificate ${fingerprintOf(next)} (not described: TypeError: no subject here)`,
    ]);
    expect(h.logs.find('error', /./)).toEqual([]);
  });

  it('polls every second by default, on a timer that stop() removes', async () => {
    // The poll reads the files asynchronously: wait for it on the real clock.
    const realSetTimeout = setTimeout;
    const settled = async (done: () => boolean): Promise<void> => {
      for (let waited = 0; waited < 5000 && !done(); waited += 10) await new Promise((resolve) => realSetTimeout(resolve, 10));
    };
    jest.useFakeTimers();
    try {
      const h = await plainFiles();
      h.watcher.start();
      expect(jest.getTimerCount()).toBe(1);
      const next = await pki.issue('timer', 'serverCA');
      await writeFile(h.tls.certFile, next.certPem);
      await writeFile(h.tls.keyFile, next.keyPem);
      jest.advanceTimersByTime(999);
      expect(h.changes).toEqual([]);
      jest.advanceTimersByTime(1);
      await settled(() => h.changes.length > 0);
      expect(h.changes.map((m) => m.fingerprint)).toEqual([fingerprintOf(next)]);
      h.watcher.stop();
      expect(jest.getTimerCount()).toBe(0);
    } finally {
      jest.useRealTimers();
    }
  });
});

/** The server pair and an intermediate client CA valid two days, copied into a directory of their own; the TLS section serving them. */
async function intermediateCase(name: string, cn: string): Promise<{ tls: TlsConfig; notAfter: number }> {
  const intermediate = await pki.issue(name, 'clientCA', { usage: 'ca', cn, days: 2 });
  const dir = join(root, `case-${++caseCount}`);
  await mkdir(dir);
  await Promise.all([
    copyFile(pki.server.cert, join(dir, 'tls.crt')),
    copyFile(pki.server.key, join(dir, 'tls.key')),
    copyFile(intermediate.cert, join(dir, 'ca.crt')),
  ]);
  const tls = secretDirTls(dir);
  return { tls, notAfter: Date.parse(new X509Certificate(intermediate.certPem).validTo) };
}

describe('TlsMaterialWatcher and an intermediate client CA', () => {
  it('rebuilds the trust anchors when the intermediate leaves its validity window, though no file changed', async () => {
    const { tls, notAfter } = await intermediateCase('watched-intermediate', 'watched intermediate');
    let now = Date.now();
    const initial = loadTlsMaterial(tls, keys, now);
    expect(initial.trustedClientCAPems).toHaveLength(1);
    expect(initial.trustedClientCAPems[0]).toMatch(/^-----BEGIN TRUSTED CERTIFICATE-----/);
    expect(initial.trustChangesAt).toBe(notAfter + 1000);
    const changes: TlsMaterial[] = [];
    const watcher = new TlsMaterialWatcher({
      tls,
      keys,
      logger: new CaptureLoggers().getLogger('operations.tls'),
      current: initial,
      clock: { now: () => now },
      onChange: (material) => changes.push(material),
    });
    await watcher.checkNow();
    expect(changes).toEqual([]);
    now = notAfter + 1000;
    await watcher.checkNow();
    expect(changes.map((m) => m.trustedClientCAPems)).toEqual([[]]);
    expect(changes[0]?.clientCAPems).toEqual(initial.clientCAPems);
    await watcher.checkNow();
    expect(changes).toHaveLength(1);
  });

  it('a hand-over refused at the trust change is not retried at every poll after it', async () => {
    const { tls, notAfter } = await intermediateCase('refused-intermediate', 'refused intermediate');
    let now = Date.now();
    let offered = 0;
    const watcher = new TlsMaterialWatcher({
      tls,
      keys,
      logger: new CaptureLoggers().getLogger('operations.tls'),
      current: loadTlsMaterial(tls, keys, now),
      clock: { now: () => now },
      onChange: () => {
        offered += 1;
        throw new Error('refused by the host');
      },
    });
    now = notAfter + 1000;
    for (let poll = 0; poll < 5; poll += 1) await watcher.checkNow();
    expect(offered).toBe(1);
  });
});

describe('TlsMaterialWatcher and a file it cannot read', () => {
  it('does not open a refused file again until its size, times or inode change', async () => {
    const h = await plainFiles();
    const ca = join(h.dir, 'ca.crt');
    await truncate(ca, 2 * files.maxPemFileBytes);
    const reads = jest.spyOn(files, 'readPemFile');
    try {
      for (let poll = 0; poll < 5; poll += 1) await h.watcher.checkNow();
      const readsOfCa = (): number => reads.mock.calls.filter(([path]) => path === ca).length;
      expect(readsOfCa()).toBe(1);
      expect(h.logs.find('error', /TLS material not reloaded/).map((e) => e.fields.problem)).toEqual([
        expect.stringContaining(`cannot read ${ca}: is ${2 * files.maxPemFileBytes} bytes, more than the 8388608 bytes (8 MiB)`),
      ]);

      // Same size, new modification time: looked at again.
      await utimes(ca, new Date(), new Date(Date.now() + 5000));
      await h.watcher.checkNow();
      expect(readsOfCa()).toBe(2);

      await copyFile(pki.clientCA.cert, ca);
      await h.watcher.checkNow();
      await h.watcher.checkNow();
      expect(readsOfCa()).toBe(4); // readable again: read at every poll
      expect(h.changes).toEqual([]);
    } finally {
      reads.mockRestore();
    }
  });
});
