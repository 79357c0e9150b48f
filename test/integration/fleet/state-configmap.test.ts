/**
 * Pending put-backs in a ConfigMap (`stateConfigMap`, no `stateDirectory`): the built command
 * (dist/cli.js; client-node is ESM, which jest cannot load in-process) in fleet mode steering the double of a recorded
 * Fabric 2.5.12 peer (test/support/fabric-double.ts) and a fabric-ops node over mutual TLS, its put-backs
 * in the fake API server (test/support/fake-apiserver.ts: configmaps get/create/update with the
 * real server's 404 NotFound and 409 AlreadyExists/Conflict). A new fabric-ops, in a fresh
 * directory, finds them there and puts the nodes back.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { putBackConfigMapKey, putBackConfigMapLabels } from '../../../src/fleet/putback-configmap';
import type { PendingPutBack } from '../../../src/fleet/putback-store';
import { kubernetesApiAccess } from '../../../src/kubernetes/access';
import { startOperationsSystem, type OperationsSystem } from '../../../src/system';
import { testConfig } from '../../support/config';
import { requireBuiltCli, runCli, type CliRun } from '../../support/cli';
import { terminate } from '../../support/processes';
import { FakeApiServer, kubeconfigFor, type ReceivedRequest } from '../../support/fake-apiserver';
import { request, type HttpAnswer } from '../../support/http';
import { createTestPki, serverTls, type TestPki } from '../../support/pki';
import { delay, waitFor } from '../../support/wait';
import { FabricNodes, fleetServerEnv, fleetWrite } from './harness';

jest.setTimeout(120_000);

const namespace = 'fabric';
const configMapName = 'fleet-putbacks';
const operator = 'O=fabric-ops tests,CN=operator';

let pki: TestPki;
let api: FakeApiServer;
let fabric: FabricNodes;
let opsNode: OperationsSystem;
let kubeconfig: string;
let fleet: CliRun | null = null;
let url: string;
const dirs: string[] = [];

const quiet = (): NodeJS.WritableStream => new Writable({ write: (_chunk, _encoding, done) => done() });

/** The command in fleet mode, its fleet file in a new directory: nothing it keeps survives but the ConfigMap. */
async function runFleet(): Promise<CliRun> {
  const dir = await mkdtemp(path.join(tmpdir(), 'fabric-ops-fleet-cm-'));
  dirs.push(dir);
  const peer = fabric.node('peer0.org1');
  await writeFile(
    path.join(dir, 'fleet.yaml'),
    [
      `stateConfigMap: ${configMapName}`,
      'pollInterval: 0s',
      'minRoundInterval: 0s',
      `writers: ['${operator}']`,
      'groups:',
      `  org1: { tls: { caFiles: ['${peer.caFile}'], certFile: '${peer.clientCertFile}', keyFile: '${peer.clientKeyFile}' } }`,
      `  ops: { tls: { caFiles: ['${pki.serverCA.cert}'], certFile: '${pki.client.cert}', keyFile: '${pki.client.key}' } }`,
      'nodes:',
      `  - { name: peer0.org1, url: '${peer.url}', dialect: peer, group: org1 }`,
      `  - { name: ops0, url: '${opsNode.url}', dialect: peer, group: ops }`,
      '',
    ].join('\n'),
  );
  return runCli([], fleetServerEnv(pki, path.join(dir, 'fleet.yaml'), { KUBECONFIG: kubeconfig, POD_NAMESPACE: namespace }));
}

async function startFleet(): Promise<void> {
  fleet = await runFleet();
  url = await fleet.listening();
}

async function stopFleet(): Promise<void> {
  if (fleet) await terminate(fleet.child, fleet.exited, 5000);
  fleet = null;
}

function fleetPut(body: unknown): Promise<HttpAnswer> {
  return fleetWrite(url, pki, 'PUT', body);
}

/** The peer's own /logspec, asked with its org's client certificate. */
async function peerSpec(): Promise<string> {
  const answer = await fabric.request('peer0.org1', '/logspec');
  return (answer.json as { spec: string }).spec;
}

/** What the ConfigMap holds now, read back from the API server as kubectl would. */
async function configMap(): Promise<{ labels: Record<string, string>; pending: PendingPutBack[] } | null> {
  const answer = await request(`${api.url}/api/v1/namespaces/${namespace}/configmaps/${configMapName}`, {
    ca: pki.serverCA.certPem,
    headers: { Authorization: `Bearer ${api.token}` },
  });
  if (answer.status === 404) return null;
  const object = answer.json as { metadata: { labels?: Record<string, string> }; data: Record<string, string> };
  return { labels: object.metadata.labels ?? {}, pending: (JSON.parse(object.data[putBackConfigMapKey] ?? '') as { pending: PendingPutBack[] }).pending };
}

/** A request as kube-apiserver's RBAC names it. */
function rbacOf(received: ReceivedRequest): string {
  const match = /^\/api\/v1\/namespaces\/[^/]+\/([^/]+)(\/[^/]+)?$/.exec(received.path);
  if (!match) return `not a namespaced core API path: ${received.path}`;
  const verbs: Record<string, string> = { POST: 'create', PUT: 'update', PATCH: 'patch' };
  return `${match[1]}/${received.method === 'GET' ? (match[2] ? 'get' : received.query.get('watch') === 'true' ? 'watch' : 'list') : (verbs[received.method] ?? received.method)}`;
}

beforeAll(async () => {
  requireBuiltCli();
  pki = await createTestPki();
  api = new FakeApiServer({ cert: pki.server.certPem, key: pki.server.keyPem }, 'token-fleet-state');
  await api.start();
  const dir = await mkdtemp(path.join(tmpdir(), 'fabric-ops-fleet-cm-kube-'));
  dirs.push(dir);
  kubeconfig = path.join(dir, 'kubeconfig');
  await writeFile(kubeconfig, kubeconfigFor(api, pki.serverCA.certPem));
  fabric = await FabricNodes.start('2.5.12', { orgs: 1, peersPerOrg: 1, orderers: 0 });
  opsNode = await startOperationsSystem({ config: testConfig({ operations: { tls: serverTls(pki) } }), logStream: quiet() });
});

afterAll(async () => {
  await stopFleet();
  await opsNode?.stop(0);
  await fabric?.cleanup();
  await api?.close();
  await pki?.cleanup();
  await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
});

afterEach(() => {
  expect(api.invalid).toEqual([]);
});

test('the start creates the ConfigMap, labelled; a PUT with a TTL writes its put-backs there before answering', async () => {
  expect(await configMap()).toBeNull();
  await startFleet();
  expect(await configMap()).toEqual({ labels: putBackConfigMapLabels, pending: [] });
  const answer = await fleetPut({ spec: 'gossip=debug:info', selector: {}, ttl: '1h' });
  expect(answer.status).toBe(200);
  const held = await configMap();
  expect(held?.pending.map((entry) => [entry.node, entry.previous, entry.specs, entry.actor])).toEqual([
    ['peer0.org1', 'info', ['gossip=debug:info'], operator],
    ['ops0', 'info', ['gossip=debug:info'], operator],
  ]);
  expect(await peerSpec()).toBe('gossip=debug:info');
  // DELETE puts back now, and the ConfigMap follows.
  const restored = await request(`${url}/fleet/logspec`, { method: 'DELETE', ca: pki.serverCA.certPem, client: pki.client });
  expect(restored.status).toBe(200);
  expect((await configMap())?.pending).toEqual([]);
  expect(await peerSpec()).toBe('info');
});

test('edited, then deleted, by someone else while fabric-ops runs: its next write reads it again and writes its own (409 from the API server for both: a stale resourceVersion, then the UID precondition)', async () => {
  const before = api.getObject('configmaps', namespace, configMapName) as unknown as {
    metadata: { labels: Record<string, string> };
    data: Record<string, string>;
  };
  api.setObject('configmaps', namespace, {
    metadata: { name: configMapName, labels: before.metadata.labels },
    data: { ...before.data, note: 'added with kubectl edit' },
  });
  const answer = await fleetPut({ spec: 'gossip=debug:info', selector: { names: ['ops0'] }, ttl: '1h' });
  expect(answer.status).toBe(200);
  const edited = api.getObject('configmaps', namespace, configMapName) as unknown as { data: Record<string, string> };
  expect(edited.data.note).toBe('added with kubectl edit');
  expect((await configMap())?.pending.map((entry) => entry.node)).toEqual(['ops0']);
  expect(fleet!.stderr() + fleet!.stdout()).toMatch(/ConfigMap fabric\/fleet-putbacks \(key fleet-putbacks\.json\) was changed by someone else \(HTTP 409: /);

  api.deleteConfigMap(namespace, configMapName);
  const restored = await request(`${url}/fleet/logspec`, { method: 'DELETE', ca: pki.serverCA.certPem, client: pki.client });
  expect(restored.status).toBe(200);
  expect(opsNode.getLogSpec()).toBe('info');
  expect(await configMap()).toEqual({ labels: putBackConfigMapLabels, pending: [] });
  expect(fleet!.stderr() + fleet!.stdout()).toMatch(
    /was deleted by someone else \(HTTP 409: .*Precondition failed: UID in precondition: .*\); creating it again/,
  );
});

test('fabric-ops stopped during a TTL, a new one started in a fresh directory after it: the overdue put-backs run from the ConfigMap', async () => {
  const answer = await fleetPut({ spec: 'debug', selector: {}, ttl: '2s' });
  expect(answer.status).toBe(200);
  await stopFleet();
  expect((await configMap())?.pending.map((entry) => entry.node)).toEqual(['peer0.org1', 'ops0']);
  // Down past the TTL: nobody puts them back meanwhile.
  await delay(2500);
  expect(await peerSpec()).toBe('debug');
  await startFleet();
  await waitFor('the put-backs after the restart', async () => (await configMap())?.pending.length === 0, { timeoutMs: 10_000, everyMs: 100 });
  expect(await peerSpec()).toBe('info');
  expect(opsNode.getLogSpec()).toBe('info');
});

test('the API server refusing the write (403): the PUT fails 5xx and no node is changed', async () => {
  api.fault = 'forbidden';
  try {
    const answer = await fleetPut({ spec: 'debug', selector: {}, ttl: '1h' });
    expect(answer.status).toBe(500);
    expect((answer.json as { error: string }).error).toMatch(
      new RegExp(
        `^cannot write the pending put-backs to ConfigMap ${namespace}/${configMapName} \\(key ${putBackConfigMapKey.replace('.', '\\.')}\\): HTTP 403: .*; no node was changed$`,
      ),
    );
  } finally {
    api.fault = 'none';
  }
  expect(await peerSpec()).toBe('info');
  expect(opsNode.getLogSpec()).toBe('info');
  expect((await configMap())?.pending).toEqual([]);
  // Nothing pending in the process either.
  const specs = await request(`${url}/fleet/logspec`, { ca: pki.serverCA.certPem, client: pki.client });
  expect((specs.json as { nodes: Array<{ putBackAt?: string }> }).nodes.filter((node) => node.putBackAt !== undefined)).toEqual([]);
});

test('a ConfigMap holding something that is not a put-back document stops the start (exit 2), naming it', async () => {
  await stopFleet();
  api.setConfigMap(namespace, configMapName, { [putBackConfigMapKey]: 'not json' });
  const refused = await runFleet();
  expect((await refused.exited).code).toBe(2);
  expect(refused.stderr()).toMatch(new RegExp(`stateConfigMap: ConfigMap ${namespace}/${configMapName} \\(key fleet-putbacks\\.json\\) is not JSON`));
  expect(refused.stdout() + refused.stderr()).not.toContain('listening');
});

test('the calls are exactly the fleetState entries of the access table the chart derives its Role from', () => {
  const fleetState = kubernetesApiAccess
    .filter((entry) => entry.feature === 'fleetState')
    .flatMap((entry) => entry.verbs.map((verb) => `${entry.resource}/${verb}`));
  const made = new Set(api.requests.map(rbacOf));
  expect([...made].sort()).toEqual([...fleetState].sort());
});
