/**
 * The fleet watches the put-back ConfigMap it owns (issue 30 item 9), and put-backs that end
 * together are written, recorded and logged once (item 10). The built command (dist/cli.js) in
 * fleet mode with `stateConfigMap` only and Kubernetes Events on, steering five fabric-ops nodes
 * over mutual TLS, against the fake API server (test/support/fake-apiserver.ts: list and watch by
 * field selector, DELETED events, the real server's 409 with the UID precondition for an update
 * of a deleted object). Nothing the fleet keeps survives it but the ConfigMap.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { putBackConfigMapKey, putBackConfigMapLabels } from '../../../src/fleet/putback-configmap';
import type { PendingPutBack } from '../../../src/fleet/putback-store';
import { kubernetesApiAccess } from '../../../src/kubernetes/access';
import { startOperationsSystem, type OperationsSystem } from '../../../src/system';
import { requireBuiltCli, runCli, type CliRun } from '../../support/cli';
import { testConfig } from '../../support/config';
import { FakeApiServer, kubeconfigFor, type ReceivedRequest, type StoredEvent } from '../../support/fake-apiserver';
import { request, type HttpAnswer } from '../../support/http';
import { createTestPki, serverTls, type TestPki } from '../../support/pki';
import { terminate } from '../../support/processes';
import { waitFor } from '../../support/wait';
import { fleetServerEnv, fleetWrite } from './harness';

jest.setTimeout(120_000);

const namespace = 'fabric';
const configMapName = 'fleet-putbacks';
const podName = 'fleet-ops-7f6d8-xk2lp';
const operator = 'O=fabric-ops tests,CN=operator';
const where = `ConfigMap ${namespace}/${configMapName} (key ${putBackConfigMapKey})`;
const nodeNames = ['ops0', 'ops1', 'ops2', 'ops3', 'ops4'];

let pki: TestPki;
let api: FakeApiServer;
let dir: string;
const nodes: OperationsSystem[] = [];
let fleet: CliRun | null = null;
let url: string;

const quiet = (): NodeJS.WritableStream => new Writable({ write: (_chunk, _encoding, done) => done() });

function startFleet(): Promise<string> {
  fleet = runCli(
    [],
    fleetServerEnv(pki, path.join(dir, 'fleet.yaml'), {
      KUBECONFIG: path.join(dir, 'kubeconfig'),
      POD_NAME: podName,
      POD_NAMESPACE: namespace,
      CORE_OPERATIONS_KUBERNETES_EVENTS_ENABLED: 'true',
    }),
  );
  return fleet.listening().then((listening) => (url = listening));
}

/** The fleet's log so far. */
const output = (): string => (fleet ? fleet.stdout() + fleet.stderr() : '');

/** The log's lines after `from` characters that match `pattern`. */
const linesSince = (from: number, pattern: RegExp): string[] =>
  output()
    .slice(from)
    .split('\n')
    .filter((line) => pattern.test(line));

function fleetPut(body: unknown): Promise<HttpAnswer> {
  return fleetWrite(url, pki, 'PUT', body);
}

/** The ConfigMap as the API server stores it, or null. */
function stored(): { labels: Record<string, string>; data: Record<string, string> } | null {
  const object = api.getObject('configmaps', namespace, configMapName) as unknown as
    { metadata: { labels?: Record<string, string> }; data?: Record<string, string> } | undefined;
  return object === undefined ? null : { labels: object.metadata.labels ?? {}, data: object.data ?? {} };
}

/** The put-backs the ConfigMap holds, or null when it or the key is missing or holds something else. */
function held(): PendingPutBack[] | null {
  const text = stored()?.data[putBackConfigMapKey];
  if (text === undefined) return null;
  try {
    return (JSON.parse(text) as { pending: PendingPutBack[] }).pending;
  } catch {
    return null;
  }
}

const specs = (): string[] => nodes.map((node) => node.getLogSpec());

/** ConfigMap writes (update, create) received after the first `from` requests. */
const configMapWrites = (from: number): string[] =>
  api.requests
    .slice(from)
    .filter((received) => received.path.startsWith(`/api/v1/namespaces/${namespace}/configmaps`) && received.method !== 'GET')
    .map((received) => received.method);

const eventsOf = (reason: string): StoredEvent[] => [...api.events.values()].filter((event) => event.reason === reason);

/** A request as kube-apiserver's RBAC names it: a GET of a collection with watch=true is `watch`. */
function rbacOf(received: ReceivedRequest): string {
  const match = /^\/api\/v1\/namespaces\/[^/]+\/([^/]+)(\/[^/]+)?$/.exec(received.path);
  if (!match) return `not a namespaced core API path: ${received.path}`;
  const verbs: Record<string, string> = { POST: 'create', PUT: 'update', PATCH: 'patch' };
  if (received.method !== 'GET') return `${match[1]}/${verbs[received.method] ?? received.method}`;
  return `${match[1]}/${match[2] ? 'get' : received.query.get('watch') === 'true' ? 'watch' : 'list'}`;
}

beforeAll(async () => {
  requireBuiltCli();
  pki = await createTestPki();
  api = new FakeApiServer({ cert: pki.server.certPem, key: pki.server.keyPem }, 'token-fleet-watch');
  await api.start();
  dir = await mkdtemp(path.join(tmpdir(), 'fabric-ops-fleet-cm-watch-'));
  await writeFile(path.join(dir, 'kubeconfig'), kubeconfigFor(api, pki.serverCA.certPem));
  for (let index = 0; index < nodeNames.length; index += 1) {
    nodes.push(await startOperationsSystem({ config: testConfig({ operations: { tls: serverTls(pki) } }), logStream: quiet() }));
  }
  await writeFile(
    path.join(dir, 'fleet.yaml'),
    [
      `stateConfigMap: ${configMapName}`,
      'pollInterval: 0s',
      'minRoundInterval: 0s',
      `writers: ['${operator}']`,
      'groups:',
      `  ops: { tls: { caFiles: ['${pki.serverCA.cert}'], certFile: '${pki.client.cert}', keyFile: '${pki.client.key}' } }`,
      'nodes:',
      ...nodeNames.map((name, index) => `  - { name: ${name}, url: '${nodes[index]!.url}', dialect: peer, group: ops }`),
      '',
    ].join('\n'),
  );
  await startFleet();
});

afterAll(async () => {
  if (fleet) await terminate(fleet.child, fleet.exited, 5000);
  await Promise.all(nodes.map((node) => node.stop(0)));
  await api?.close();
  await pki?.cleanup();
  if (dir) await rm(dir, { recursive: true, force: true });
});

afterEach(() => {
  // Every body the fleet sent passed the fake API server's schema check.
  expect(api.invalid).toEqual([]);
});

test('a TTL on 5 nodes ends: exactly 1 ConfigMap write, 1 Event and 1 audit line naming the 5 nodes', async () => {
  await waitFor('the ConfigMap the start creates', () => held()?.length === 0);
  const answer = await fleetPut({ spec: 'gossip=debug:info', selector: {}, ttl: '2s' });
  expect(answer.status).toBe(200);
  expect(held()?.map((entry) => entry.node)).toEqual(nodeNames);
  expect(specs()).toEqual(Array(5).fill('gossip=debug:info'));
  const requestsBefore = api.requests.length;
  const logBefore = output().length;

  await waitFor('every node put back and the ConfigMap emptied', () => specs().every((spec) => spec === 'info') && held()?.length === 0, {
    timeoutMs: 15_000,
  });
  const event = await waitFor('the FleetLogSpecPutBack Event', () => eventsOf('FleetLogSpecPutBack').find((found) => found.message.includes('TTL ended')), {
    timeoutMs: 10_000,
  });
  const line = await waitFor('the audit line', () => linesSince(logBefore, /fleet logging specification put back \(ttl\)/)[0]);

  expect(configMapWrites(requestsBefore)).toEqual(['PUT']);
  expect(eventsOf('FleetLogSpecPutBack')).toHaveLength(1);
  expect(event).toMatchObject({
    type: 'Normal',
    count: 1,
    message: `fleet logging specification put back (TTL ended) by ttl of ${operator}: 5 of 5 nodes restored: ${nodeNames.map((name) => `${name}=restored to 'info'`).join(', ')}`,
  });
  expect(linesSince(logBefore, /fleet logging specification put back/)).toHaveLength(1);
  expect(line).toContain(`by ttl of ${operator}: 5 of 5 nodes restored: ${nodeNames.map((name) => `${name}=restored`).join(', ')}`);
});

test('the ConfigMap deleted while put-backs are pending: made again with them within seconds, with no write to the fleet; one warning, one Warning Event', async () => {
  const answer = await fleetPut({ spec: 'debug', selector: {}, ttl: '1h' });
  expect(answer.status).toBe(200);
  const pending = held();
  expect(pending?.map((entry) => entry.node)).toEqual(nodeNames);
  const requestsBefore = api.requests.length;
  const logBefore = output().length;

  api.deleteConfigMap(namespace, configMapName);
  expect(stored()).toBeNull();
  const back = await waitFor('the ConfigMap made again', () => held(), { timeoutMs: 5_000 });
  expect(back).toEqual(pending);
  expect(stored()?.labels).toEqual(putBackConfigMapLabels);
  // Nothing asked the fleet for anything meanwhile: the fleet made it again on its own, and the nodes keep the spec.
  expect(configMapWrites(requestsBefore)).toContain('POST');
  expect(specs()).toEqual(Array(5).fill('debug'));

  const event = await waitFor('the FleetPutBacksRewritten Event', () => eventsOf('FleetPutBacksRewritten')[0], { timeoutMs: 10_000 });
  expect(event).toMatchObject({
    type: 'Warning',
    involvedObject: { kind: 'Pod', name: podName, namespace },
    message: `${where} was deleted by someone else while 5 put-backs were pending; fabric-ops wrote them again: ${nodeNames.join(', ')}`,
  });
  const warning = await waitFor('the warning', () => linesSince(logBefore, /by someone else/)[0]);
  expect(warning).toMatch(/was deleted by someone else \(HTTP 409: .*Precondition failed: UID in precondition: .*\); creating it again/);
  expect(linesSince(logBefore, /by someone else/)).toHaveLength(1);
});

test('its key removed, then changed to something fabric-ops did not write: written again over the key each time, other keys kept', async () => {
  const pending = held();
  expect(pending).toHaveLength(5);
  let logBefore = output().length;
  api.setConfigMap(namespace, configMapName, { note: 'kept' });
  await waitFor('the key written again', () => held(), { timeoutMs: 5_000 });
  expect(held()).toEqual(pending);
  expect(stored()?.data.note).toBe('kept');
  const removed = await waitFor('the warning', () => linesSince(logBefore, /by someone else/)[0]);
  expect(removed).toContain(`${where} lost its key by someone else while 5 put-backs were pending (${nodeNames.join(', ')}); fabric-ops wrote them again`);

  logBefore = output().length;
  api.setConfigMap(namespace, configMapName, { note: 'kept', [putBackConfigMapKey]: '{"version":1,"pending":[]}' });
  await waitFor('ours written over theirs', () => (held()?.length === 5 ? true : undefined), { timeoutMs: 5_000 });
  expect(held()).toEqual(pending);
  expect(stored()?.data.note).toBe('kept');
  const changed = await waitFor('the warning', () => linesSince(logBefore, /by someone else/)[0]);
  expect(changed).toContain(`${where} had its key changed by someone else while 5 put-backs were pending`);
  await waitFor('the Events', () => (eventsOf('FleetPutBacksRewritten').length === 3 ? true : undefined), { timeoutMs: 10_000 });
  expect(eventsOf('FleetPutBacksRewritten').map((event) => event.message.slice(0, event.message.indexOf(';')))).toEqual([
    `${where} was deleted by someone else while 5 put-backs were pending`,
    `${where} lost its key by someone else while 5 put-backs were pending`,
    `${where} had its key changed by someone else while 5 put-backs were pending`,
  ]);
});

test('deleted, then the fleet killed (SIGKILL) before any write: a new fleet runs the overdue put-backs from the ConfigMap', async () => {
  const answer = await fleetPut({ spec: 'debug', selector: {}, ttl: '3s' });
  expect(answer.status).toBe(200);
  const pending = held()!;
  const dueAt = Math.max(...pending.map((entry) => entry.dueAt));
  api.deleteConfigMap(namespace, configMapName);
  await waitFor('the ConfigMap made again', () => held(), { timeoutMs: 5_000 });
  expect(held()).toEqual(pending);

  fleet!.child.kill('SIGKILL');
  expect((await fleet!.exited).signal).toBe('SIGKILL');
  fleet = null;
  // Down past the TTL: nobody puts them back meanwhile.
  await waitFor('the TTL to end', () => Date.now() > dueAt + 500, { timeoutMs: 10_000 });
  expect(specs()).toEqual(Array(5).fill('debug'));
  expect(held()).toEqual(pending);

  await startFleet();
  await waitFor('the put-backs after the restart', () => specs().every((spec) => spec === 'info') && held()?.length === 0, { timeoutMs: 15_000 });
  const after = await request(`${url}/fleet/logspec`, { ca: pki.serverCA.certPem, client: pki.client });
  expect((after.json as { nodes: Array<{ putBackAt?: string }> }).nodes.filter((node) => node.putBackAt !== undefined)).toEqual([]);
});

test('the calls are every fleetState entry of the access table and Events, nothing else; list and watch name the ConfigMap (so the Role can)', () => {
  const entries = (feature: string): string[] =>
    kubernetesApiAccess.filter((entry) => entry.feature === feature).flatMap((entry) => entry.verbs.map((verb) => `${entry.resource}/${verb}`));
  const made = new Set(api.requests.map(rbacOf));
  expect(entries('fleetState').filter((call) => !made.has(call))).toEqual([]);
  expect([...made].filter((call) => !entries('fleetState').includes(call) && !entries('events').includes(call))).toEqual([]);
  const listsAndWatches = api.requests.filter((received) => received.method === 'GET' && received.path.endsWith('/configmaps'));
  expect(listsAndWatches.length).toBeGreaterThan(0);
  expect(listsAndWatches.filter((received) => received.query.get('fieldSelector') !== `metadata.name=${configMapName}`)).toEqual([]);
});
