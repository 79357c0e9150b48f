/**
 * The pure parts of /fleet/certificates and `fleet certs` (src/fleet/certificates.ts,
 * src/fleet/certificates-cli.ts) and of the companion's /companion/report (src/companion/report.ts).
 * Certificates: a recorded cryptogen peer's TLS certificate (../shared/fixtures/fabric-recorded).
 */
import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { PeerCertificate } from 'node:tls';
import { companionReport, maxReportCertificates } from '../../../src/companion/report';
import type { CertificateReport } from '../../../src/companion/certificate-monitor';
import type { DiskReport } from '../../../src/companion/disk-monitor';
import {
  certificateStatus,
  fleetCertificateReport,
  HandshakeCertificates,
  maxNodeCertificates,
  nodeCertificates,
  parseCompanionReport,
  withCompanionSummaries,
  type FleetCertificate,
  type NodeCertificates,
} from '../../../src/fleet/certificates';
import { companionDetail, renderCertificates, subjectCell } from '../../../src/fleet/certificates-cli';
import type { CallOutcome } from '../../../src/fleet/client';
import { fleetConfigFrom } from '../../../src/fleet/config';
import type { RoundReport } from '../../../src/fleet/health';
import type { FleetNode, NodeHealth } from '../../../src/fleet/types';
import { logUnsafeCharacter } from '../../../src/text';
import { releaseDir } from '../../support/fabric-double';

const day = 86_400_000;
const now = Date.parse('2026-06-01T00:00:00Z');
const certFile = path.join(releaseDir('2.5.12'), 'crypto', 'peerOrganizations', 'org1', 'peers', 'peer0.org1', 'tls', 'server.crt');
const x509 = new X509Certificate(readFileSync(certFile));
const peerCertificate = { raw: x509.raw } as PeerCertificate;
const round: RoundReport = { started: new Date(now).toISOString(), durationMs: 5, deadlineMs: 5000, cut: 0, notAsked: 0 };

const node = (name: string, extra: Partial<FleetNode> = {}): FleetNode => ({
  name,
  url: `https://10.0.0.${name.length}:9443`,
  dialect: 'peer',
  labels: {},
  group: 'org1',
  ...extra,
});

const answered = (status: number, body: unknown): CallOutcome => ({ ok: true, status, body, text: JSON.stringify(body), latencyMs: 3 });
/** What a Fabric node answers on a path it does not serve: `404 page not found` (text), which the client reads as a bad response. */
const fabric404: CallOutcome = { ok: false, reason: 'bad_response', status: 404, error: '404 with a body that is not JSON: 404 page not found', latencyMs: 2 };

function item(kind: string, notAfterMs: number, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    kind,
    key: `key.${kind}`,
    path: `/etc/hyperledger/${kind}.pem`,
    subject: `O=org1, CN=${kind}`,
    issuer: 'O=org1, CN=ca',
    serial: kind.toUpperCase(),
    notAfter: new Date(notAfterMs).toISOString(),
    ...extra,
  };
}

function report(items: unknown[], disk?: unknown): Record<string, unknown> {
  return { certificates: { items, omitted: 0, problems: [], omittedProblems: 0 }, ...(disk !== undefined ? { disk } : {}) };
}

describe('certificateStatus', () => {
  test.each([
    [-1, 'expired'],
    [0, 'expired'],
    [1, 'warning'],
    [7 * day, 'warning'],
    [7 * day + 1, 'ok'],
  ])('%d ms left: %s', (left, status) => {
    expect(certificateStatus(now + left, now, 7)).toBe(status);
  });
});

describe("parseCompanionReport: a companion's answer, checked and bounded", () => {
  test('not a report: why, naming the field', () => {
    expect(parseCompanionReport({ spec: 'info' })).toEqual({ ok: false, problem: expect.stringMatching(/^certificates: /) as unknown });
    expect(parseCompanionReport(undefined).ok).toBe(false);
  });

  test('a malformed entry is counted as left out; the others are kept, soonest first', () => {
    const parsed = parseCompanionReport(report([item('b', now + 9 * day), { kind: 'x' }, item('a', now + day), item('c', now, { notAfter: 'never' })]));
    expect(parsed.ok && parsed.value.certificates.map((one) => one.kind)).toEqual(['a', 'b']);
    expect(parsed.ok && parsed.value.omitted).toBe(2);
  });

  test(`at most ${maxNodeCertificates} certificates, the soonest; long names clipped`, () => {
    const items = Array.from({ length: maxNodeCertificates + 10 }, (_, index) => item(`k${index}`, now + (100 - index) * day, { subject: 'S'.repeat(5000) }));
    const parsed = parseCompanionReport(report(items));
    if (!parsed.ok) throw new Error(parsed.problem);
    expect(parsed.value.certificates).toHaveLength(maxNodeCertificates);
    expect(parsed.value.omitted).toBe(10);
    expect(parsed.value.certificates[0]?.kind).toBe(`k${maxNodeCertificates + 9}`);
    expect(parsed.value.certificates[0]?.subject.length).toBeLessThan(240);
  });
});

describe('nodeCertificates: one node from its /companion/report outcome', () => {
  test('a Fabric node (404): no companion; its handshake certificate, as the certificate file says', () => {
    const peer = node('peer0');
    const result = nodeCertificates(peer, fabric404, { raw: x509.raw, seenAtMs: now - 1000 }, now, 7);
    expect(result.node).toEqual(expect.objectContaining({ status: 'ok', source: 'handshake', certificates: 1 }));
    expect(result.certificates).toEqual([
      {
        node: 'peer0',
        group: 'org1',
        source: 'handshake',
        kind: 'operations_server',
        key: 'handshake',
        path: peer.url,
        subject: expect.stringContaining('CN=peer0.org1') as unknown,
        issuer: expect.stringContaining('CN=tlsca.org1') as unknown,
        serial: x509.serialNumber,
        notAfter: new Date(x509.validTo).toISOString(),
        daysLeft: Math.floor((Date.parse(x509.validTo) - now) / day),
        status: 'ok',
        seenAt: new Date(now - 1000).toISOString(),
      },
    ]);
  });

  test('fabric-ops without companion mode (404 JSON) over plain HTTP: read, but no certificate to show', () => {
    const result = nodeCertificates(
      node('ops', { url: 'http://127.0.0.1:9443' }),
      answered(404, { error: 'no such resource: /companion/report' }),
      undefined,
      now,
      7,
    );
    expect(result.node).toEqual(expect.objectContaining({ status: 'ok', source: 'none', error: 'no companion, and plain HTTP: no certificate to show' }));
    expect(result.certificates).toEqual([]);
  });

  test('a named companion URL that answers 404 is not a companion: bad_response, the handshake stands in', () => {
    const peer = node('peer0', { companion: { url: 'https://10.0.0.9:9449' } });
    const result = nodeCertificates(peer, fabric404, { raw: x509.raw, seenAtMs: now }, now, 7);
    expect(result.node).toEqual(
      expect.objectContaining({
        status: 'bad_response',
        source: 'handshake',
        url: 'https://10.0.0.9:9449',
        error: expect.stringContaining('companion.url of node peer0') as unknown,
      }),
    );
    expect(result.certificates.map((one) => one.source)).toEqual(['handshake']);
  });

  test('a companion that cannot be reached: its reason; the last handshake stands in, or nothing', () => {
    const down: CallOutcome = { ok: false, reason: 'unreachable', error: 'ECONNREFUSED: connect ECONNREFUSED 10.0.0.9:9449', latencyMs: 1 };
    const peer = node('peer0', { companion: { url: 'https://10.0.0.9:9449' } });
    expect(nodeCertificates(peer, down, undefined, now, 7)).toEqual({
      node: expect.objectContaining({ status: 'unreachable', source: 'none', error: down.error, certificates: 0 }) as unknown,
      certificates: [],
    });
    expect(nodeCertificates(peer, down, { raw: x509.raw, seenAtMs: now }, now, 7).node.source).toBe('handshake');
  });

  test('an answer that is not a report, and an error status: bad_response naming the URL', () => {
    const peer = node('peer0');
    expect(nodeCertificates(peer, answered(200, { spec: 'info' }), undefined, now, 7).node.error).toMatch(
      /^https:\/\/10\.0\.0\.5:9443\/companion\/report answered 200, but not a companion report: certificates: /,
    );
    expect(nodeCertificates(peer, answered(503, { error: 'busy' }), undefined, now, 7).node).toEqual(
      expect.objectContaining({ status: 'bad_response', error: 'https://10.0.0.5:9443/companion/report answered 503: busy' }),
    );
  });

  test("a companion's report: its certificates judged by the fleet's window, and its summary", () => {
    const disk = {
      status: 'low',
      volumes: [
        {
          folder: '/var/hyperledger/production',
          key: 'peer.fileSystemPath',
          freeBytes: 1,
          sizeBytes: 100,
          freeInodes: 5,
          inodes: 10,
          minFreeBytes: 10,
          minFreeInodes: 1,
          status: 'low',
          problem: 'peer.fileSystemPath /var/hyperledger/production: 1 bytes free',
        },
      ],
    };
    const body = report([item('tls_server', now - day), item('tls_client', now + 3 * day), item('msp_signcert', now + 300 * day)], disk);
    (body.certificates as Record<string, unknown>).problems = [
      { kind: 'msp_admincert', key: 'peer.mspConfigPath', path: '/x/garbage.pem', problem: 'holds no PEM certificate' },
    ];
    const result = nodeCertificates(node('peer0'), answered(200, body), { raw: x509.raw, seenAtMs: now }, now, 7);
    expect(result.certificates.map((one) => [one.kind, one.source, one.status, one.daysLeft])).toEqual([
      ['tls_server', 'companion', 'expired', -1],
      ['tls_client', 'companion', 'warning', 3],
      ['msp_signcert', 'companion', 'ok', 300],
    ]);
    expect(result.node.companion).toEqual({
      certificatesExpired: 1,
      certificatesExpiringSoon: 1,
      certificateProblems: 1,
      diskStatus: 'low',
      diskProblems: ['peer.fileSystemPath /var/hyperledger/production: 1 bytes free'],
      checkedAt: new Date(now).toISOString(),
    });
    expect(result.node.disk?.status).toBe('low');
  });
});

describe('fleetCertificateReport', () => {
  const cert = (nodeName: string, days: number, kind = 'tls_server'): FleetCertificate => ({
    node: nodeName,
    group: 'org1',
    source: 'companion',
    kind,
    key: 'k',
    path: '/p',
    subject: 's',
    issuer: 'i',
    serial: `${nodeName}-${kind}`,
    notAfter: new Date(now + days * day).toISOString(),
    daysLeft: days,
    status: certificateStatus(now + days * day, now, 7),
  });
  const entry = (name: string, status: NodeCertificates['status']): NodeCertificates => ({
    name,
    group: 'org1',
    dialect: 'peer',
    url: 'https://x',
    status,
    source: 'companion',
    certificates: 0,
    omitted: 0,
    problems: [],
    omittedProblems: 0,
  });

  test('every node, soonest notAfter first (then node and kind); counts of expired, warning and unread', () => {
    const built = fleetCertificateReport(
      [
        { node: entry('b', 'ok'), certificates: [cert('b', 30), cert('b', -2)] },
        { node: entry('a', 'ok'), certificates: [cert('a', 30, 'msp_cacert'), cert('a', 5)] },
        { node: entry('c', 'timeout'), certificates: [] },
      ],
      round,
      now,
      7,
    );
    expect(built.certificates.map((one) => one.serial)).toEqual(['b-tls_server', 'a-tls_server', 'a-msp_cacert', 'b-tls_server']);
    expect(built.certificates.map((one) => one.daysLeft)).toEqual([-2, 5, 30, 30]);
    expect({ expired: built.expired, warning: built.warning, unread: built.unread }).toEqual({ expired: 1, warning: 1, unread: 1 });
  });

  test("withCompanionSummaries: a node's summary beside it (name and group), none for the others", () => {
    const summary = {
      certificatesExpired: 1,
      certificatesExpiringSoon: 0,
      certificateProblems: 0,
      diskStatus: 'ok' as const,
      diskProblems: [],
      checkedAt: 'x',
    };
    const last = fleetCertificateReport([{ node: { ...entry('a', 'ok'), companion: summary }, certificates: [] }], round, now, 7);
    const health = (name: string, group = 'org1'): NodeHealth => ({ name, group, dialect: 'peer', url: 'u', status: 'ok', latencyMs: 1, failed_checks: [] });
    expect(withCompanionSummaries([health('a'), health('b'), health('a', 'org2')], last).map((one) => one.companion)).toEqual([summary, undefined, undefined]);
    expect(withCompanionSummaries([health('a')], null)).toEqual([health('a')]);
  });
});

describe('HandshakeCertificates', () => {
  test('per node and URL; a few URLs per node; forgotten with the node', () => {
    const store = new HandshakeCertificates();
    store.record({ name: 'a', url: 'https://1' }, peerCertificate, 10);
    expect(store.get({ name: 'a', url: 'https://1' })).toEqual({ raw: x509.raw, seenAtMs: 10 });
    expect(store.get({ name: 'a', url: 'https://2' })).toBeUndefined();
    for (let index = 2; index <= 6; index += 1) store.record({ name: 'a', url: `https://${index}` }, peerCertificate, index);
    expect(store.get({ name: 'a', url: 'https://1' })).toBeUndefined();
    expect(store.get({ name: 'a', url: 'https://6' })?.seenAtMs).toBe(6);
    store.forget('a');
    expect(store.get({ name: 'a', url: 'https://6' })).toBeUndefined();
  });
});

describe('fleet certs: the table', () => {
  const body = (certificates: Array<Record<string, unknown>>, nodes: Array<Record<string, unknown>>): Record<string, unknown> => ({
    warningDays: 7,
    expired: certificates.filter((one) => one.status === 'expired').length,
    warning: certificates.filter((one) => one.status === 'warning').length,
    unread: nodes.filter((one) => one.status !== 'ok').length,
    certificates,
    nodes,
  });
  const row = (nodeName: string, status: string, daysLeft: number, subject = 'C=US, O=org1, CN=peer0.org1'): Record<string, unknown> => ({
    node: nodeName,
    group: 'org1',
    source: 'companion',
    kind: 'msp_tlsintermediatecert',
    key: 'peer.mspConfigPath',
    path: `/var/hyperledger/${'deep/'.repeat(20)}cert.pem`,
    subject,
    issuer: 'C=US, O=org1, CN=ca.org1',
    serial: 'ABCDEF0123456789',
    notAfter: '2026-06-04T05:06:07.000Z',
    daysLeft,
    status,
  });
  const okNode = (name: string): Record<string, unknown> => ({ name, status: 'ok', source: 'companion', problems: [], omitted: 0 });

  test('all far from expiry: exit 0; every line within 80 columns; the common name shown', () => {
    const rendered = renderCertificates(body([row('peer0.org1-with-a-long-name.example.com', 'ok', 300)], [okNode('peer0.org1')]), 80, false);
    expect(rendered.partial).toBe(false);
    expect(rendered.text.split('\n').filter((line) => line.length > 80)).toEqual([]);
    expect(rendered.text).toMatch(/CN=peer0\.org1 +2026-06-04 +300\n/);
    expect(rendered.text).toMatch(/none expired or within 7 days/);
  });

  test('expired, warning, a node not read: each makes it partial (exit 1)', () => {
    expect(renderCertificates(body([row('a', 'expired', -1)], [okNode('a')]), 80, false).partial).toBe(true);
    expect(renderCertificates(body([row('a', 'warning', 2)], [okNode('a')]), 80, false).partial).toBe(true);
    const unread = renderCertificates(
      body([], [{ name: 'b', status: 'timeout', source: 'none', error: 'no complete answer within 2000 ms', problems: [] }]),
      80,
      false,
    );
    expect(unread.partial).toBe(true);
    expect(unread.text).toMatch(/^NOT READ +REASON +ERROR\nb +timeout +no complete answer within 2000 ms\n/);
    expect(unread.text.replace(/\n/g, ' ')).toMatch(/1 node not read: its certificates are unknown/);
  });

  test('--wide: every column, nothing cut', () => {
    const text = renderCertificates(body([row('a', 'warning', 2)], [okNode('a')]), undefined, true).text;
    expect(text.split('\n')[0]).toMatch(/^NODE +GROUP +SOURCE +KIND +KEY +SUBJECT +ISSUER +SERIAL +NOT AFTER +DAYS LEFT +PATH$/);
    expect(text).toContain(`2026-06-04T05:06:07Z  2 warning  /var/hyperledger/${'deep/'.repeat(20)}cert.pem`);
  });

  test("a node's text cannot drive the terminal", () => {
    const text = renderCertificates(body([row('a', 'ok', 30, 'CN=\u001b[2Jevil\u202e')], [okNode('a')]), 80, false).text;
    expect(logUnsafeCharacter.test(text.replace(/\n/g, ''))).toBe(false);
  });

  test('subjectCell: the common name, else the subject', () => {
    expect(subjectCell('C=US, O=org1, CN=peer0.org1')).toBe('CN=peer0.org1');
    expect(subjectCell('C=US, O=org1')).toBe('C=US, O=org1');
  });

  test("companionDetail: what fleet status says of a node's companion", () => {
    expect(companionDetail({ certificatesExpired: 1, certificatesExpiringSoon: 2, diskStatus: 'low' })).toBe(
      'companion: 1 certificate expired, 2 certificates expiring soon, disk low',
    );
    expect(companionDetail({ certificatesExpired: 0, certificatesExpiringSoon: 0, diskStatus: 'ok' })).toBe('');
    expect(companionDetail(undefined)).toBe('');
  });
});

describe("companionReport: the companion's own answer", () => {
  const certificate = (kind: string, notAfterMs: number) => ({
    key: `key.${kind}`,
    kind,
    path: `/x/${kind}.pem`,
    subject: 'CN=s',
    issuer: 'CN=i',
    serial: '01',
    notBefore: new Date(now - day).toISOString(),
    notAfter: new Date(notAfterMs).toISOString(),
    notAfterMs,
    fingerprint: 'AA',
    stage: 'ok' as const,
  });
  const emptyDisk: DiskReport = {
    volumes: [],
    unmeasured: [{ key: 'peer.fileSystemPath', path: '/p', missing: true, problem: 'does not exist (yet)' }],
    checkedAt: null,
  };
  const settings = {
    dialect: 'peer',
    node: 'https://127.0.0.1:9443',
    warningDays: 7,
    planningDays: 30,
    thresholds: { minFreePercent: 10, minFreeBytes: 1024 },
  };

  test(`soonest first, at most ${maxReportCertificates}, the rest counted; a disk with nothing measured is unknown`, () => {
    const certificates: CertificateReport = {
      certificates: Array.from({ length: maxReportCertificates + 3 }, (_, index) => certificate(`k${index}`, now + (index + 1) * day)).reverse(),
      problems: [],
      checkedAt: new Date(now).toISOString(),
    };
    const made = companionReport(certificates, emptyDisk, settings, now);
    expect(made.certificates.items).toHaveLength(maxReportCertificates);
    expect(made.certificates.omitted).toBe(3);
    expect(made.certificates.items.slice(0, 2).map((one) => [one.kind, one.daysLeft])).toEqual([
      ['k0', 1],
      ['k1', 2],
    ]);
    expect(made.disk.status).toBe('unknown');
    // What the fleet reads of it.
    expect(parseCompanionReport(JSON.parse(JSON.stringify(made))).ok).toBe(true);
  });

  test('a volume under its threshold: the disk is low', () => {
    const volume = {
      device: '1',
      folder: { key: 'peer.fileSystemPath', path: '/p' },
      alsoHolds: [{ key: 'ledger.snapshots.rootDir', path: '/p/snapshots' }],
      figures: { sizeBytes: 1000, freeBytes: 10, inodes: 0, freeInodes: 0 },
      verdict: { ok: false, bytesLow: true, inodesLow: false, minFreeBytes: 1024, minFreeInodes: 0 },
      problem: 'peer.fileSystemPath /p: low',
    };
    const made = companionReport({ certificates: [], problems: [], checkedAt: null }, { volumes: [volume], unmeasured: [], checkedAt: null }, settings, now);
    expect(made.disk).toEqual(
      expect.objectContaining({
        status: 'low',
        volumes: [
          {
            folder: '/p',
            key: 'peer.fileSystemPath',
            alsoHolds: ['ledger.snapshots.rootDir'],
            sizeBytes: 1000,
            freeBytes: 10,
            inodes: 0,
            freeInodes: 0,
            minFreeBytes: 1024,
            minFreeInodes: 0,
            status: 'low',
            problem: 'peer.fileSystemPath /p: low',
          },
        ],
      }),
    );
  });
});

describe('fleet configuration: a node names its companion', () => {
  const document = (companion: unknown) => ({
    stateDirectory: 'state',
    groups: { org1: { tls: { caFiles: ['ca.crt'] } } },
    nodes: [{ name: 'peer0', url: 'https://10.0.0.5:9443', group: 'org1', companion }],
  });

  test('companion.url: scheme, host and port, kept as its origin', () => {
    expect(fleetConfigFrom(document({ url: 'https://10.0.0.5:9449/' }), '/etc/fleet.yaml').nodes[0]?.companion).toEqual({ url: 'https://10.0.0.5:9449' });
    expect(fleetConfigFrom(document(undefined), '/etc/fleet.yaml').nodes[0]?.companion).toBeUndefined();
  });

  test('a path, or another key, is refused naming it', () => {
    expect(() => fleetConfigFrom(document({ url: 'https://10.0.0.5:9449/companion' }), '/etc/fleet.yaml')).toThrow(
      /nodes\[0\]\.companion\.url: "https:\/\/10\.0\.0\.5:9449\/companion": give scheme, host and port only/,
    );
    expect(() => fleetConfigFrom(document({ url: 'https://10.0.0.5:9449', port: 1 }), '/etc/fleet.yaml')).toThrow(/nodes\[0\]\.companion/);
  });
});
