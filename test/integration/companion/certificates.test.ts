/**
 * Companion mode, the node's certificates (issue 29, item 1; docs/companion.md): a peer's core.yaml
 * (Fabric's sample file, with Fabric's CORE_* overrides) pointing at a recorded peer's cryptogen MSP
 * and TLS trees, plus certificates made with openssl (one expiring in 3 days), a garbage file and a
 * missing one. Every figure is compared with what `openssl x509` says of the file.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { closeSync, constants, openSync, readSync } from 'node:fs';
import { copyFile, cp, mkdir, mkdtemp, readFile, rename, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { startOperationsSystem, type OperationsSystem } from '../../../src/system';
import { expectEachCertificate, expirySeries, normalSerial, opensslFacts, type Series } from '../../support/companion';
import { releaseDir } from '../../support/fabric-double';
import { request } from '../../support/http';
import { LogCapture } from '../../support/log-capture';
import { createTestPki, type KeyPair, type TestPki } from '../../support/pki';
import { requireCommand } from '../../support/prerequisites';
import { waitFor } from '../../support/wait';

const execFileAsync = promisify(execFile);

/**
 * A process blocked opening `fifo` for writing: it can only get past open() once some process
 * opens the FIFO for reading, and then writes `W` into it. Whoever opens the FIFO first gets the W.
 */
async function fifoWatcher(fifo: string): Promise<ChildProcess> {
  const child = spawn(
    process.execPath,
    ['-e', "const fs = require('fs'); const fd = fs.openSync(process.argv[1], 'w'); fs.writeSync(fd, 'W'); fs.closeSync(fd);", fifo],
    { stdio: 'ignore' },
  );
  // Blocked in openat(2) (x86_64: 257, arm64: 56), as /proc says: only then is any later open seen.
  const openat = process.arch === 'arm64' ? '56' : '257';
  await waitFor(`the writer of ${fifo} blocked in open()`, async () => (await readFile(`/proc/${child.pid}/syscall`, 'utf8')).startsWith(`${openat} `));
  return child;
}

/** True when this test's own open of `fifo` is the one the writer was waiting for (nobody opened it before). */
async function firstToOpen(fifo: string): Promise<boolean> {
  const fd = openSync(fifo, constants.O_RDONLY | constants.O_NONBLOCK);
  try {
    const buffer = Buffer.alloc(1);
    return await waitFor(
      `the W of ${fifo}'s writer`,
      () => {
        try {
          return readSync(fd, buffer, 0, 1, null) === 1 && buffer.toString() === 'W';
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code === 'EAGAIN') return false;
          throw error;
        }
      },
      { timeoutMs: 5000 },
    );
  } finally {
    closeSync(fd);
  }
}

let pki: TestPki;
let dir: string;
let soon: KeyPair;
let system: OperationsSystem;
const logs = new LogCapture();
const writers: ChildProcess[] = [];
let keyFifos: string[] = [];

beforeAll(async () => {
  requireCommand('openssl');
  requireCommand('mkfifo');
  pki = await createTestPki();
  dir = await mkdtemp(path.join(os.tmpdir(), 'companion-certificates-'));
  const recorded = path.join(releaseDir('2.5.12'), 'crypto', 'peerOrganizations', 'org1', 'peers', 'peer0.org1');
  await cp(path.join(recorded, 'msp'), path.join(dir, 'msp'), { recursive: true });
  await cp(path.join(recorded, 'tls'), path.join(dir, 'tls'), { recursive: true });
  await copyFile(path.join(releaseDir('2.5.12'), 'sampleconfig', 'core.yaml'), path.join(dir, 'core.yaml'));
  // The private keys become FIFOs with a writer waiting: an open of any of them by the companion would let the writer through.
  keyFifos = [path.join(dir, 'msp', 'keystore', 'priv_sk'), path.join(dir, 'tls', 'server.key'), path.join(dir, 'ops.key')];
  for (const fifo of keyFifos) {
    await rm(fifo, { force: true });
    await execFileAsync('mkfifo', [fifo]);
    writers.push(await fifoWatcher(fifo));
  }
  await mkdir(path.join(dir, 'msp', 'admincerts'));
  await writeFile(path.join(dir, 'msp', 'admincerts', 'garbage.pem'), 'this is not a certificate\n');
  soon = await pki.issue('soon', 'clientCA', { days: 3, cn: 'peer0-client' });
  await copyFile(soon.cert, path.join(dir, 'client.crt'));
  // The node's operations TLS: its certificate is reported, its key (a FIFO here) is not opened.
  await copyFile(pki.server.cert, path.join(dir, 'ops.crt'));

  system = await startOperationsSystem({
    configFile: path.join(dir, 'core.yaml'),
    logStream: logs,
    env: {
      CORE_OPERATIONS_COMPANION_ENABLED: 'true',
      CORE_OPERATIONS_COMPANION_LISTENADDRESS: '127.0.0.1:0',
      CORE_OPERATIONS_HEALTHCHECK_CONTAINERRUNTIME_TYPE: 'none',
      CORE_OPERATIONS_TLS_ENABLED: 'true',
      CORE_OPERATIONS_TLS_CERT_FILE: 'ops.crt',
      CORE_OPERATIONS_TLS_KEY_FILE: 'ops.key',
      CORE_OPERATIONS_TLS_CLIENTROOTCAS_FILES: pki.clientCA.cert,
      CORE_OPERATIONS_COMPANION_NODE_ROOTCAS_FILES: pki.serverCA.cert,
      CORE_PEER_MSPCONFIGPATH: 'msp',
      CORE_PEER_TLS_ENABLED: 'true',
      // The peer's client certificate and client root CAs are used (and reported) only with client authentication on.
      CORE_PEER_TLS_CLIENTAUTHREQUIRED: 'true',
      CORE_PEER_TLS_CERT_FILE: 'tls/server.crt',
      CORE_PEER_TLS_KEY_FILE: 'tls/server.key',
      CORE_PEER_TLS_ROOTCERT_FILE: 'tls/ca.crt',
      CORE_PEER_TLS_CLIENTCERT_FILE: 'client.crt',
      CORE_PEER_TLS_CLIENTROOTCAS_FILES: 'tls/ca.crt missing/absent.pem',
    },
  });
});

afterAll(async () => {
  await system?.stop(0);
  for (const writer of writers) writer.kill();
  await rm(dir, { recursive: true, force: true });
  await pki?.cleanup();
});

async function scrape(): Promise<Series[]> {
  const answer = await request(`${system.url}/metrics`);
  expect(answer.status).toBe(200);
  return expirySeries(answer.body);
}

describe('companion mode: the node certificates', () => {
  test("serves on its own address, not the node's", () => {
    expect(system.address.port).not.toBe(9443);
    expect(system.config.companion?.node.address).toEqual({ host: '127.0.0.1', port: 9443 });
  });

  test('every certificate the configuration names has its series, notAfter as openssl says, with kind and key', async () => {
    const series = await scrape();
    const expected: Array<{ file: string; kind: string; key: string }> = [
      { file: 'msp/signcerts/peer0.org1-cert.pem', kind: 'msp_signcert', key: 'peer.mspConfigPath' },
      { file: 'msp/cacerts/ca.org1-cert.pem', kind: 'msp_cacert', key: 'peer.mspConfigPath' },
      { file: 'msp/tlscacerts/tlsca.org1-cert.pem', kind: 'msp_tlscacert', key: 'peer.mspConfigPath' },
      { file: 'tls/server.crt', kind: 'tls_server', key: 'peer.tls.cert.file' },
      { file: 'tls/ca.crt', kind: 'tls_root_ca', key: 'peer.tls.rootcert.file' },
      { file: 'tls/ca.crt', kind: 'tls_client_root_ca', key: 'peer.tls.clientRootCAs.files' },
      { file: 'client.crt', kind: 'tls_client', key: 'peer.tls.clientCert.file' },
      { file: 'ops.crt', kind: 'operations_server', key: 'operations.tls.cert.file' },
      { file: pki.clientCA.cert, kind: 'operations_client_root_ca', key: 'operations.tls.clientRootCAs.files' },
    ];
    await expectEachCertificate(
      series,
      expected.map((entry) => ({ ...entry, file: path.resolve(dir, entry.file) })),
    );
  });

  test('each certificate is logged once at start with its notAfter, as Fabric logs its own', async () => {
    const facts = await opensslFacts(path.join(dir, 'msp', 'signcerts', 'peer0.org1-cert.pem'));
    const notAfter = new Date(facts.notAfterSeconds * 1000).toISOString();
    expect(logs.matching(new RegExp(`node certificate msp_signcert will expire on ${notAfter}`))).toHaveLength(1);
  });

  test('a certificate expiring in 3 days is warned about, naming its key, file and days left', () => {
    const warned = logs.matching(
      /node certificate tls_client \(peer\.tls\.clientCert\.file .*client\.crt, .*CN=peer0-client.*\) expires on .*within 7 days \(2 days left\): renew it/,
    );
    expect(warned).toHaveLength(1);
    // Nothing else is inside the week.
    expect(logs.matching(/within 7 days/)).toHaveLength(1);
  });

  test('a garbage file and a missing file are reported once each, with key and path; the others are still read', () => {
    expect(
      logs.matching(/node certificate file .*msp\/admincerts\/garbage\.pem \(peer\.mspConfigPath, msp_admincert\): holds no PEM certificate/),
    ).toHaveLength(1);
    expect(
      logs.matching(/node certificate file .*missing\/absent\.pem \(peer\.tls\.clientRootCAs\.files, tls_client_root_ca\): cannot be read: no such file/),
    ).toHaveLength(1);
  });

  test('the problem files are counted per key on /metrics', async () => {
    const answer = await request(`${system.url}/metrics`);
    expect(answer.body).toMatch(/^companion_certificate_file_problems\{key="peer\.mspConfigPath"\} 1$/m);
    expect(answer.body).toMatch(/^companion_certificate_file_problems\{key="peer\.tls\.clientRootCAs\.files"\} 1$/m);
  });

  test('a renewed certificate replaces the old figure without a restart', async () => {
    const before = await opensslFacts(path.join(dir, 'client.crt'));
    const renewed = await pki.issue('renewed', 'clientCA', { days: 90, cn: 'peer0-client' });
    // As a tool renews it: written beside, then renamed over the old file.
    await copyFile(renewed.cert, path.join(dir, 'client.crt.new'));
    await rename(path.join(dir, 'client.crt.new'), path.join(dir, 'client.crt'));
    const after = await opensslFacts(path.join(dir, 'client.crt'));
    const clientSeries = await waitFor('the renewed client certificate on /metrics', async () => {
      const found = (await scrape()).filter((one) => one.labels.kind === 'tls_client');
      return found.length === 1 && normalSerial(found[0]?.labels.serial ?? '') === after.serial ? found : null;
    });
    expect(clientSeries.map((one) => one.value)).toEqual([after.notAfterSeconds]);
    expect((await scrape()).some((one) => normalSerial(one.labels.serial ?? '') === before.serial)).toBe(false);
    expect(logs.matching(/new node certificate tls_client will expire on/)).toHaveLength(1);
  });

  test('a file that is fixed is read again, and its problem is said to be gone', async () => {
    await copyFile(pki.orgCA.cert, path.join(dir, 'msp', 'admincerts', 'garbage.pem'));
    const facts = await opensslFacts(pki.orgCA.cert);
    await waitFor('the fixed admincerts file on /metrics', async () =>
      (await scrape()).some((one) => one.labels.kind === 'msp_admincert' && normalSerial(one.labels.serial ?? '') === facts.serial),
    );
    expect(logs.matching(/garbage\.pem \(peer\.mspConfigPath\): the problem is gone/)).toHaveLength(1);
  });

  test('no private key file was ever opened: each key FIFO is first opened by this test', async () => {
    await system.stop(0);
    for (const fifo of keyFifos) expect({ fifo, first: await firstToOpen(fifo) }).toEqual({ fifo, first: true });
  });
});
