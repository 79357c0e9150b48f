import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { kubernetesApiAccess } from '../../../src/kubernetes/access';
import { listPageSize } from '../../../src/kubernetes/list-watch-api';
import { FakeApiServer, fakeServiceAccountUser, kubeconfigFor, type FakeResource, type ObjectInput } from '../../support/fake-apiserver';
import { createTestPki, type TestPki } from '../../support/pki';
import { terminate } from '../../support/processes';
import { delay, waitFor } from '../../support/wait';

/**
 * The Reflector with createListWatchApi and the real transport (built, dist/kubernetes), with
 * credentials from a kubeconfig through @kubernetes/client-node (connectKubernetes), in a child
 * process (client-node is ESM only, which jest cannot load), against the fake API server
 * behaving as kube-apiserver does. The child prints what the handler saw, one JSON line each.
 */

const reflectorJs = path.resolve(__dirname, '../../../dist/kubernetes/index.js');

const runner = `
const { connectKubernetes, createListWatchApi, Reflector } = require(${JSON.stringify(reflectorJs)});
const print = (record) => process.stdout.write(JSON.stringify(record) + '\\n');
const key = (object) => object.metadata.namespace + '/' + object.metadata.name;
const log = (level) => (msg) => print({ log: level, msg });
const logger = { name: 'test', payload() {}, debug: log('debug'), info: log('info'), warn: log('warn'), error: log('error'), isEnabled: () => true };
(async () => {
  const target = JSON.parse(process.env.TARGET);
  const connection = await connectKubernetes(process.env);
  const reflector = new Reflector({
    api: createListWatchApi(connection.transport, target),
    what: target.resource + ' in ' + target.namespace + ' with selector ' + target.labelSelector,
    logger,
    handler: {
      replace: (items) => print({ replace: items.map(key).sort() }),
      upsert: (object) => print({ upsert: key(object), labels: object.metadata.labels ?? {} }),
      remove: (object) => print({ remove: key(object), rv: object.metadata.resourceVersion }),
    },
  });
  // The Reflector's timers are unref'd (src/time.ts): a process that serves nothing else stays up on its own.
  setInterval(() => undefined, 1 << 30);
  reflector.start();
  reflector.whenSynced().then(() => print({ synced: reflector.synced }));
  process.on('SIGTERM', () => reflector.stop().then(() => { print({ stopped: true, problem: reflector.problem }); process.exit(0); }));
})().catch((error) => { print({ fatal: String(error && error.message) }); process.exit(1); });
`;

interface Seen {
  replace?: string[];
  upsert?: string;
  labels?: Record<string, string>;
  remove?: string;
  rv?: string;
  synced?: boolean;
  log?: string;
  msg?: string;
  fatal?: string;
}

/** A request as kube-apiserver's RBAC names it: resource/verb. */
function rbacOf(request: FakeApiServer['requests'][number]): string {
  const match = /^\/api\/v1\/(?:namespaces\/[^/]+\/)?([^/]+)(\/[^/]+)?$/.exec(request.path);
  if (!match) return `not a core API path: ${request.method} ${request.path}`;
  const verb = request.method === 'GET' ? (request.query.get('watch') === 'true' ? 'watch' : match[2] ? 'get' : 'list') : request.method;
  return `${match[1]}/${verb}`;
}

describe('Reflector + createListWatchApi + the transport against the fake API server', () => {
  let pki: TestPki;
  let dir: string;
  let api: FakeApiServer;
  let child: { process: ChildProcess; exited: Promise<unknown> } | null = null;

  beforeAll(async () => {
    if (!existsSync(reflectorJs)) throw new Error(`${reflectorJs} is missing: run \`npm run build\` (make test does) before this test`);
    pki = await createTestPki();
    dir = await mkdtemp(path.join(tmpdir(), 'fabric-ops-reflector-'));
  });

  afterAll(async () => {
    await pki?.cleanup();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  beforeEach(async () => {
    api = new FakeApiServer({ cert: pki.server.certPem, key: pki.server.keyPem }, 'token-reflector');
    await api.start();
    await writeFile(path.join(dir, 'kubeconfig'), kubeconfigFor(api, pki.serverCA.certPem));
  });

  afterEach(async () => {
    if (child) await terminate(child.process, child.exited, 5000);
    child = null;
    expect(api.invalid).toEqual([]);
    await api.close();
  });

  function reflect(target: { resource: 'services' | 'pods'; namespace: string; labelSelector: string }): {
    seen: () => Seen[];
    since: (count: number) => Seen[];
  } {
    const process_ = spawn(process.execPath, ['-e', runner], {
      env: { PATH: process.env.PATH, KUBECONFIG: path.join(dir, 'kubeconfig'), TARGET: JSON.stringify(target) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const records: Seen[] = [];
    let buffer = '';
    let stderr = '';
    process_.stdout?.on('data', (chunk: Buffer) => {
      buffer += chunk.toString();
      let newline = buffer.indexOf('\n');
      while (newline >= 0) {
        records.push(JSON.parse(buffer.slice(0, newline)) as Seen);
        buffer = buffer.slice(newline + 1);
        newline = buffer.indexOf('\n');
      }
    });
    process_.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const exited = new Promise((resolve) => process_.on('exit', resolve));
    child = { process: process_, exited };
    const seen = (): Seen[] => {
      const fatal = records.find((record) => record.fatal !== undefined);
      if (fatal || stderr !== '') throw new Error(`the reflector process failed: ${fatal?.fatal ?? ''} ${stderr}`);
      return records;
    };
    return { seen, since: (count) => seen().slice(count) };
  }

  const handled = (records: Seen[]): Seen[] => records.filter((record) => record.log === undefined && record.synced === undefined);
  const lines = (records: Seen[], level: string): string[] => records.filter((record) => record.log === level).map((record) => record.msg ?? '');

  function set(resource: FakeResource, namespace: string, name: string, labels: Record<string, string>, extra: Partial<ObjectInput> = {}): void {
    api.setObject(resource, namespace, { metadata: { name, labels }, ...extra });
  }

  test('Services added, removed and relabelled in and out of the selector; a dropped watch resumes without a list; a restart (410) lists again and replaces the set', async () => {
    set('services', 'fabric', 'peer0', { app: 'peer', org: 'org1' });
    set('services', 'fabric', 'peer1', { app: 'peer', org: 'org2' });
    set('services', 'fabric', 'orderer0', { app: 'orderer' });
    set('services', 'other', 'peer9', { app: 'peer' });
    const { seen, since } = reflect({ resource: 'services', namespace: 'fabric', labelSelector: 'app=peer' });
    await waitFor('synced', () => seen().some((record) => record.synced === true));
    expect(handled(seen())).toEqual([{ replace: ['fabric/peer0', 'fabric/peer1'] }]);
    await waitFor('the watch', () => api.openWatchesOf('services') === 1);

    let mark = seen().length;
    set('services', 'fabric', 'peer2', { app: 'peer', org: 'org1' });
    set('services', 'fabric', 'peer1', { app: 'retired', org: 'org2' }); // out of the selector
    set('services', 'fabric', 'orderer0', { app: 'peer' }); // into it
    set('services', 'fabric', 'peer0', { app: 'peer', org: 'org3' }); // stays, changed
    set('services', 'fabric', 'peer1', { app: 'retired', org: 'org4' }); // changed while out: nothing
    set('services', 'other', 'peer8', { app: 'peer' }); // another namespace: nothing
    set('pods', 'fabric', 'peer0-0', { app: 'peer' }); // another resource: nothing
    api.deleteObject('services', 'fabric', 'peer2');
    await waitFor('the changes', () => handled(since(mark)).length >= 5);
    // No more come meanwhile: the changes outside the selector, the namespace or the resource make nothing.
    await delay(300);
    expect(handled(since(mark)).map(({ rv: _rv, ...record }) => record)).toEqual([
      { upsert: 'fabric/peer2', labels: { app: 'peer', org: 'org1' } },
      { remove: 'fabric/peer1' },
      { upsert: 'fabric/orderer0', labels: { app: 'peer' } },
      { upsert: 'fabric/peer0', labels: { app: 'peer', org: 'org3' } },
      { remove: 'fabric/peer2' },
    ]);

    // A dropped connection: watched again from the last resourceVersion, no list, no warning.
    const lists = api.listRequests('services').length;
    const watches = api.watchRequests().length;
    api.dropWatches();
    await waitFor('a new watch', () => api.watchRequests().length > watches && api.openWatchesOf('services') === 1);
    const resumed = api.watchRequests().at(-1);
    expect(Number(resumed?.query.get('resourceVersion'))).toBeGreaterThan(Number(api.watchRequests()[0]?.query.get('resourceVersion')));
    mark = seen().length;
    set('services', 'fabric', 'peer3', { app: 'peer' });
    await waitFor('the change after the drop', () => handled(since(mark)).length >= 1);
    expect(handled(since(mark))).toEqual([{ upsert: 'fabric/peer3', labels: { app: 'peer' } }]);
    expect(api.listRequests('services')).toHaveLength(lists);

    // A restart: changes made while it is down, every resourceVersion expired after it.
    const port = api.port;
    await api.stop();
    // Down a while: the watch loses the server and retries before it is back.
    await delay(1500);
    api.deleteObject('services', 'fabric', 'peer3');
    set('services', 'fabric', 'peer4', { app: 'peer' });
    mark = seen().length;
    await api.start(port);
    await waitFor('the set listed again', () => handled(since(mark)).some((record) => record.replace !== undefined), { timeoutMs: 10_000 });
    expect(handled(since(mark))).toEqual([{ replace: ['fabric/orderer0', 'fabric/peer0', 'fabric/peer4'] }]);
    await waitFor('watching again', () => lines(seen(), 'info').length > 0 && api.openWatchesOf('services') === 1, { timeoutMs: 10_000 });
    expect(lines(seen(), 'warn')).toHaveLength(1);
    expect(lines(seen(), 'warn')[0]).toMatch(/^cannot watch services in fabric with selector app=peer \(.*ECONNREFUSED.*\); retrying with backoff$/);
    expect(lines(seen(), 'info')).toEqual(['watching services in fabric with selector app=peer again']);
    mark = seen().length;
    set('services', 'fabric', 'peer5', { app: 'peer' });
    await waitFor('a change after the restart', () => handled(since(mark)).length >= 1);
    expect(handled(since(mark))).toEqual([{ upsert: 'fabric/peer5', labels: { app: 'peer' } }]);

    // What was asked: the namespaced collection, the selector, bookmarks and a server timeout of 5 to 10 minutes.
    for (const request of api.requests) expect(request.path).toBe('/api/v1/namespaces/fabric/services');
    for (const request of api.requests) expect(request.query.get('labelSelector')).toBe('app=peer');
    for (const request of api.watchRequests()) {
      expect(request.query.get('allowWatchBookmarks')).toBe('true');
      expect(Number(request.query.get('timeoutSeconds'))).toBeGreaterThanOrEqual(300);
      expect(Number(request.query.get('timeoutSeconds'))).toBeLessThan(600);
    }
  }, 40_000);

  test('every namespace: Pods across namespaces at /api/v1/pods, with a set-based selector; the calls fit the access table', async () => {
    set('pods', 'fabric', 'peer0-0', { app: 'peer', org: 'org1' });
    set('pods', 'org2', 'peer0-0', { app: 'peer', org: 'org2' });
    set('pods', 'org3', 'peer0-0', { app: 'peer', org: 'org3' });
    set('services', 'org2', 'peer0', { app: 'peer', org: 'org2' });
    const { seen, since } = reflect({ resource: 'pods', namespace: '*', labelSelector: 'app=peer,org in (org1,org2)' });
    await waitFor('synced', () => seen().some((record) => record.synced === true));
    expect(handled(seen())).toEqual([{ replace: ['fabric/peer0-0', 'org2/peer0-0'] }]);
    await waitFor('the watch', () => api.openWatchesOf('pods') === 1);
    const mark = seen().length;
    set('pods', 'org4', 'peer1-0', { app: 'peer', org: 'org2' });
    set('pods', 'org3', 'peer0-0', { app: 'peer', org: 'org1' });
    set('pods', 'fabric', 'peer0-0', { app: 'peer', org: 'org5' });
    await waitFor('three changes', () => handled(since(mark)).length >= 3);
    expect(handled(since(mark)).map(({ rv: _rv, labels: _labels, ...record }) => record)).toEqual([
      { upsert: 'org4/peer1-0' },
      { upsert: 'org3/peer0-0' },
      { remove: 'fabric/peer0-0' },
    ]);
    for (const request of api.requests) expect(request.path).toBe('/api/v1/pods');
    const used = new Set(api.requests.map(rbacOf));
    const granted = new Set(
      kubernetesApiAccess.filter((entry) => entry.feature === 'fleetDiscovery').flatMap((entry) => entry.verbs.map((verb) => `${entry.resource}/${verb}`)),
    );
    for (const call of used) expect(granted).toContain(call);
  });

  test('a selection larger than a page is listed in pages of listPageSize and handed to replace whole', async () => {
    for (let index = 0; index < 2 * listPageSize + 100; index += 1) set('services', 'fabric', `peer${String(index).padStart(4, '0')}`, { app: 'peer' });
    set('services', 'fabric', 'orderer0', { app: 'orderer' });
    const { seen } = reflect({ resource: 'services', namespace: 'fabric', labelSelector: 'app=peer' });
    await waitFor('synced', () => seen().some((record) => record.synced === true));
    const replaced = handled(seen())[0]?.replace ?? [];
    expect(replaced).toHaveLength(2 * listPageSize + 100);
    expect(new Set(replaced).size).toBe(replaced.length);
    expect(replaced).not.toContain('fabric/orderer0');
    const pages = api.listRequests('services');
    expect(pages.map((request) => [request.query.get('limit'), request.query.has('continue')])).toEqual([
      [String(listPageSize), false],
      [String(listPageSize), true],
      [String(listPageSize), true],
    ]);
    // The watch starts from the list's snapshot.
    await waitFor('the watch', () => api.openWatchesOf('services') === 1);
    expect(api.watchRequests()[0]?.query.get('resourceVersion')).toBe(api.getObject('services', 'fabric', 'orderer0')?.metadata.resourceVersion);
  });

  test("a namespaced Role asked for every namespace: one warning with the API server's 403 message, not synced, and a recovery once it is granted", async () => {
    set('services', 'fabric', 'peer0', { app: 'peer' });
    api.authorize = ({ namespace }) => namespace === 'fabric';
    const { seen } = reflect({ resource: 'services', namespace: '*', labelSelector: 'app=peer' });
    const warning = await waitFor('the warning', () => lines(seen(), 'warn')[0]);
    expect(warning).toBe(
      `cannot watch services in * with selector app=peer (HTTP 403: services is forbidden: User "${fakeServiceAccountUser}" cannot list resource "services" in API group "" at the cluster scope); retrying with backoff`,
    );
    expect(seen().some((record) => record.synced)).toBe(false);
    api.authorize = null;
    // The refused backoff starts at 1 s.
    await waitFor('synced', () => seen().some((record) => record.synced === true), { timeoutMs: 10_000 });
    expect(handled(seen())).toEqual([{ replace: ['fabric/peer0'] }]);
    expect(lines(seen(), 'warn')).toHaveLength(1);
  });
});
