/**
 * The fleet reads each companion's certificates and disk (issue 29 item 5, issue 33 item 4;
 * docs/fleet-certificates.md): `GET /fleet/certificates`, `fabric-ops fleet certs`, and the
 * companion beside its node on `/fleet/healthz`.
 *
 * The nodes: doubles of recorded Fabric 2.5.12 nodes (test/support/fabric-double.ts: each answers
 * 404 `404 page not found` on a path Fabric does not serve), two real companions
 * (startOperationsSystem in companion mode, as the command starts one) and a plain fabric-ops node:
 * - peer0.org1, a double, with companion A beside it, named by `companion.url`: its core.yaml names
 *   the recorded peer's cryptogen MSP and TLS trees, a TLS client certificate expiring in 3 days
 *   (made with openssl here), and the double's operations certificate;
 * - peer0.org2 and orderer0.ordererorg, doubles without a companion: their handshake certificates;
 * - companion-b, a fleet node whose URL is companion B's own (a fleet pointed at a companion), with
 *   a disk threshold no volume meets (its disk is low);
 * - ops0, a fabric-ops node without companion mode: its handshake certificate.
 */
import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { copyFile, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { fleetConfigFrom, fleetExtension, type FleetCertificateReport } from '../../../src/fleet';
import { startOperationsSystem, type OperationsSystem } from '../../../src/system';
import { companionServerEnv } from '../../support/companion';
import { testConfig } from '../../support/config';
import { releaseDir } from '../../support/fabric-double';
import { request, type HttpAnswer } from '../../support/http';
import { createTestPki, serverTls, type KeyPair, type TestPki } from '../../support/pki';
import { FabricNodes, fleetCommandInProcess, type FabricNodeEntry } from './harness';

jest.setTimeout(120_000);

let pki: TestPki;
let fabric: FabricNodes;
let dir: string;
let soon: KeyPair;
let companionA: OperationsSystem | null = null;
let companionB: OperationsSystem;
let ops0: OperationsSystem;
let fleet: OperationsSystem;
let oneShotFile: string;

const recordedPeer = path.join(releaseDir('2.5.12'), 'crypto', 'peerOrganizations', 'org1', 'peers', 'peer0.org1');

function quiet(): NodeJS.WritableStream {
  return new PassThrough().resume();
}

function portOf(url: string): number {
  return Number(new URL(url).port);
}

function keyPair(cert: string, key: string): KeyPair {
  return { cert, key, certPem: readFileSync(cert, 'utf8'), keyPem: readFileSync(key, 'utf8') };
}

/** A companion of a peer double (Fabric's sample core.yaml with CORE_* overrides), its own TLS on. */
async function startCompanion(env: NodeJS.ProcessEnv): Promise<OperationsSystem> {
  return startOperationsSystem({
    configFile: path.join(dir, 'core.yaml'),
    logStream: quiet(),
    env: {
      ...companionServerEnv(pki, { clientCAs: false }),
      CORE_OPERATIONS_HEALTHCHECK_CONTAINERRUNTIME_TYPE: 'none',
      CORE_PEER_MSPCONFIGPATH: path.join(recordedPeer, 'msp'),
      ...env,
    },
  });
}

function fleetGet(pathName: string): Promise<HttpAnswer> {
  return request(`${fleet.url}${pathName}`, { ca: pki.serverCA.certPem, client: pki.client });
}

async function certificates(): Promise<FleetCertificateReport> {
  const answer = await fleetGet('/fleet/certificates');
  expect(answer.status).toBe(200);
  return answer.json as FleetCertificateReport;
}

function fleetCli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return fleetCommandInProcess(args, {
    FABRIC_OPS_FLEET_URL: fleet.url,
    FABRIC_OPS_FLEET_CERT: pki.client.cert,
    FABRIC_OPS_FLEET_KEY: pki.client.key,
    FABRIC_OPS_FLEET_CACERT: pki.serverCA.cert,
    COLUMNS: '80',
  });
}

/** Serial (upper-case hex, as Node and the companion give it) and notAfter (ISO 8601) of a PEM file's first certificate. */
function facts(file: string): { serial: string; notAfter: string } {
  const certificate = new X509Certificate(readFileSync(file));
  return { serial: certificate.serialNumber, notAfter: new Date(certificate.validTo).toISOString() };
}

const joined = (text: string): string => text.replace(/\n/g, ' ');

beforeAll(async () => {
  pki = await createTestPki();
  fabric = await FabricNodes.start('2.5.12', { orgs: 2, peersPerOrg: 1, orderers: 1 });
  dir = await mkdtemp(path.join(tmpdir(), 'fleet-certificates-'));
  await copyFile(path.join(releaseDir('2.5.12'), 'sampleconfig', 'core.yaml'), path.join(dir, 'core.yaml'));
  await mkdir(path.join(dir, 'data-a'));
  await mkdir(path.join(dir, 'data-b'));
  soon = await pki.issue('soon', 'clientCA', { days: 3, cn: 'peer0-client' });
  const peer1 = fabric.node('peer0.org1');
  const peer2 = fabric.node('peer0.org2');
  const peer1Double = fabric.double('peer0.org1');

  companionA = await startCompanion({
    // The fleet's org1 group calls the companion with org1's operator certificate.
    CORE_OPERATIONS_COMPANION_TLS_CLIENTROOTCAS_FILES: peer1.caFile,
    CORE_OPERATIONS_LISTENADDRESS: `0.0.0.0:${portOf(peer1.url)}`,
    CORE_OPERATIONS_TLS_ENABLED: 'true',
    CORE_OPERATIONS_TLS_CERT_FILE: peer1Double.certFile,
    CORE_OPERATIONS_TLS_KEY_FILE: peer1Double.keyFile,
    CORE_OPERATIONS_COMPANION_NODE_ROOTCAS_FILES: peer1.caFile,
    CORE_OPERATIONS_COMPANION_NODE_CLIENTCERT_FILE: peer1.clientCertFile,
    CORE_OPERATIONS_COMPANION_NODE_CLIENTKEY_FILE: peer1.clientKeyFile,
    CORE_PEER_TLS_ENABLED: 'true',
    CORE_PEER_TLS_CERT_FILE: path.join(recordedPeer, 'tls', 'server.crt'),
    CORE_PEER_TLS_KEY_FILE: path.join(recordedPeer, 'tls', 'server.key'),
    CORE_PEER_TLS_ROOTCERT_FILE: path.join(recordedPeer, 'tls', 'ca.crt'),
    // Mutual TLS on the peer's own port: the client certificate and client root CAs are in use (and read).
    CORE_PEER_TLS_CLIENTAUTHREQUIRED: 'true',
    CORE_PEER_TLS_CLIENTCERT_FILE: soon.cert,
    CORE_PEER_FILESYSTEMPATH: path.join(dir, 'data-a'),
    CORE_LEDGER_SNAPSHOTS_ROOTDIR: path.join(dir, 'data-a'),
    CORE_OPERATIONS_COMPANION_DISK_MINFREEPERCENT: '0',
    CORE_OPERATIONS_COMPANION_DISK_MINFREEBYTES: '0',
  });
  companionB = await startCompanion({
    CORE_OPERATIONS_COMPANION_TLS_CLIENTROOTCAS_FILES: pki.clientCA.cert,
    // Its node's operations TLS is off in its file: no operations certificate to report (the node checker fails; no matter here).
    CORE_OPERATIONS_LISTENADDRESS: `0.0.0.0:${portOf(peer2.url)}`,
    CORE_OPERATIONS_TLS_ENABLED: 'false',
    CORE_PEER_FILESYSTEMPATH: path.join(dir, 'data-b'),
    CORE_LEDGER_SNAPSHOTS_ROOTDIR: path.join(dir, 'data-b'),
    // More than any volume has: its disk is low.
    CORE_OPERATIONS_COMPANION_DISK_MINFREEPERCENT: '0',
    CORE_OPERATIONS_COMPANION_DISK_MINFREEBYTES: '1000TiB',
  });
  ops0 = await startOperationsSystem({ config: testConfig({ operations: { tls: serverTls(pki) } }), logStream: quiet() });

  const group = (node: FabricNodeEntry, extraCa: string[] = []) => ({
    tls: { caFiles: [node.caFile, ...extraCa], certFile: node.clientCertFile, keyFile: node.clientKeyFile },
  });
  const opsGroup = { tls: { caFiles: [pki.serverCA.cert], certFile: pki.client.cert, keyFile: pki.client.key } };
  const stateDirectory = path.join(dir, 'state');
  const fleetConfig = fleetConfigFrom(
    {
      stateDirectory,
      nodeTimeout: '2s',
      pollInterval: '0s',
      minRoundInterval: '0s',
      groups: {
        // The companion's certificate is the test server CA's: the group trusts it beside the org's.
        org1: group(peer1, [pki.serverCA.cert]),
        org2: group(peer2),
        ordererorg: group(fabric.node('orderer0.ordererorg')),
        ops: opsGroup,
      },
      nodes: [
        { name: 'peer0.org1', url: peer1.url, dialect: 'peer', group: 'org1', companion: { url: companionA.url } },
        { name: 'peer0.org2', url: peer2.url, dialect: 'peer', group: 'org2' },
        { name: 'orderer0.ordererorg', url: fabric.node('orderer0.ordererorg').url, dialect: 'orderer', group: 'ordererorg' },
        { name: 'companion-b', url: companionB.url, dialect: 'peer', group: 'ops' },
        { name: 'ops0', url: ops0.url, dialect: 'peer', group: 'ops' },
      ],
    },
    path.join(dir, 'fleet.yaml'),
  );
  fleet = await startOperationsSystem({
    config: testConfig({ operations: { tls: serverTls(pki) }, metrics: { provider: 'prometheus' } }),
    logStream: quiet(),
    extensions: [fleetExtension(fleetConfig)],
  });
  // A fleet of the nodes whose certificates are all far from expiry: ops0 and companion B (cryptogen's 10 years).
  oneShotFile = path.join(dir, 'far.json');
  await writeFile(
    oneShotFile,
    JSON.stringify({
      stateDirectory,
      nodeTimeout: '2s',
      groups: { ops: opsGroup },
      nodes: [
        { name: 'companion-b', url: companionB.url, dialect: 'peer', group: 'ops' },
        { name: 'ops0', url: ops0.url, dialect: 'peer', group: 'ops' },
      ],
    }),
  );
});

afterAll(async () => {
  await fleet?.stop(0);
  await companionA?.stop(0);
  await companionB?.stop(0);
  await ops0?.stop(0);
  await fabric?.cleanup();
  await pki?.cleanup();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('GET /companion/report', () => {
  test('needs a client certificate when the companion has TLS, as /metrics', async () => {
    const answer = await request(`${companionB.url}/companion/report`, { ca: pki.serverCA.certPem });
    expect(answer.status).toBe(401);
    expect(answer.json).toEqual({ error: 'a client certificate issued by a trusted client CA is required for /companion/report' });
  });

  test("lists the node's certificates as the files say, soonest first, and its data volume", async () => {
    const org1 = fabric.node('peer0.org1');
    const answer = await request(`${companionA?.url ?? ''}/companion/report`, {
      ca: pki.serverCA.certPem,
      client: keyPair(org1.clientCertFile, org1.clientKeyFile),
    });
    expect(answer.status).toBe(200);
    const report = answer.json as {
      certificates: { items: Array<{ kind: string; key: string; path: string; serial: string; notAfter: string; daysLeft: number }> };
      disk: { status: string; volumes: Array<{ key: string; folder: string; status: string }> };
    };
    const items = report.certificates.items;
    const signcert = path.join(recordedPeer, 'msp', 'signcerts', 'peer0.org1-cert.pem');
    expect(items.filter((item) => item.path === signcert)).toEqual([
      expect.objectContaining({ kind: 'msp_signcert', key: 'peer.mspConfigPath', ...facts(signcert) }) as unknown,
    ]);
    expect(items.filter((item) => item.path === soon.cert)).toEqual([
      expect.objectContaining({ kind: 'tls_client', key: 'peer.tls.clientCert.file', daysLeft: 2, ...facts(soon.cert) }) as unknown,
    ]);
    const times = items.map((item) => Date.parse(item.notAfter));
    expect(times).toEqual([...times].sort((a, b) => a - b));
    expect(report.disk.status).toBe('ok');
    expect(report.disk.volumes.map((volume) => [volume.key, volume.folder, volume.status])).toEqual([['peer.fileSystemPath', path.join(dir, 'data-a'), 'ok']]);
  });

  test('a Fabric node does not serve it: 404, which the fleet reads as "no companion"', async () => {
    const answer = await fabric.request('peer0.org2', '/companion/report');
    expect(answer.status).toBe(404);
    expect(answer.body).toBe('404 page not found\n');
  });
});

describe('GET /fleet/certificates', () => {
  let report: FleetCertificateReport;
  beforeAll(async () => {
    report = await certificates();
  });

  test('every certificate of every node, soonest notAfter first: the 3-day client certificate leads', () => {
    const times = report.certificates.map((certificate) => Date.parse(certificate.notAfter));
    expect(times).toEqual([...times].sort((a, b) => a - b));
    expect(report.certificates[0]).toEqual(
      expect.objectContaining({
        node: 'peer0.org1',
        group: 'org1',
        source: 'companion',
        kind: 'tls_client',
        daysLeft: 2,
        status: 'warning',
        ...facts(soon.cert),
      }),
    );
    expect(report.nodes.map((node) => [node.name, node.status, node.source])).toEqual([
      ['peer0.org1', 'ok', 'companion'],
      ['peer0.org2', 'ok', 'handshake'],
      ['orderer0.ordererorg', 'ok', 'handshake'],
      ['companion-b', 'ok', 'companion'],
      ['ops0', 'ok', 'handshake'],
    ]);
    expect(report.unread).toBe(0);
  });

  test('a node without a companion shows the operations certificate of its TLS handshake', () => {
    for (const [name, file] of [
      ['peer0.org2', fabric.double('peer0.org2').certFile],
      ['orderer0.ordererorg', fabric.double('orderer0.ordererorg').certFile],
      ['ops0', pki.server.cert],
    ] as const) {
      const found = report.certificates.filter((certificate) => certificate.node === name);
      expect({ name, found }).toEqual({
        name,
        found: [expect.objectContaining({ source: 'handshake', kind: 'operations_server', key: 'handshake', ...facts(file) })],
      });
    }
  });

  test("a node with a companion shows every certificate its companion reads, the companion's own not among them", () => {
    const fromA = report.certificates.filter((certificate) => certificate.node === 'peer0.org1');
    expect(fromA.every((certificate) => certificate.source === 'companion')).toBe(true);
    const expected = [
      path.join(recordedPeer, 'msp', 'signcerts', 'peer0.org1-cert.pem'),
      path.join(recordedPeer, 'msp', 'cacerts', 'ca.org1-cert.pem'),
      path.join(recordedPeer, 'tls', 'server.crt'),
      soon.cert,
      fabric.double('peer0.org1').certFile,
    ];
    for (const file of expected) {
      expect({ file, found: fromA.some((certificate) => certificate.path === file && certificate.serial === facts(file).serial) }).toEqual({
        file,
        found: true,
      });
    }
    expect(fromA.some((certificate) => certificate.serial === facts(pki.server.cert).serial)).toBe(false);
  });

  test("a file the node's configuration names that holds no certificate is the node's problem, with key and path", () => {
    // Fabric's sample core.yaml names tls/ca.crt beside it for peer.tls.clientRootCAs.files: not there.
    expect(report.nodes.find((node) => node.name === 'peer0.org1')?.problems).toEqual([
      {
        kind: 'tls_client_root_ca',
        key: 'peer.tls.clientRootCAs.files',
        path: path.join(dir, 'tls', 'ca.crt'),
        problem: expect.stringMatching(/^cannot be read: no such file/) as unknown,
      },
    ]);
  });

  test('the expired and warning counts are those of the list', () => {
    expect(report.expired).toBe(report.certificates.filter((certificate) => certificate.daysLeft < 0).length);
    expect(report.warning).toBe(report.certificates.filter((certificate) => certificate.status === 'warning').length);
    expect(report.warning).toBeGreaterThan(0);
  });
});

describe('fabric-ops fleet certs', () => {
  test('a certificate expiring in 3 days: the table at 80 columns, exit 1', async () => {
    const run = await fleetCli(['certs']);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(1);
    const lines = run.stdout.split('\n');
    expect(lines.filter((line) => [...line].length > 80)).toEqual([]);
    expect(lines[0]).toMatch(/^NODE +KIND +SUBJECT +NOT AFTER +DAYS LEFT$/);
    expect(lines[1]).toMatch(new RegExp(`^peer0\\.org1 +tls_client +CN=peer0-client +${facts(soon.cert).notAfter.slice(0, 10)} +2 warning$`));
    expect(joined(run.stdout)).toMatch(
      /certificates of 5 nodes \(2 read from a companion, 3 from the TLS handshake\): \d+ certificates? expires? within 7 days/,
    );
    expect(joined(run.stdout)).toContain(
      `Problem files (named by the node's configuration, no certificate read): peer0.org1: peer.tls.clientRootCAs.files ${path.join(dir, 'tls', 'ca.crt')}: cannot be read: no such file`,
    );
  });

  test('--json is the answer', async () => {
    const run = await fleetCli(['certs', '--json']);
    expect(run.code).toBe(1);
    const body = JSON.parse(run.stdout) as FleetCertificateReport;
    expect(body.certificates[0]?.serial).toBe(facts(soon.cert).serial);
  });

  test('every certificate far from expiry (one-shot, --fleet-config): exit 0', async () => {
    const run = await fleetCommandInProcess(['certs', '--fleet-config', oneShotFile], { COLUMNS: '80' });
    expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: '' });
    expect(joined(run.stdout)).toMatch(/certificates of 2 nodes \(1 read from a companion, 1 from the TLS handshake\): none expired or within 7 days/);
    // Companion B's disk is under its threshold: said, though it does not change the exit status of certs.
    expect(joined(run.stdout)).toMatch(/companion-b: disk low \(its companion\): peer\.fileSystemPath .*under the threshold/);
  });
});

describe("/fleet/healthz: the companion's state beside its node", () => {
  test('certificates expiring soon and a low disk, from the last certificate round', async () => {
    const round = await certificates();
    // Inside the week by their notAfter (each checked against its file above): the 3-day client certificate and the double's operations certificate (minted for 7 days).
    const soonOfA = round.certificates.filter(
      (one) => one.node === 'peer0.org1' && Date.parse(one.notAfter) > Date.now() && Date.parse(one.notAfter) - Date.now() <= 7 * 86_400_000,
    );
    expect(soonOfA.map((one) => one.path).sort()).toEqual([fabric.double('peer0.org1').certFile, soon.cert].sort());
    const answer = await fleetGet('/fleet/healthz');
    const nodes = (answer.json as { nodes: Array<{ name: string; companion?: Record<string, unknown> }> }).nodes;
    const byName = new Map(nodes.map((node) => [node.name, node.companion]));
    expect(byName.get('peer0.org1')).toEqual(
      expect.objectContaining({ certificatesExpired: 0, certificatesExpiringSoon: soonOfA.length, certificateProblems: 1, diskStatus: 'ok', diskProblems: [] }),
    );
    expect(byName.get('companion-b')).toEqual(expect.objectContaining({ certificatesExpired: 0, certificatesExpiringSoon: 0, diskStatus: 'low' }));
    expect((byName.get('companion-b')?.diskProblems as string[])[0]).toMatch(/^peer\.fileSystemPath .*data-b.*under the threshold/);
    // Nodes without a companion have no summary.
    expect(['peer0.org2', 'orderer0.ordererorg', 'ops0'].map((name) => byName.get(name))).toEqual([undefined, undefined, undefined]);
  });

  test('fleet status says it in the node detail', async () => {
    await certificates();
    const run = await fleetCli(['status', '--wide']);
    const row = (name: string): string => run.stdout.split('\n').find((line) => line.startsWith(`${name} `)) ?? '';
    expect(row('peer0.org1')).toMatch(/companion: 2 certificates expiring soon$/);
    expect(row('companion-b')).toMatch(/companion: disk low$/);
    expect(row('peer0.org2')).not.toMatch(/companion/);
  });
});

describe('a companion that is down', () => {
  beforeAll(async () => {
    // A health round: the fleet's handshake with peer0.org1 itself (its companion has its own URL).
    const health = (await fleetGet('/fleet/healthz')).json as { nodes: Array<{ name: string; status: string }> };
    expect(health.nodes.find((node) => node.name === 'peer0.org1')?.status).toBe('ok');
    await companionA?.stop(0);
    companionA = null;
  });

  test("is reported with its reason; the node's handshake certificate stands in", async () => {
    const report = await certificates();
    const node = report.nodes.find((one) => one.name === 'peer0.org1');
    expect(node).toEqual(expect.objectContaining({ status: 'unreachable', source: 'handshake' }));
    expect(node?.error).toMatch(/ECONNREFUSED/);
    expect(report.unread).toBe(1);
    expect(report.certificates.filter((certificate) => certificate.node === 'peer0.org1')).toEqual([
      expect.objectContaining({ source: 'handshake', path: fabric.node('peer0.org1').url, ...facts(fabric.double('peer0.org1').certFile) }),
    ]);
  });

  test('fleet certs names it under NOT READ, and exits 1', async () => {
    const run = await fleetCli(['certs']);
    expect(run.code).toBe(1);
    const lines = run.stdout.split('\n');
    expect(lines.filter((line) => [...line].length > 80)).toEqual([]);
    expect(lines.find((line) => line.startsWith('peer0.org1 ') && / unreachable /.test(line))).toMatch(/ECONNREFUSED/);
    expect(joined(run.stdout)).toMatch(/1 node not read: its certificates are unknown/);
  });
});
