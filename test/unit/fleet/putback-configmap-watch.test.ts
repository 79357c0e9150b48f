import { ConfigMapPutBackStore, putBackConfigMapKey, rewriteRetry, type WatchedConfigMap } from '../../../src/fleet/putback-configmap';
import { formatPutBacks, type PendingPutBack, type PutBackRewrite } from '../../../src/fleet/putback-store';
import { KubernetesApiError } from '../../../src/kubernetes/api-error';
import type { ConfigMapObject, ConfigMapObjectApi } from '../../../src/kubernetes/configmap-object';
import type { ListWatchApi, WatchEventType } from '../../../src/kubernetes/reflector';
import type { WatchEnd, WatchStream } from '../../../src/kubernetes/transport-options';
import { CaptureLoggers } from '../../support/capture-logger';
import { FakeScheduler } from '../../support/fake-scheduler';

/**
 * The put-back ConfigMap's watch (issue 30 item 9) against a double of one ConfigMap on the API
 * server: get, create and update as kube-apiserver answers them (409 AlreadyExists, 409 Conflict
 * on a stale resourceVersion, 409 with the UID precondition for an update of a deleted object),
 * and list and watch whose events the test delivers when it chooses (a real watch may deliver an
 * event after the answer to a later write). The same against the fake API server and the built
 * command: test/integration/fleet/state-configmap-watch.test.ts.
 */
class ConfigMapDouble implements ConfigMapObjectApi, ListWatchApi<WatchedConfigMap> {
  readonly namespace = 'fabric';
  readonly name = 'fleet-state';
  object: ConfigMapObject | null = null;
  readonly calls: string[] = [];
  /** The next calls of these verbs fail as an API server that does not answer. */
  failing: Array<'get' | 'create' | 'update'> = [];
  /** Watch events not delivered yet (deliver() sends them). */
  readonly undelivered: Array<{ type: WatchEventType; object: WatchedConfigMap }> = [];
  private rv = 1;
  private uids = 0;
  private onEvent: ((type: WatchEventType, object: WatchedConfigMap) => void) | null = null;
  private endWatch: ((end: WatchEnd) => void) | null = null;

  private fail(status: number, reason: string, message: string): never {
    throw KubernetesApiError.fromAnswer(status, reason, JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', message, reason, code: status }));
  }

  private call(verb: 'get' | 'create' | 'update'): void {
    this.calls.push(verb);
    const index = this.failing.indexOf(verb);
    if (index !== -1) {
      this.failing.splice(index, 1);
      throw new KubernetesApiError(`${verb}: connect ECONNREFUSED 127.0.0.1:6443`);
    }
  }

  private store(object: ConfigMapObject, type: WatchEventType): ConfigMapObject {
    this.object = structuredClone({ ...object, metadata: { ...object.metadata, resourceVersion: String(++this.rv) } });
    this.undelivered.push({ type, object: structuredClone(this.object) });
    return structuredClone(this.object);
  }

  get(): Promise<ConfigMapObject | null> {
    this.call('get');
    return Promise.resolve(structuredClone(this.object));
  }

  create(object: ConfigMapObject): Promise<ConfigMapObject> {
    this.call('create');
    if (this.object !== null) this.fail(409, 'AlreadyExists', `configmaps "${this.name}" already exists`);
    return Promise.resolve(this.store({ ...object, metadata: { ...object.metadata, uid: `uid-${++this.uids}` } }, 'ADDED'));
  }

  update(object: ConfigMapObject): Promise<ConfigMapObject> {
    this.call('update');
    if (this.object === null) {
      const uid = object.metadata.uid as string;
      this.fail(
        409,
        'Conflict',
        `Operation cannot be fulfilled on configmaps "${this.name}": Precondition failed: UID in precondition: ${uid}, UID in object meta: `,
      );
    }
    if (object.metadata.resourceVersion !== this.object.metadata.resourceVersion) {
      this.fail(409, 'Conflict', `Operation cannot be fulfilled on configmaps "${this.name}": the object has been modified`);
    }
    return Promise.resolve(this.store(object, 'MODIFIED'));
  }

  /** Someone else (kubectl delete). */
  remove(): void {
    const gone = this.object!;
    this.object = null;
    this.undelivered.push({ type: 'DELETED', object: { ...gone, metadata: { ...gone.metadata, resourceVersion: String(++this.rv) } } });
  }

  /** Someone else (kubectl edit): the data replaced. */
  edit(data: Record<string, string>): void {
    this.store({ ...this.object!, data }, 'MODIFIED');
  }

  list(): Promise<{ resourceVersion: string; items: WatchedConfigMap[] }> {
    // The list is the state now: what happened before it is not delivered again.
    this.undelivered.length = 0;
    return Promise.resolve({ resourceVersion: String(this.rv), items: this.object ? [structuredClone(this.object)] : [] });
  }

  watch(_resourceVersion: string, onEvent: (type: WatchEventType, object: WatchedConfigMap) => void): WatchStream {
    this.onEvent = onEvent;
    const ended = new Promise<WatchEnd>((resolve) => (this.endWatch = resolve));
    return { connected: Promise.resolve(), ended, abort: () => this.endWatch?.('aborted') };
  }

  get watching(): boolean {
    return this.onEvent !== null;
  }

  /** Delivers the first `count` undelivered events (all by default). */
  deliver(count = this.undelivered.length): void {
    for (const { type, object } of this.undelivered.splice(0, count)) this.onEvent?.(type, object);
  }

  held(): PendingPutBack[] | null {
    const text = this.object?.data?.[putBackConfigMapKey];
    return text === undefined ? null : (JSON.parse(text) as { pending: PendingPutBack[] }).pending;
  }
}

const entry = (node: string): PendingPutBack => ({ node, previous: 'info', specs: ['debug'], dueAt: 1_000_000, actor: 'O=org1,CN=operator' });

/** Lets the watch's handler and the repair it queued run (the double answers at once). */
const settle = async (): Promise<void> => {
  for (let i = 0; i < 5; i += 1) await new Promise((resolve) => setImmediate(resolve));
};

async function setup() {
  const api = new ConfigMapDouble();
  const loggers = new CaptureLoggers();
  const logger = loggers.getLogger('operations.fleet');
  const scheduler = new FakeScheduler();
  const store = new ConfigMapPutBackStore({ api, logger, random: () => 0.5, watch: { api, logger, scheduler, random: () => 0.5 } });
  const rewrites: PutBackRewrite[] = [];
  await store.load();
  store.watch((rewrite) => rewrites.push(rewrite));
  await settle();
  expect(api.watching).toBe(true);
  const warnings = () => loggers.entries.filter((line) => line.level === 'warn').map((line) => line.msg);
  return { api, store, scheduler, rewrites, warnings };
}

describe('the put-back ConfigMap watched', () => {
  test('deleted while put-backs are pending: created again with them at once, one warning, one rewrite told', async () => {
    const { api, store, rewrites, warnings } = await setup();
    await store.save([entry('a'), entry('b')]);
    api.deliver();
    await settle();
    api.calls.length = 0;

    api.remove();
    api.deliver();
    await settle();
    expect(api.held()).toEqual([entry('a'), entry('b')]);
    // The update carrying the UID it knew is refused (409), read again, created.
    expect(api.calls).toEqual(['update', 'get', 'create']);
    expect(warnings()).toEqual([
      expect.stringMatching(/^ConfigMap fabric\/fleet-state \(key fleet-putbacks\.json\) was deleted by someone else \(HTTP 409: .*UID in precondition/),
    ]);
    expect(rewrites).toEqual([{ where: 'ConfigMap fabric/fleet-state (key fleet-putbacks.json)', change: 'deleted', nodes: ['a', 'b'] }]);
    await store.stop();
  });

  test('deleted with nothing pending: left to the next write, which creates it', async () => {
    const { api, store, rewrites, warnings } = await setup();
    api.calls.length = 0;
    api.remove();
    api.deliver();
    await settle();
    expect(api.object).toBeNull();
    expect(api.calls).toEqual([]);
    expect(rewrites).toEqual([]);
    await store.save([entry('a')]);
    expect(api.held()).toEqual([entry('a')]);
    expect(warnings()).toHaveLength(1);
    await store.stop();
  });

  test('the key removed, then changed to a document fabric-ops did not write: read, then written over, other keys kept', async () => {
    const { api, store, rewrites, warnings } = await setup();
    await store.save([entry('a')]);
    api.deliver();
    await settle();

    api.edit({ note: 'theirs' });
    api.deliver();
    await settle();
    expect(api.object?.data).toEqual({ note: 'theirs', [putBackConfigMapKey]: formatPutBacks([entry('a')]) });
    api.edit({ note: 'theirs', [putBackConfigMapKey]: formatPutBacks([]) });
    api.deliver();
    await settle();
    expect(api.held()).toEqual([entry('a')]);
    expect(rewrites.map((rewrite) => rewrite.change)).toEqual(['key_removed', 'changed']);
    expect(warnings()).toEqual([
      'ConfigMap fabric/fleet-state (key fleet-putbacks.json) lost its key by someone else while 1 put-back was pending (a); fabric-ops wrote it again',
      'ConfigMap fabric/fleet-state (key fleet-putbacks.json) had its key changed by someone else while 1 put-back was pending (a); fabric-ops wrote it again',
    ]);
    await store.stop();
  });

  test("events older than this process's last write (its own earlier write; the deletion of an object it has made again since) write nothing", async () => {
    const { api, store, rewrites, warnings } = await setup();
    await store.save([entry('a')]);
    await store.save([entry('a'), entry('b')]);
    api.calls.length = 0;
    // The MODIFIED of the first write arrives after the second was answered: read, found ours.
    api.deliver(1);
    await settle();
    expect(api.calls).toEqual(['get']);
    api.deliver();
    await settle();

    // Deleted, and the next write finds out first (409, read, create) before the DELETED event arrives.
    api.remove();
    await store.save([entry('b')]);
    expect(warnings()).toHaveLength(1);
    api.calls.length = 0;
    api.deliver(1);
    await settle();
    expect(api.calls).toEqual([]);
    expect(api.held()).toEqual([entry('b')]);
    expect(rewrites).toEqual([]);
    await store.stop();
  });

  test('the API server failing the repair: warned, tried again with backoff until it is written', async () => {
    const { api, store, scheduler, rewrites, warnings } = await setup();
    await store.save([entry('a')]);
    api.deliver();
    await settle();
    api.remove();
    api.failing = ['update'];
    api.deliver();
    await settle();
    expect(api.object).toBeNull();
    expect(warnings()).toEqual([
      expect.stringMatching(/no longer holds the 1 pending put-back \(a\) and writing it again failed: .*ECONNREFUSED.*; trying again in 1 s$/),
    ]);
    scheduler.advance(rewriteRetry.initialMs);
    await settle();
    expect(api.held()).toEqual([entry('a')]);
    expect(rewrites.map((rewrite) => rewrite.change)).toEqual(['deleted']);
    await store.stop();
  });

  test('after stop: the watch is ended and a deletion is left alone', async () => {
    const { api, store, rewrites } = await setup();
    await store.save([entry('a')]);
    await store.stop();
    api.calls.length = 0;
    api.remove();
    api.deliver();
    await settle();
    expect(api.calls).toEqual([]);
    expect(rewrites).toEqual([]);
  });
});
