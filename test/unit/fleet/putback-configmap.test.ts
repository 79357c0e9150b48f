import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { CallOutcome } from '../../../src/fleet/client';
import { NodeDirectory } from '../../../src/fleet/directory';
import { FleetLogSpec } from '../../../src/fleet/logspec';
import {
  ConfigMapPutBackStore,
  FileAndConfigMapPutBackStore,
  maxConfigMapBytes,
  putBackConfigMapKey,
  putBackConfigMapLabels,
} from '../../../src/fleet/putback-configmap';
import { FilePutBackStore, formatPutBacks, PutBackPersistError, type PendingPutBack } from '../../../src/fleet/putback-store';
import type { FleetNode } from '../../../src/fleet/types';
import { ConfigError } from '../../../src/errors';
import { InstantScheduler } from '../../support/fake-scheduler';
import { checkAccessPath, type ApiAccess } from '../../../src/kubernetes/access';
import { KubernetesApiError } from '../../../src/kubernetes/api-error';
import { createConfigMapObjectApi, type ConfigMapObject } from '../../../src/kubernetes/configmap-object';
import type { KubernetesTransport } from '../../../src/kubernetes/transport';
import { DisabledProvider } from '../../../src/metrics/disabled/provider';
import { CaptureLoggers } from '../../support/capture-logger';
import { FakeScheduler } from '../../support/fake-scheduler';

/**
 * The ConfigMap store against a double of the transport that answers as kube-apiserver does for
 * configmaps get/create/update: 404 NotFound, 409 AlreadyExists on create, 409 Conflict on an
 * update whose resourceVersion is not the current one, 404 on an update of a deleted object, 403
 * Status bodies, and 422 past 1 MiB of data. (The same calls against the fake API server over
 * HTTPS: test/integration/fleet/state-configmap.test.ts.)
 */
const namespace = 'fabric';
const name = 'fleet-state';

class ApiServerDouble implements KubernetesTransport {
  readonly objects = new Map<string, ConfigMapObject>();
  readonly calls: string[] = [];
  forbidden: Array<'get' | 'create' | 'update'> = [];
  /** The next this many requests get no answer (the API server is down): the transport's error without a status. */
  unreachable = 0;
  /** The namespace does not exist: get 404 (as for any missing object), create 404 naming the namespace. */
  namespaceMissing = false;
  /** Runs once before the next create or update is answered: another writer acting in between. */
  meanwhile: (() => void) | null = null;
  private rv = 100;

  private fail(status: number, reason: string, message: string): never {
    throw KubernetesApiError.fromAnswer(status, reason, JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', message, reason, code: status }));
  }

  /** Another client's write (kubectl edit, a second replica). */
  put(object: ConfigMapObject): void {
    this.objects.set(object.metadata.name, { ...object, metadata: { ...object.metadata, resourceVersion: String(++this.rv), uid: 'uid-1' } });
  }

  request(access: ApiAccess, requestPath: string, options: { body?: unknown } = {}): Promise<unknown> {
    checkAccessPath(access, requestPath);
    const collection = `/api/v1/namespaces/${namespace}/configmaps`;
    const objectName = requestPath.startsWith(`${collection}/`) ? decodeURIComponent(requestPath.slice(collection.length + 1)) : null;
    this.calls.push(`${access.verb}${objectName ? ` ${objectName}` : ''}`);
    return new Promise((resolve) => {
      if (this.unreachable > 0) {
        this.unreachable -= 1;
        throw new KubernetesApiError(`${access.method} ${requestPath}: connect ECONNREFUSED 127.0.0.1:6443`);
      }
      if (this.forbidden.includes(access.verb as 'get')) {
        this.fail(
          403,
          'Forbidden',
          `configmaps${objectName ? ` "${objectName}"` : ''} is forbidden: User "system:serviceaccount:fabric:fabric-ops" cannot ${access.verb} resource "configmaps" in API group "" in the namespace "${namespace}"`,
        );
      }
      if (access.verb !== 'get' && this.meanwhile) {
        const other = this.meanwhile;
        this.meanwhile = null;
        other();
      }
      const body = options.body as ConfigMapObject;
      if (access.verb === 'get') {
        const found = this.objects.get(objectName ?? '');
        if (!found) this.fail(404, 'NotFound', `configmaps "${objectName}" not found`);
        return resolve(structuredClone(found));
      }
      // ValidateConfigMap: the values' lengths, not the keys'.
      const size = Object.values(body.data ?? {}).reduce((sum, value) => sum + Buffer.byteLength(value), 0);
      if (size > maxConfigMapBytes) this.fail(422, 'Invalid', `ConfigMap "${body.metadata.name}" is invalid: []: Too long: must have at most 1048576 bytes`);
      if (access.verb === 'create') {
        if (this.namespaceMissing) this.fail(404, 'NotFound', `namespaces "${namespace}" not found`);
        if (body.metadata.resourceVersion) this.fail(500, 'InternalError', 'resourceVersion should not be set on objects to be created');
        if (this.objects.has(body.metadata.name)) this.fail(409, 'AlreadyExists', `configmaps "${body.metadata.name}" already exists`);
        this.put(body);
        return resolve(structuredClone(this.objects.get(body.metadata.name)));
      }
      const existing = this.objects.get(objectName ?? '');
      if (!existing) this.fail(404, 'NotFound', `configmaps "${objectName}" not found`);
      if (body.metadata.resourceVersion !== existing.metadata.resourceVersion) {
        this.fail(
          409,
          'Conflict',
          `Operation cannot be fulfilled on configmaps "${objectName}": the object has been modified; please apply your changes to the latest version and try again`,
        );
      }
      this.put(body);
      return resolve(structuredClone(this.objects.get(objectName ?? '')));
    });
  }

  watch(): never {
    throw new Error('not used');
  }

  data(): Record<string, string> | undefined {
    return this.objects.get(name)?.data;
  }
}

/** The put-backs the double's ConfigMap holds. */
const held = (api: ApiServerDouble): PendingPutBack[] => (JSON.parse(api.data()![putBackConfigMapKey]!) as { pending: PendingPutBack[] }).pending;

const entry = (node: string, dueAt = 1_000_000): PendingPutBack => ({ node, previous: 'info', specs: ['debug'], dueAt, actor: 'O=org1,CN=operator' });

function setup() {
  const api = new ApiServerDouble();
  const loggers = new CaptureLoggers();
  const logger = loggers.getLogger('operations.fleet');
  // Time in the test's hands: each wait between start attempts moves the clock on at once.
  const scheduler = new InstantScheduler();
  const store = (): ConfigMapPutBackStore =>
    new ConfigMapPutBackStore({ api: createConfigMapObjectApi(api, namespace, name), logger, random: () => 0.5, scheduler });
  return { api, store, logger, lines: loggers.entries, waits: scheduler.waits };
}

describe('ConfigMapPutBackStore', () => {
  test("no ConfigMap: the start creates it, labelled as fabric-ops', holding the empty document; saves update it; the next store loads them", async () => {
    const { api, store } = setup();
    expect(await store().load()).toEqual([]);
    expect(api.calls).toEqual([`get ${name}`, 'create']);
    const created = api.objects.get(name)!;
    expect(created.metadata.labels).toEqual(putBackConfigMapLabels);
    expect(created.data).toEqual({ [putBackConfigMapKey]: formatPutBacks([]) });

    const first = store();
    await first.load();
    await first.save([entry('peer0.org1'), entry('peer1.org1')]);
    expect(JSON.parse(api.data()![putBackConfigMapKey]!)).toEqual({ version: 1, pending: [entry('peer0.org1'), entry('peer1.org1')] });
    await first.save([entry('peer1.org1')]);
    // Updates carry the resourceVersion read: no read before each write.
    expect(api.calls.slice(-3)).toEqual([`get ${name}`, `update ${name}`, `update ${name}`]);
    expect(await store().load()).toEqual([entry('peer1.org1')]);
  });

  test('a ConfigMap made beforehand without the key (other keys, labels): loads nothing and keeps what is not ours', async () => {
    const { api, store } = setup();
    api.put({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace, labels: { team: 'ops' } }, data: { notes: 'kept' } });
    const one = store();
    expect(await one.load()).toEqual([]);
    await one.save([entry('a')]);
    const object = api.objects.get(name)!;
    expect(object.metadata.labels).toEqual({ team: 'ops' });
    expect(object.data).toEqual({ notes: 'kept', [putBackConfigMapKey]: formatPutBacks([entry('a')]) });
  });

  test.each([
    ['not JSON', '{"version":1,"pending":[', /is not JSON/],
    ['another document', '{"version":2,"pending":[]}', /is not a put-back document: version/],
    ['an entry without specs', '{"version":1,"pending":[{"node":"a","previous":"info","specs":[],"dueAt":1,"actor":"x"}]}', /pending\.0\.specs/],
  ])('a key holding %s stops the start, naming the ConfigMap and the key', async (_what, text, problem) => {
    const { api, store } = setup();
    api.put({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace }, data: { [putBackConfigMapKey]: text } });
    const error = await store()
      .load()
      .then(
        () => null,
        (caught: unknown) => caught,
      );
    expect(error).toBeInstanceOf(ConfigError);
    const message = (error as ConfigError).problems.join('\n');
    expect(message).toContain(`stateConfigMap: ConfigMap ${namespace}/${name} (key ${putBackConfigMapKey})`);
    expect(message).toMatch(problem);
    expect(api.calls).toEqual([`get ${name}`]);
  });

  test('someone changed it in between (409 Conflict): read again, ours written over the key, their other keys kept, one warning', async () => {
    const { api, store, lines } = setup();
    const one = store();
    await one.load();
    api.meanwhile = () => {
      const theirs = api.objects.get(name)!;
      api.put({ ...theirs, data: { ...theirs.data, [putBackConfigMapKey]: 'edited by hand', extra: 'theirs' } });
    };
    await one.save([entry('a')]);
    expect(api.calls.slice(-3)).toEqual([`update ${name}`, `get ${name}`, `update ${name}`]);
    expect(api.data()).toEqual({ [putBackConfigMapKey]: formatPutBacks([entry('a')]), extra: 'theirs' });
    const warnings = lines.filter((line) => line.level === 'warn');
    expect(warnings.map((line) => line.msg)).toEqual([
      expect.stringMatching(/ConfigMap fabric\/fleet-state \(key fleet-putbacks\.json\) was changed by someone else .*409.*object has been modified/),
    ]);
  });

  test('deleted in between (404 on update): created again with ours', async () => {
    const { api, store } = setup();
    const one = store();
    await one.load();
    api.meanwhile = () => api.objects.delete(name);
    await one.save([entry('a')]);
    expect(api.calls.slice(-3)).toEqual([`update ${name}`, `get ${name}`, 'create']);
    expect(api.data()).toEqual({ [putBackConfigMapKey]: formatPutBacks([entry('a')]) });
  });

  test('created by someone else between our read and our create (409 AlreadyExists): read, then updated', async () => {
    const { api, store } = setup();
    const one = store();
    api.meanwhile = () => api.put({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace }, data: {} });
    expect(await one.load()).toEqual([]);
    expect(api.calls).toEqual([`get ${name}`, 'create', `get ${name}`, `update ${name}`]);
    expect(api.data()).toEqual({ [putBackConfigMapKey]: formatPutBacks([]) });
  });

  test("a write the API server refuses is a PutBackPersistError naming the ConfigMap and the API's own message", async () => {
    const { api, store } = setup();
    const one = store();
    await one.load();
    api.forbidden = ['update'];
    await expect(one.save([entry('a')])).rejects.toThrow(PutBackPersistError);
    await expect(one.save([entry('a')])).rejects.toThrow(
      /cannot write the pending put-backs to ConfigMap fabric\/fleet-state \(key fleet-putbacks\.json\): HTTP 403: configmaps "fleet-state" is forbidden: .* cannot update resource "configmaps"/,
    );
  });

  test("a ConfigMap that cannot be read stops the start with the API's message (403), and a missing create permission shows at start", async () => {
    const { api, store } = setup();
    api.forbidden = ['get'];
    const error = await store()
      .load()
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(KubernetesApiError);
    expect((error as KubernetesApiError).status).toBe(403);
    expect((error as Error).message).toMatch(
      /^stateConfigMap: cannot read the pending put-backs from ConfigMap fabric\/fleet-state .*HTTP 403: .*cannot get resource "configmaps"/,
    );
    api.forbidden = ['create'];
    await expect(store().load()).rejects.toThrow(/HTTP 403: .*cannot create resource "configmaps"/);
  });

  test('an API server that does not answer at start is asked again with backoff for up to 30 s, logged once', async () => {
    const { api, store, waits, lines } = setup();
    api.unreachable = 3;
    expect(await store().load()).toEqual([]);
    expect(waits).toEqual([500, 1000, 2000]);
    expect(api.calls).toEqual([`get ${name}`, `get ${name}`, `get ${name}`, `get ${name}`, 'create']);
    expect(lines.map((line) => `${line.level} ${line.msg}`)).toEqual([
      'warn cannot read ConfigMap fabric/fleet-state (key fleet-putbacks.json) (GET /api/v1/namespaces/fabric/configmaps/fleet-state: connect ECONNREFUSED 127.0.0.1:6443); retrying for up to 30 s',
      'info ConfigMap fabric/fleet-state (key fleet-putbacks.json): read after 3 failed attempts',
    ]);

    const down = setup();
    down.api.unreachable = 1000;
    await expect(down.store().load()).rejects.toThrow(
      'stateConfigMap: cannot read the pending put-backs from ConfigMap fabric/fleet-state (key fleet-putbacks.json): GET /api/v1/namespaces/fabric/configmaps/fleet-state: connect ECONNREFUSED 127.0.0.1:6443',
    );
    // 0.5 + 1 + 2 + 4 + 5 + 5 + 5 + 5 = 27.5 s; the next wait would pass 30 s.
    expect(down.waits).toEqual([500, 1000, 2000, 4000, 5000, 5000, 5000, 5000]);
  });

  test('a namespace that does not exist (404 on create): the start fails at once, naming it; no retry', async () => {
    const { api, store } = setup();
    api.namespaceMissing = true;
    await expect(store().load()).rejects.toThrow(
      'cannot write the pending put-backs to ConfigMap fabric/fleet-state (key fleet-putbacks.json): HTTP 404: namespaces "fabric" not found',
    );
    expect(api.calls).toEqual([`get ${name}`, 'create']);
  });

  test('past 1 MiB of data: refused before any write, saying how many put-backs and how large', async () => {
    const { api, store } = setup();
    const one = store();
    await one.load();
    const many = Array.from({ length: 20_000 }, (_, index) => entry(`peer${index}.org1.example.com`));
    const bytes = Buffer.byteLength(formatPutBacks(many));
    expect(bytes).toBeGreaterThan(maxConfigMapBytes);
    const writes = api.calls.length;
    await expect(one.save(many)).rejects.toThrow(
      new RegExp(`20000 put-backs make its data ${bytes} bytes, more than the 1048576 bytes \\(1 MiB\\) a ConfigMap may hold`),
    );
    expect(api.calls.length).toBe(writes);
    // Just under the limit is written.
    const fitting = many.slice(0, Math.floor(many.length * (maxConfigMapBytes / bytes)) - 50);
    await one.save(fitting);
    expect(held(api)).toHaveLength(fitting.length);
  });
});

describe('FileAndConfigMapPutBackStore (stateDirectory and stateConfigMap)', () => {
  function both() {
    const base = setup();
    const dir = mkdtempSync(path.join(tmpdir(), 'fleet-both-'));
    const make = (directory = dir) => new FileAndConfigMapPutBackStore(new FilePutBackStore(directory), base.store(), base.logger);
    const file = () => JSON.parse(readFileSync(path.join(dir, 'fleet-putbacks.json'), 'utf8')) as { pending: PendingPutBack[] };
    return { ...base, dir, make, file };
  }

  test('saves to the file, then the ConfigMap; a new pod (empty directory) loads from the ConfigMap', async () => {
    const { api, make, file } = both();
    const one = make();
    expect(await one.load()).toEqual([]);
    await one.save([entry('a')]);
    expect(file().pending).toEqual([entry('a')]);
    expect(held(api)).toEqual([entry('a')]);
    const fresh = mkdtempSync(path.join(tmpdir(), 'fleet-both-fresh-'));
    expect(await make(fresh).load()).toEqual([entry('a')]);
    rmSync(fresh, { recursive: true });
  });

  test("the ConfigMap wins when it holds put-backs; without one, the file's are loaded and written to a new ConfigMap", async () => {
    const { api, make, dir, lines } = both();
    await new FilePutBackStore(dir).save([entry('from-file')]);
    expect(await make().load()).toEqual([entry('from-file')]);
    expect(held(api)).toEqual([entry('from-file')]);
    api.put({ ...api.objects.get(name)!, data: { [putBackConfigMapKey]: formatPutBacks([entry('from-configmap')]) } });
    expect(await make().load()).toEqual([entry('from-configmap')]);
    expect(lines.map((line) => line.msg)).toContain(
      `pending put-backs: 1 in ConfigMap fabric/fleet-state (key fleet-putbacks.json) are used, not the 1 in ${path.join(dir, 'fleet-putbacks.json')} (the ConfigMap outlives the pod)`,
    );
  });

  test('a file that cannot be written fails the save before the ConfigMap is written; a refused ConfigMap fails it after the file', async () => {
    const { api, make, dir } = both();
    const one = make();
    await one.load();
    const writes = api.calls.length;
    rmSync(path.join(dir, 'fleet-putbacks.json'), { force: true });
    mkdirSync(path.join(dir, 'fleet-putbacks.json'));
    await expect(one.save([entry('a')])).rejects.toThrow(PutBackPersistError);
    expect(api.calls.length).toBe(writes);
    rmSync(path.join(dir, 'fleet-putbacks.json'), { recursive: true });
    api.forbidden = ['update'];
    await expect(one.save([entry('a')])).rejects.toThrow(/HTTP 403/);
  });
});

describe('the write-ahead with the ConfigMap store', () => {
  test('a refused ConfigMap write fails the TTL request before any node is changed; the next start finds nothing pending', async () => {
    const { api, store } = setup();
    const specs = new Map([
      ['a', 'info'],
      ['b', 'info'],
    ]);
    const calls: string[] = [];
    const nodes: FleetNode[] = [...specs.keys()].map((node) => ({ name: node, url: `https://${node}:1`, dialect: 'peer', group: 'g', labels: {} }));
    const client = {
      call: (node: FleetNode, method: 'GET' | 'PUT', _path: string, body?: unknown): Promise<CallOutcome> => {
        calls.push(`${method} ${node.name}`);
        if (method === 'PUT') specs.set(node.name, (body as { spec: string }).spec);
        return Promise.resolve({ ok: true, status: method === 'GET' ? 200 : 204, body: { spec: specs.get(node.name) }, text: '', latencyMs: 0 });
      },
    };
    const provider = new DisabledProvider();
    const make = () =>
      new FleetLogSpec({
        nodes: new NodeDirectory(nodes),
        client,
        concurrency: 4,
        scheduler: new FakeScheduler(),
        store: store(),
        logger: new CaptureLoggers().getLogger('operations.fleet'),
        changes: provider.newCounter({ name: 'c', help: 'c', labelNames: ['result'] }),
        putBacks: provider.newCounter({ name: 'p', help: 'p', labelNames: ['result'] }),
        emit: () => undefined,
      });
    const manager = make();
    await manager.start();
    api.forbidden = ['update'];
    await expect(manager.set({ spec: 'debug', selector: {}, ttlMs: 60_000 }, 'op')).rejects.toThrow(
      /cannot write the pending put-backs to ConfigMap fabric\/fleet-state .*HTTP 403/,
    );
    expect(calls.sort()).toEqual(['GET a', 'GET b']);
    expect([...specs.values()]).toEqual(['info', 'info']);
    expect(manager.pendingPutBacks()).toEqual([]);
    api.forbidden = [];
    await manager.set({ spec: 'debug', selector: {}, ttlMs: 60_000 }, 'op');
    expect([...specs.values()]).toEqual(['debug', 'debug']);
    manager.stop();
    const next = make();
    await next.start();
    expect(next.pendingPutBacks().map((pending) => pending.node)).toEqual(['a', 'b']);
    next.stop();
  });
});
