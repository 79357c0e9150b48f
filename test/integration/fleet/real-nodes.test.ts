/**
 * Fleet mode against doubles of recorded Fabric nodes (test/support/fabric-double.ts: what real
 * Fabric 2.5.12 and 3.0.0 nodes answered, from ../shared/fixtures/fabric-recorded): two peer orgs
 * and the orderer org of 2.5.12, each its own operations CA and client certificate, one peer each
 * and an orderer; a 3.0.0 peer; and two real fabric-ops nodes, steered by a fabric-ops fleet server
 * over mutual TLS. The same scenario against real Fabric binaries: test/real/fabric/fleet-real-nodes.test.ts.
 */
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { fleetConfigFrom, fleetExtension, type FleetConfig, type FleetEvent, type FleetService } from '../../../src/fleet';
import { startOperationsSystem, type OperationsSystem } from '../../../src/system';
import { testConfig } from '../../support/config';
import { request, type HttpAnswer } from '../../support/http';
import { createTestPki, type KeyPair, type TestPki, serverTls } from '../../support/pki';
import { delay, waitFor } from '../../support/wait';
import { FabricNodes, type FabricNodeEntry } from './harness';

jest.setTimeout(120_000);

let pki: TestPki;
let fabric25: FabricNodes;
let fabric30: FabricNodes;
let opsNodes: OperationsSystem[] = [];
let stateDir: string;
let fleetConfig: FleetConfig;
let fleet: OperationsSystem | null = null;
let service: FleetService | null = null;
let reader: KeyPair;
const events: FleetEvent[] = [];

async function startOpsNode(): Promise<OperationsSystem> {
  return startOperationsSystem({
    config: testConfig({
      operations: { tls: serverTls(pki) },
    }),
    logStream: devNull(),
  });
}

function devNull(): NodeJS.WritableStream {
  return new Writable({ write: (_chunk, _encoding, done) => done() });
}

async function startFleet(): Promise<OperationsSystem> {
  const system = await startOperationsSystem({
    config: testConfig({
      operations: { tls: serverTls(pki) },
      metrics: { provider: 'prometheus' },
    }),
    logStream: devNull(),
    extensions: [
      fleetExtension(fleetConfig, {
        onCreated: (created) => {
          service = created;
          created.onEvent((event) => events.push(event));
        },
      }),
    ],
  });
  fleet = system;
  return system;
}

function fleetCall(pathName: string, options: { method?: string; body?: unknown; client?: KeyPair | null } = {}): Promise<HttpAnswer> {
  if (!fleet) throw new Error('fleet not running');
  return request(`${fleet.url}${pathName}`, {
    method: options.method ?? 'GET',
    ca: pki.serverCA.certPem,
    ...(options.client === null ? {} : { client: options.client ?? pki.client }),
    ...(options.body !== undefined ? { body: JSON.stringify(options.body), headers: { 'Content-Type': 'application/json' } } : {}),
  });
}

/** Every node result of the put-back events seen since `events` was last emptied. */
function reportedPutBacks() {
  return events.flatMap((event) => (event.type === 'fleet.logspec.putback' ? event.nodes : []));
}

/** A node's own /logspec, asked directly with its org's client certificate. */
async function nodeSpec(nodes: FabricNodes, name: string): Promise<string> {
  const answer = await nodes.request(name, '/logspec');
  expect(answer.status).toBe(200);
  return (answer.json as { spec: string }).spec;
}

async function setNodeSpec(nodes: FabricNodes, name: string, spec: string): Promise<void> {
  const answer = await nodes.request(name, '/logspec', { method: 'PUT', body: JSON.stringify({ spec }) });
  expect(answer.status).toBe(204);
}

const operatorSubject = 'O=fabric-ops tests,CN=operator';

beforeAll(async () => {
  pki = await createTestPki();
  reader = await pki.issue('reader', 'clientCA', { usage: 'client' });
  [fabric25, fabric30] = await Promise.all([
    FabricNodes.start('2.5.12', { orgs: 2, peersPerOrg: 1, orderers: 1 }),
    FabricNodes.start('3.0.0', { orgs: 1, peersPerOrg: 1, orderers: 0 }),
  ]);
  opsNodes = [await startOpsNode(), await startOpsNode()];
  stateDir = await mkdtemp(path.join(tmpdir(), 'fabric-ops-fleet-state-'));
  // An org's group: its operations CA and its operator's client certificate, from any of its nodes.
  const group = (node: FabricNodeEntry) => ({ tls: { caFiles: [node.caFile], certFile: node.clientCertFile, keyFile: node.clientKeyFile } });
  fleetConfig = fleetConfigFrom(
    {
      stateDirectory: stateDir,
      nodeTimeout: '2s',
      pollInterval: '0s',
      // Every request a fresh round: these tests stop and start nodes between calls.
      minRoundInterval: '0s',
      writers: [operatorSubject],
      groups: {
        org1: group(fabric25.node('peer0.org1')),
        org2: group(fabric25.node('peer0.org2')),
        ordererorg: group(fabric25.node('orderer0.ordererorg')),
        v3org1: group(fabric30.node('peer0.org1')),
        ops: { tls: { caFiles: [pki.serverCA.cert], certFile: pki.client.cert, keyFile: pki.client.key } },
      },
      nodes: [
        ...fabric25.nodes.map((node) => ({
          name: node.name,
          url: node.url,
          dialect: node.dialect,
          group: node.org,
          labels: { release: '2.5', role: node.dialect },
        })),
        ...fabric30.nodes.map((node) => ({
          name: `v3-${node.name}`,
          url: node.url,
          dialect: node.dialect,
          group: 'v3org1',
          labels: { release: '3.0', role: node.dialect },
        })),
        ...opsNodes.map((node, index) => ({ name: `ops${index}`, url: node.url, dialect: 'peer', group: 'ops', labels: { role: 'fabric-ops' } })),
      ],
    },
    path.join(stateDir, 'fleet.yaml'),
  );
  await startFleet();
});

afterAll(async () => {
  await fleet?.stop(0);
  await Promise.all(opsNodes.map((node) => node.stop(0)));
  await Promise.all([fabric25?.cleanup(), fabric30?.cleanup()]);
  await rm(stateDir, { recursive: true, force: true });
  await pki?.cleanup();
});

describe('fleet security', () => {
  test('every /fleet path refuses a client without a certificate (401), /fleet/healthz included', async () => {
    for (const [method, pathName] of [
      ['GET', '/fleet/healthz'],
      ['GET', '/fleet/version'],
      ['GET', '/fleet/logspec'],
      ['PUT', '/fleet/logspec'],
      ['DELETE', '/fleet/logspec'],
    ] as const) {
      const answer = await fleetCall(pathName, { method, client: null, body: method === 'PUT' ? { spec: 'debug', selector: {} } : undefined });
      expect([method, pathName, answer.status]).toEqual([method, pathName, 401]);
      expect(answer.json).toEqual({ error: expect.stringContaining('client certificate') as unknown });
    }
  });

  test('a certificate from an untrusted CA fails the handshake', async () => {
    await expect(fleetCall('/fleet/healthz', { client: pki.untrustedClient })).rejects.toThrow();
  });

  test('a trusted client not listed in writers reads but cannot write (403), and no node is touched', async () => {
    expect((await fleetCall('/fleet/version', { client: reader })).status).toBe(200);
    const before = await nodeSpec(fabric25, 'peer0.org1');
    const answer = await fleetCall('/fleet/logspec', { method: 'PUT', client: reader, body: { spec: 'debug', selector: {} } });
    expect(answer.status).toBe(403);
    expect((answer.json as { error: string }).error).toContain('CN=reader');
    expect(await nodeSpec(fabric25, 'peer0.org1')).toBe(before);
  });

  test('fleet mode refuses to start without TLS on the server, naming the key', async () => {
    await expect(startOperationsSystem({ config: testConfig(), logStream: devNull(), extensions: [fleetExtension(fleetConfig)] })).rejects.toThrow(
      /fleet mode needs TLS .*peer\.operations\.tls\.enabled|operations\.tls\.enabled/,
    );
  });
});

describe('fleet health and versions', () => {
  test('every node healthy: 200, per-node status and latency', async () => {
    const answer = await fleetCall('/fleet/healthz');
    const body = answer.json as {
      status: string;
      healthy: number;
      total: number;
      nodes: Array<{ name: string; status: string; latencyMs: number; error?: string }>;
    };
    // Each node's error first: when one is not ok, the failure says why.
    expect(body.nodes.map((node) => [node.name, node.status, node.error])).toEqual([
      ['peer0.org1', 'ok', undefined],
      ['peer0.org2', 'ok', undefined],
      ['orderer0.ordererorg', 'ok', undefined],
      ['v3-peer0.org1', 'ok', undefined],
      ['ops0', 'ok', undefined],
      ['ops1', 'ok', undefined],
    ]);
    expect(answer.status).toBe(200);
    expect(body.total).toBe(6);
    expect(body.healthy).toBe(6);
    for (const node of body.nodes) expect(node.latencyMs).toBeGreaterThanOrEqual(0);
  });

  test('a node stopped: 503 naming it unreachable; started again on the same port with the same certificate: 200', async () => {
    await fabric30.down();
    const down = await fleetCall('/fleet/healthz');
    expect(down.status).toBe(503);
    const entry = (down.json as { nodes: Array<{ name: string; status: string; error: string }> }).nodes.find((node) => node.name === 'v3-peer0.org1');
    expect(entry).toMatchObject({ status: 'unreachable', error: expect.stringContaining('ECONNREFUSED') as unknown });
    await fabric30.up();
    expect((await fleetCall('/fleet/healthz')).status).toBe(200);
  });

  test('version skew between Fabric 2.5.12, Fabric 3.0.0 and fabric-ops nodes is flagged, grouped', async () => {
    const answer = await fleetCall('/fleet/version');
    const body = answer.json as { skew: boolean; versions: Array<{ version: string; commit: string; nodes: string[] }> };
    expect(answer.status).toBe(200);
    expect(body.skew).toBe(true);
    const byVersion = Object.fromEntries(body.versions.map((group) => [group.version, group]));
    expect(byVersion['2.5.12']).toEqual({ version: '2.5.12', commit: 'af0b647', nodes: ['peer0.org1', 'peer0.org2', 'orderer0.ordererorg'] });
    expect(byVersion['3.0.0']).toEqual({ version: '3.0.0', commit: '94590aa', nodes: ['v3-peer0.org1'] });
    expect(byVersion[opsNodes[0]!.version.Version]?.nodes).toEqual(['ops0', 'ops1']);
  });

  test('fleet metrics: nodes known/up/healthy, version info, and each Fabric node certificate notAfter from the handshake', async () => {
    await fleetCall('/fleet/healthz');
    const answer = await fleetCall('/metrics');
    expect(answer.status).toBe(200);
    expect(answer.body).toMatch(/^fleet_nodes_known 6$/m);
    expect(answer.body).toMatch(/^fleet_nodes_healthy 6$/m);
    expect(answer.body).toContain('fleet_node_up{node="peer0.org1",group="org1"} 1');
    expect(answer.body).toContain('fleet_node_version_info{node="v3-peer0.org1",version="3.0.0",commit="94590aa"} 1');
    for (const name of ['peer0.org1', 'peer0.org2', 'orderer0.ordererorg']) {
      expect(answer.body).toContain(`fleet_node_certificate_expiry_timestamp_seconds{node="${name}"} ${fabric25.certificateNotAfter(name)}`);
    }
    expect(answer.body).toContain(`fleet_node_certificate_expiry_timestamp_seconds{node="v3-peer0.org1"} ${fabric30.certificateNotAfter('peer0.org1')}`);
  });
});

describe('fleet log levels', () => {
  test('an invalid spec is refused once, before any node is touched', async () => {
    const before = await nodeSpec(fabric25, 'peer0.org1');
    const answer = await fleetCall('/fleet/logspec', { method: 'PUT', body: { spec: 'gossip=loud', selector: {} } });
    expect(answer.status).toBe(400);
    expect((answer.json as { error: string }).error).toContain("invalid logging specification 'gossip=loud'");
    expect(await nodeSpec(fabric25, 'peer0.org1')).toBe(before);
  });

  test('GET /fleet/logspec gives each node its spec', async () => {
    const answer = await fleetCall('/fleet/logspec');
    const nodes = (answer.json as { nodes: Array<{ name: string; status: string; spec: string }> }).nodes;
    expect(nodes).toHaveLength(6);
    expect(nodes.every((node) => node.status === 'ok' && typeof node.spec === 'string')).toBe(true);
  });

  test('one node down: per-node results (502); all-or-nothing puts the others back', async () => {
    await fabric30.down();
    try {
      const selector = { labels: { role: 'peer' } };
      const partial = await fleetCall('/fleet/logspec', { method: 'PUT', body: { spec: 'gossip=debug:info', selector } });
      expect(partial.status).toBe(502);
      const results = Object.fromEntries(
        (partial.json as { nodes: Array<{ name: string; result: string; reason?: string }> }).nodes.map((node) => [node.name, node]),
      );
      expect(results['peer0.org1']).toMatchObject({ result: 'applied', previous: 'info' });
      expect(results['peer0.org2']).toMatchObject({ result: 'applied' });
      expect(results['v3-peer0.org1']).toMatchObject({ result: 'failed', reason: 'unreachable' });
      expect(await nodeSpec(fabric25, 'peer0.org1')).toBe('gossip=debug:info');

      await setNodeSpec(fabric25, 'peer0.org1', 'info');
      await setNodeSpec(fabric25, 'peer0.org2', 'info');
      const atomic = await fleetCall('/fleet/logspec', { method: 'PUT', body: { spec: 'gossip=debug:info', selector, allOrNothing: true } });
      expect(atomic.status).toBe(502);
      const atomicResults = (atomic.json as { nodes: Array<{ name: string; result: string }> }).nodes.map((node) => [node.name, node.result]);
      expect(atomicResults).toEqual([
        ['peer0.org1', 'rolled_back'],
        ['peer0.org2', 'rolled_back'],
        ['v3-peer0.org1', 'failed'],
      ]);
      expect(await nodeSpec(fabric25, 'peer0.org1')).toBe('info');
      expect(await nodeSpec(fabric25, 'peer0.org2')).toBe('info');
    } finally {
      await fabric30.up();
    }
  });

  test('TTL: the Fabric peers are put back; a peer changed in between is left alone and reported', async () => {
    events.length = 0;
    await setNodeSpec(fabric25, 'peer0.org1', 'info');
    await setNodeSpec(fabric25, 'peer0.org2', 'warning');
    const answer = await fleetCall('/fleet/logspec', {
      method: 'PUT',
      body: { spec: 'gossip=debug:info', selector: { names: ['peer0.org1', 'peer0.org2'] }, ttl: '2s' },
    });
    expect(answer.status).toBe(200);
    expect(await nodeSpec(fabric25, 'peer0.org1')).toBe('gossip=debug:info');
    expect(await nodeSpec(fabric25, 'peer0.org2')).toBe('gossip=debug:info');
    await setNodeSpec(fabric25, 'peer0.org2', 'error');

    // The event comes once the batch is done: nodes put back, the file written, the results counted
    // (the pending list empties before the file is written: waiting on it raced the checks below).
    const putBacks = await waitFor('both put-backs reported', async () => (reportedPutBacks().length >= 2 ? reportedPutBacks() : undefined), {
      timeoutMs: 10_000,
      everyMs: 100,
    });
    expect(service!.pendingPutBacks()).toEqual([]);
    expect(await nodeSpec(fabric25, 'peer0.org1')).toBe('info');
    expect(await nodeSpec(fabric25, 'peer0.org2')).toBe('error');
    expect(putBacks).toEqual(
      expect.arrayContaining([
        { name: 'peer0.org1', result: 'restored', spec: 'info' },
        { name: 'peer0.org2', result: 'skipped_changed', spec: 'error' },
      ]),
    );
  });

  test('DELETE /fleet/logspec puts back now', async () => {
    await setNodeSpec(fabric25, 'orderer0.ordererorg', 'info');
    const set = await fleetCall('/fleet/logspec', {
      method: 'PUT',
      body: { spec: 'orderer.consensus=debug:info', selector: { dialect: 'orderer' }, ttl: '1h' },
    });
    expect(set.status).toBe(200);
    expect(await nodeSpec(fabric25, 'orderer0.ordererorg')).toBe('orderer.consensus=debug:info');
    const restored = await fleetCall('/fleet/logspec', { method: 'DELETE' });
    expect(restored.status).toBe(200);
    expect((restored.json as { nodes: unknown[] }).nodes).toEqual([{ name: 'orderer0.ordererorg', result: 'restored', spec: 'info' }]);
    expect(await nodeSpec(fabric25, 'orderer0.ordererorg')).toBe('info');
    expect(service!.pendingPutBacks()).toEqual([]);
  });

  test('a fabric-ops restart during a TTL still puts the nodes back (persisted, overdue runs at start)', async () => {
    await setNodeSpec(fabric25, 'peer0.org1', 'info');
    await setNodeSpec(fabric30, 'peer0.org1', 'info');
    const answer = await fleetCall('/fleet/logspec', {
      method: 'PUT',
      body: { spec: 'debug', selector: { names: ['peer0.org1', 'v3-peer0.org1', 'ops0'] }, ttl: '2s' },
    });
    expect(answer.status).toBe(200);
    await fleet!.stop(0);
    fleet = null;
    const file = path.join(stateDir, 'fleet-putbacks.json');
    expect(existsSync(file)).toBe(true);
    const saved = JSON.parse(readFileSync(file, 'utf8')) as { pending: Array<{ node: string; previous: string }> };
    expect(saved.pending.map((entry) => entry.node).sort()).toEqual(['ops0', 'peer0.org1', 'v3-peer0.org1']);
    // Down past the TTL: nobody puts them back meanwhile.
    await delay(2500);
    expect(await nodeSpec(fabric25, 'peer0.org1')).toBe('debug');
    events.length = 0;
    await startFleet();
    const putBacks = await waitFor('put-backs after the restart', async () => (reportedPutBacks().length >= 3 ? reportedPutBacks() : undefined), {
      timeoutMs: 10_000,
      everyMs: 100,
    });
    expect(putBacks.map((node) => [node.name, node.result]).sort()).toEqual([
      ['ops0', 'restored'],
      ['peer0.org1', 'restored'],
      ['v3-peer0.org1', 'restored'],
    ]);
    expect(service!.pendingPutBacks()).toEqual([]);
    expect(await nodeSpec(fabric25, 'peer0.org1')).toBe('info');
    expect(await nodeSpec(fabric30, 'peer0.org1')).toBe('info');
    expect(opsNodes[0]!.getLogSpec()).toBe('info');
    expect((JSON.parse(readFileSync(file, 'utf8')) as { pending: unknown[] }).pending).toEqual([]);
  });

  test('every write is counted by result on /metrics', async () => {
    const answer = await fleetCall('/metrics');
    expect(answer.body).toMatch(/^fleet_logspec_putbacks_total\{result="restored"\} [1-9]/m);
  });
});
