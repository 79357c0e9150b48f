/**
 * Kubernetes discovery end to end: a fabric-ops in fleet mode whose nodes come from Services in
 * the fake API server (test/support/fake-apiserver.ts, which behaves as kube-apiserver v1.28 was
 * seen to: silent idle watches, 410 in the stream, a restart that drops watches and expires
 * resourceVersions, label-selector relabelling as DELETED/ADDED); the built command (dist/cli.js)
 * with --fleet-config, its credentials from a kubeconfig through @kubernetes/client-node (which
 * loads as ESM, so in a child process, as an operator runs it); real HTTPS nodes: three fabric-ops operations servers,
 * each reached at its Service's clusterIP (127.0.0.1) with tlsServerName checked against its
 * certificate, or at a Pod's IP. Only against the double: no real kube-apiserver runs here (README, "Fleet").
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { startOperationsSystem, type OperationsSystem } from '../../../src/system';
import { requireBuiltCli, runCli, runCliToEnd, type CliRun } from '../../support/cli';
import { testConfig } from '../../support/config';
import { FakeApiServer, kubeconfigFor } from '../../support/fake-apiserver';
import { request, type HttpAnswer } from '../../support/http';
import { createTestPki, serverTls, type TestPki } from '../../support/pki';
import { waitFor } from '../../support/wait';
import { fleetServerEnv, fleetWrite } from './harness';

jest.setTimeout(120_000);

const devNull = (): NodeJS.WritableStream => new Writable({ write: (_chunk, _encoding, done) => done() });

let pki: TestPki;
let dir: string;
let api: FakeApiServer;
let fleet: CliRun;
let fleetUrl: string;
let apiPort: number;
const nodes: OperationsSystem[] = [];

interface Health {
  status: string;
  nodes: Array<{ name: string; status: string; url: string; dialect: string }>;
  discovery?: Array<{ source: string; synced: boolean; problem: string | null }>;
  reason?: string;
}

function fleetCall(pathName: string): Promise<HttpAnswer> {
  return request(`${fleetUrl}${pathName}`, { ca: pki.serverCA.certPem, client: pki.client });
}

async function health(): Promise<{ status: number; body: Health }> {
  const answer = await fleetCall('/fleet/healthz');
  return { status: answer.status, body: answer.json as Health };
}

/** A Service in front of node `index`: clusterIP 127.0.0.1, port `operations` = that node's port. */
function service(name: string, index: number, labels: Record<string, string> = { app: 'peer' }) {
  const port = Number(new URL(nodes[index]!.url).port);
  api.setObject('services', 'fabric', {
    metadata: { name, labels },
    spec: {
      clusterIP: '127.0.0.1',
      ports: [
        { name: 'grpc', port: 7051 },
        { name: 'operations', port },
      ],
    },
  });
}

async function nodeNames(): Promise<string[]> {
  return (await health()).body.nodes.map((node) => node.name).sort();
}

async function waitForNodes(names: string[]): Promise<void> {
  await waitFor(`the fleet to hold ${names.join(', ') || 'no node'}`, async () => JSON.stringify(await nodeNames()) === JSON.stringify(names));
}

function oneShot(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return runCliToEnd(['fleet', ...args, '--fleet-config', path.join(dir, 'oneshot.yaml')], { KUBECONFIG: path.join(dir, 'kubeconfig') });
}

beforeAll(async () => {
  requireBuiltCli();
  pki = await createTestPki();
  dir = await mkdtemp(path.join(tmpdir(), 'fabric-ops-fleet-discovery-'));
  for (let index = 0; index < 3; index += 1) {
    nodes.push(await startOperationsSystem({ config: testConfig({ operations: { tls: serverTls(pki) } }), logStream: devNull() }));
  }
  api = new FakeApiServer({ cert: pki.server.certPem, key: pki.server.keyPem }, 'token-fleet-discovery');
  // The API server's port is known, then it goes: fabric-ops starts while it is down.
  await api.start();
  apiPort = api.port;
  await api.stop();
  await writeFile(path.join(dir, 'kubeconfig'), kubeconfigFor(api, pki.serverCA.certPem));
  await writeFile(path.join(dir, 'ca.pem'), pki.serverCA.certPem);
  const fleetFile = (state: string): string =>
    [
      state,
      'nodeTimeout: 1s',
      'pollInterval: 0s',
      'minRoundInterval: 0s',
      "writers: ['O=fabric-ops tests,CN=operator']",
      "groups: { org1: { tls: { caFiles: ['ca.pem'] } } }",
      'discovery:',
      '  kubernetes:',
      '    - { kind: Service, selector: app=peer, port: operations, group: org1, address: clusterIP, tlsServerName: localhost }',
      '    - { kind: Pod, selector: app=orderer, port: operations, group: org1, dialect: orderer }',
      '',
    ].join('\n');
  await writeFile(path.join(dir, 'fleet.yaml'), fleetFile(`stateDirectory: ${path.join(dir, 'state')}`));
  // Put-backs in a ConfigMap only: the one-shot command reads, so it needs no state directory.
  await writeFile(path.join(dir, 'oneshot.yaml'), fleetFile('stateConfigMap: fabric-ops-fleet'));
  fleet = runCli([], fleetServerEnv(pki, path.join(dir, 'fleet.yaml'), { KUBECONFIG: path.join(dir, 'kubeconfig'), CORE_METRICS_PROVIDER: 'prometheus' }));
  fleetUrl = await fleet.listening();
});

afterAll(async () => {
  fleet?.child.kill('SIGTERM');
  await fleet?.exited;
  await Promise.all(nodes.map((node) => node.stop(0)));
  await api?.close();
  await rm(dir, { recursive: true, force: true });
  await pki?.cleanup();
});

test('API server down at start: 503 naming the source and why; once it is up, 200 with the Services it lists', async () => {
  const down = await health();
  expect(down.status).toBe(503);
  expect(down.body.reason).toContain('discovery has not listed every source yet');
  expect(down.body.discovery).toEqual([
    { source: 'discovery.kubernetes[0] (Services app=peer in namespace fabric)', synced: false, problem: expect.stringContaining('ECONNREFUSED') as string },
    { source: 'discovery.kubernetes[1] (Pods app=orderer in namespace fabric)', synced: false, problem: expect.stringContaining('ECONNREFUSED') as string },
  ]);
  // A write now cannot know which nodes its selector means: 503, try again, no node touched.
  const early = await fleetWrite(fleetUrl, pki, 'PUT', { spec: 'debug', selector: {} });
  expect(early.status).toBe(503);
  expect(early.headers['retry-after']).toBe('1');
  expect((early.json as { error: string }).error).toContain('the fleet is not known yet: discovery has not listed');
  service('peer0', 0);
  service('peer1', 1);
  // Not selected: another label.
  service('couchdb', 2, { app: 'couchdb' });
  await api.start(apiPort);
  const up = await waitFor('the fleet to answer 200', async () => {
    const answer = await health();
    return answer.status === 200 ? answer : undefined;
  });
  expect(up.body.discovery).toEqual([
    { source: 'discovery.kubernetes[0] (Services app=peer in namespace fabric)', synced: true, problem: null },
    { source: 'discovery.kubernetes[1] (Pods app=orderer in namespace fabric)', synced: true, problem: null },
  ]);
  expect(up.body.nodes.map((node) => [node.name, node.status, node.url])).toEqual([
    ['peer0.fabric', 'ok', nodes[0]!.url],
    ['peer1.fabric', 'ok', nodes[1]!.url],
  ]);
});

test('a Service added joins; one removed is gone from /fleet/healthz and /metrics', async () => {
  service('peer2', 2);
  await waitForNodes(['peer0.fabric', 'peer1.fabric', 'peer2.fabric']);
  let metrics = (await fleetCall('/metrics')).body;
  expect(metrics).toContain('fleet_node_up{node="peer2.fabric",group="org1"} 1');
  expect(metrics).toContain('fleet_nodes_known 3');
  api.deleteObject('services', 'fabric', 'peer2');
  await waitForNodes(['peer0.fabric', 'peer1.fabric']);
  metrics = (await fleetCall('/metrics')).body;
  expect(metrics).not.toContain('peer2.fabric');
  expect(metrics).toContain('fleet_nodes_known 2');
  expect(metrics).toContain('fleet_node_up{node="peer1.fabric",group="org1"} 1');
});

test('a Service relabelled out of the selector leaves; relabelled back, it joins again', async () => {
  service('peer1', 1, { app: 'retired' });
  await waitForNodes(['peer0.fabric']);
  expect((await fleetCall('/metrics')).body).not.toContain('peer1.fabric');
  service('peer1', 1);
  await waitForNodes(['peer0.fabric', 'peer1.fabric']);
});

test('watches dropped, history compacted (410): changes made meanwhile are still seen', async () => {
  api.dropWatches();
  api.compact();
  service('peer2', 2);
  api.deleteObject('services', 'fabric', 'peer0');
  await waitForNodes(['peer1.fabric', 'peer2.fabric']);
  // A restart of the API server: every watch dropped, every resourceVersion expired.
  await api.stop();
  api.deleteObject('services', 'fabric', 'peer2');
  service('peer0', 0);
  await api.start(apiPort);
  await waitForNodes(['peer0.fabric', 'peer1.fabric']);
  const answer = await health();
  expect(answer.status).toBe(200);
  expect(answer.body.nodes.every((node) => node.status === 'ok')).toBe(true);
});

test('Pods: reached at their IP and container port; one without an IP is not a node yet, a terminating one leaves', async () => {
  const port = Number(new URL(nodes[2]!.url).port);
  const pod = (name: string, status: Record<string, unknown>, metadata: Record<string, unknown> = {}) =>
    api.setObject('pods', 'fabric', {
      metadata: { name, labels: { app: 'orderer' }, ...metadata },
      spec: { containers: [{ name: 'orderer', image: 'hyperledger/fabric-orderer:2.5', ports: [{ name: 'operations', containerPort: port }] }] },
      status,
    });
  pod('orderer0-0', { phase: 'Running', podIP: '127.0.0.1' });
  pod('orderer1-0', { phase: 'Pending' });
  await waitForNodes(['orderer0-0.fabric', 'peer0.fabric', 'peer1.fabric']);
  const entry = (await health()).body.nodes.find((node) => node.name === 'orderer0-0.fabric');
  expect(entry).toMatchObject({ status: 'ok', url: `https://127.0.0.1:${port}`, dialect: 'orderer' });
  pod('orderer1-0', { phase: 'Running', podIP: '127.0.0.1' });
  await waitForNodes(['orderer0-0.fabric', 'orderer1-0.fabric', 'peer0.fabric', 'peer1.fabric']);
  pod('orderer0-0', { phase: 'Running', podIP: '127.0.0.1' }, { deletionTimestamp: new Date().toISOString() });
  api.deleteObject('pods', 'fabric', 'orderer1-0');
  await waitForNodes(['peer0.fabric', 'peer1.fabric']);
  api.deleteObject('pods', 'fabric', 'orderer0-0');
  expect((await fleetCall('/metrics')).body).not.toContain('orderer');
});

test('only list and watch of services and pods in the namespace were asked of the API server', () => {
  const calls = new Set(api.requests.map((req) => `${req.method} ${req.path}${req.query.get('watch') === 'true' ? ' watch' : ''}`));
  expect([...calls].sort()).toEqual([
    'GET /api/v1/namespaces/fabric/pods',
    'GET /api/v1/namespaces/fabric/pods watch',
    'GET /api/v1/namespaces/fabric/services',
    'GET /api/v1/namespaces/fabric/services watch',
  ]);
});

test('fleet status --fleet-config with discovery: lists the sources, then asks the nodes (a ConfigMap-only state is fine: read-only)', async () => {
  const run = await oneShot(['status']);
  expect(run.stderr).toBe('');
  expect(run.code).toBe(0);
  expect(run.stdout).toMatch(/^peer0\.fabric\s+org1\s+unknown\s+ok\s+\d+ms$/m);
  expect(run.stdout).toMatch(/^peer1\.fabric\s+org1\s+unknown\s+ok\s+\d+ms$/m);
  expect(run.stdout).toContain('2/2 healthy (2 required): OK');
});

test('fleet status --fleet-config when a source cannot list: exit 1 naming the source and the API server refusal', async () => {
  api.authorize = (call) => call.resource !== 'services';
  try {
    const run = await oneShot(['status']);
    expect(run.code).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr).toContain("discovery.kubernetes[0] (Services app=peer in fabric-ops' namespace)");
    expect(run.stderr).toContain('services is forbidden');
  } finally {
    api.authorize = null;
  }
});
