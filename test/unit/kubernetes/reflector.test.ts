import { realScheduler, type Scheduler } from '../../../src/time';
import { KubernetesApiError } from '../../../src/kubernetes/api-error';
import { Reflector, type ListWatchApi, type WatchEventType } from '../../../src/kubernetes/reflector';
import type { WatchEnd, WatchStream } from '../../../src/kubernetes/transport-options';
import { CaptureLoggers } from '../../support/capture-logger';
import { delay, waitFor } from '../../support/wait';

interface Item {
  metadata?: { name?: string; namespace?: string; resourceVersion?: string; labels?: Record<string, string> };
}
type Event = Item & { code?: number };

/**
 * A double of the list and watch calls that behaves as transport.ts does: `connected` resolves
 * when the server answered 200 (or rejects with its KubernetesApiError), `ended` settles once
 * the stream ends, and an aborted stream delivers nothing more.
 */
class DoubleApi implements ListWatchApi<Item> {
  items: Item[] = [];
  rv = 10;
  /** What the next list answers instead of the items (one-shot). */
  listFailures: KubernetesApiError[] = [];
  /** While set, a watch has not connected yet (the API server has not answered it). */
  connectGate: Promise<void> | null = null;
  /** What the next watches answer instead of 200 (one-shot each). */
  watchFailures: KubernetesApiError[] = [];
  readonly calls: string[] = [];
  private current: { onEvent: (type: WatchEventType, object: Event) => void; end: (end: WatchEnd) => void; open: boolean } | null = null;
  /** Resolves the pending list when set (a list in flight). */
  listGate: Promise<void> | null = null;

  /** The signal of the last list was aborted. */
  listAborted = false;

  async list(signal?: AbortSignal): Promise<{ resourceVersion: string; items: Item[] }> {
    this.calls.push('list');
    if (this.listGate) {
      // As the transport: an aborted signal ends the request with an error at once.
      const abortedList = new Promise<never>((_resolve, reject) =>
        signal?.addEventListener('abort', () => {
          this.listAborted = true;
          reject(new KubernetesApiError('GET list: aborted (stopping)'));
        }),
      );
      await Promise.race([this.listGate, abortedList]);
    }
    const failure = this.listFailures.shift();
    if (failure) throw failure;
    return { resourceVersion: String(this.rv), items: this.items.map((item) => structuredClone(item)) };
  }

  watch(resourceVersion: string, onEvent: (type: WatchEventType, object: Event) => void): WatchStream {
    this.calls.push(`watch ${resourceVersion}`);
    const failure = this.watchFailures.shift();
    if (failure) {
      const rejected = Promise.reject(failure);
      rejected.catch(() => undefined);
      return { connected: rejected, ended: rejected, abort: () => undefined };
    }
    let end!: (end: WatchEnd) => void;
    const ended = new Promise<WatchEnd>((resolve) => (end = resolve));
    const watch = {
      onEvent,
      open: true,
      end: (why: WatchEnd) => {
        watch.open = false;
        end(why);
      },
    };
    this.current = watch;
    if (this.connectGate === null) return { connected: Promise.resolve(), ended, abort: () => watch.end('aborted') };
    // As the transport: aborted before the server answered, `connected` rejects.
    let refuse!: (error: Error) => void;
    const connected = new Promise<void>((resolve, reject) => {
      refuse = reject;
      void this.connectGate?.then(resolve);
    });
    connected.catch(() => undefined);
    return {
      connected,
      ended,
      abort: () => {
        refuse(new KubernetesApiError('GET watch: the watch was aborted before the server answered'));
        watch.end('aborted');
      },
    };
  }

  get watching(): boolean {
    return this.current?.open === true;
  }

  emit(type: WatchEventType, object: Event): void {
    if (!this.current?.open) throw new Error('no open watch');
    this.current.onEvent(type, object);
  }

  /** The server ends the stream (its timeoutSeconds, a dropped connection). */
  end(why: WatchEnd = 'closed'): void {
    this.current?.end(why);
  }
}

function item(name: string, rv: number, labels: Record<string, string> = {}): Item {
  return { metadata: { name, namespace: 'fabric', resourceVersion: String(rv), labels } };
}

function setup(
  options: { cycleBurst?: number; cycleIntervalMs?: number; refusedBackoff?: { initialMs: number; maxMs: number; factor: number; jitter: number } } = {},
) {
  const api = new DoubleApi();
  const seen: string[] = [];
  const loggers = new CaptureLoggers();
  const names = (items: Item[]): string => items.map((object) => object.metadata?.name).join(',');
  const handler = {
    replace: (items: Item[]) => seen.push(`replace [${names(items)}]`),
    upsert: (object: Item) => seen.push(`upsert ${object.metadata?.name}@${object.metadata?.resourceVersion}`),
    remove: (object: Item) => seen.push(`remove ${object.metadata?.name}`),
  };
  /** Every wait the reflector asked for (backoff and cycle waits), on Node's timers. */
  const sleeps: number[] = [];
  const scheduler: Scheduler = {
    ...realScheduler,
    setTimeout: (callback, delayMs) => {
      sleeps.push(delayMs);
      return realScheduler.setTimeout(callback, delayMs);
    },
  };
  const reflector = new Reflector<Item>({
    api,
    handler,
    scheduler,
    what: 'Services in fabric with selector app=peer',
    logger: loggers.getLogger('operations.kubernetes'),
    unreachableBackoff: { initialMs: 40, maxMs: 40, factor: 1, jitter: 0 },
    refusedBackoff: { initialMs: 300, maxMs: 300, factor: 1, jitter: 0 },
    ...options,
  });
  const lines = (level: 'warn' | 'info' | 'debug'): string[] => loggers.entries.filter((entry) => entry.level === level).map((entry) => entry.msg);
  return { api, seen, reflector, lines, handler, sleeps };
}

describe('Reflector', () => {
  test('lists, hands the whole set to replace, then each change in order, and watches from the last resourceVersion seen', async () => {
    const { api, seen, reflector } = setup();
    api.items = [item('peer0', 5), item('peer1', 7)];
    expect(reflector.synced).toBe(false);
    reflector.start();
    await reflector.whenSynced();
    expect(reflector.synced).toBe(true);
    await waitFor('the watch', () => api.watching);
    expect(api.calls).toEqual(['list', 'watch 10']);
    api.emit('ADDED', item('peer2', 11));
    api.emit('MODIFIED', item('peer0', 12));
    api.emit('BOOKMARK', { metadata: { resourceVersion: '13' } });
    api.emit('DELETED', item('peer1', 14));
    expect(seen).toEqual(['replace [peer0,peer1]', 'upsert peer2@11', 'upsert peer0@12', 'remove peer1']);
    // The server ends an idle watch: watched again at once from the last resourceVersion, no list.
    api.end('closed');
    await waitFor('a second watch', () => api.calls.length === 3);
    expect(api.calls).toEqual(['list', 'watch 10', 'watch 14']);
    await reflector.stop();
    expect(reflector.problem).toBeNull();
  });

  test('an ERROR 410 in the stream lists again at once and hands the new set to replace, with no warning', async () => {
    const { api, seen, reflector, lines } = setup();
    api.items = [item('peer0', 5), item('peer1', 7)];
    reflector.start();
    await waitFor('the watch', () => api.watching);
    api.items = [item('peer1', 20), item('peer2', 21)];
    api.rv = 22;
    api.emit('ERROR', { code: 410 });
    // Nothing after the ERROR event is taken from that stream.
    await waitFor('the watch after the re-list', () => api.calls.length === 4 && api.watching);
    expect(api.calls).toEqual(['list', 'watch 10', 'list', 'watch 22']);
    expect(seen).toEqual(['replace [peer0,peer1]', 'replace [peer1,peer2]']);
    expect(lines('warn')).toEqual([]);
    expect(lines('debug')).toEqual(['Services in fabric with selector app=peer: resourceVersion 10 is too old; listing again']);
    await reflector.stop();
  });

  test('a 410 as the answer to the watch lists again too', async () => {
    const { api, seen, reflector, lines } = setup();
    api.items = [item('peer0', 5)];
    api.watchFailures = [new KubernetesApiError('HTTP 410: too old resource version', 410, 'Expired')];
    reflector.start();
    await waitFor('the second watch', () => api.calls.length === 4 && api.watching);
    expect(api.calls).toEqual(['list', 'watch 10', 'list', 'watch 10']);
    expect(seen).toEqual(['replace [peer0]', 'replace [peer0]']);
    expect(lines('warn')).toEqual([]);
    await reflector.stop();
  });

  test('a failure backs off, is one warning for the whole outage and one "again" line once a watch connects; problem tells it meanwhile', async () => {
    const { api, seen, reflector, lines } = setup();
    const unreachable = (): KubernetesApiError => new KubernetesApiError('GET /api/v1/namespaces/fabric/services: connect ECONNREFUSED 127.0.0.1:6443');
    api.listFailures = [unreachable(), unreachable(), unreachable()];
    api.items = [item('peer0', 5)];
    reflector.start();
    await waitFor('the first failure', () => reflector.problem);
    expect(reflector.synced).toBe(false);
    expect(reflector.problem).toContain('ECONNREFUSED');
    await waitFor('the watch', () => api.watching);
    // Three failed lists spaced by the backoff, then the list and the watch.
    expect(api.calls).toEqual(['list', 'list', 'list', 'list', 'watch 10']);
    expect(seen).toEqual(['replace [peer0]']);
    expect(lines('warn')).toEqual([
      'cannot watch Services in fabric with selector app=peer (GET /api/v1/namespaces/fabric/services: connect ECONNREFUSED 127.0.0.1:6443); retrying with backoff',
    ]);
    expect(lines('info')).toEqual(['watching Services in fabric with selector app=peer again']);
    expect(reflector.problem).toBeNull();
    await reflector.stop();
  });

  test('a refusal (403) waits the refused backoff; an ERROR other than 410 in the stream is a failure, and recovery waits for a good event', async () => {
    const { api, reflector, lines, seen, sleeps } = setup();
    const forbidden = new KubernetesApiError('HTTP 403: services is forbidden: User "x" cannot watch resource "services"', 403, 'Forbidden');
    api.watchFailures = [forbidden];
    reflector.start();
    await waitFor('the refusal', () => reflector.problem);
    await waitFor('the watch after the refusal', () => api.watching);
    // refusedBackoff is 300 ms here (unreachable 40 ms): the 403 waited the refused one.
    expect(sleeps).toEqual([300]);
    expect(lines('info')).toEqual(['watching Services in fabric with selector app=peer again']);
    api.emit('ERROR', { code: 500, message: 'etcd is unhappy' } as Event);
    await waitFor('a watch again', () => api.calls.filter((call) => call.startsWith('watch')).length === 3 && api.watching);
    expect(reflector.problem).toBe('HTTP 500: etcd is unhappy');
    // Connected again, but a stream that failed once connected proves nothing until an event or a clean end.
    expect(lines('info')).toHaveLength(1);
    api.emit('ADDED', item('peer3', 30));
    expect(lines('info')).toHaveLength(2);
    expect(reflector.problem).toBeNull();
    expect(lines('warn')).toHaveLength(2);
    expect(seen).toEqual(['replace []', 'upsert peer3@30']);
    await reflector.stop();
  });

  test('a handler that throws fails the stream: the event is delivered again from the resourceVersion before it', async () => {
    const api = new DoubleApi();
    const taken: string[] = [];
    let refuse = true;
    const throwing = new Reflector<Item>({
      api,
      what: 'Pods in every namespace',
      logger: new CaptureLoggers().getLogger('x'),
      unreachableBackoff: { initialMs: 20, maxMs: 20, factor: 1, jitter: 0 },
      handler: {
        replace: () => undefined,
        upsert: (object) => {
          if (refuse) throw new Error('boom');
          taken.push(object.metadata?.name ?? '');
        },
        remove: () => undefined,
      },
    });
    throwing.start();
    await waitFor('the watch', () => api.watching);
    api.emit('ADDED', item('pod-a', 11));
    await waitFor('the failure', () => throwing.problem);
    expect(throwing.problem).toBe('ADDED pod-a not handled: boom');
    await waitFor('a watch again', () => api.watching);
    expect(api.calls.at(-1)).toBe('watch 10');
    refuse = false;
    api.emit('ADDED', item('pod-a', 11));
    expect(taken).toEqual(['pod-a']);
    expect(throwing.problem).toBeNull();
    await throwing.stop();
  });

  test('streams that end at once are rate-limited by the cycle bucket, not spun', async () => {
    const { api, reflector } = setup({ cycleBurst: 3, cycleIntervalMs: 200 });
    reflector.start();
    const ender = setInterval(() => api.end('closed'), 1);
    // The watches made in 500 ms: a rate, not a condition.
    await delay(500);
    clearInterval(ender);
    const watches = api.calls.filter((call) => call.startsWith('watch')).length;
    // A burst of 3, then one per 200 ms: about 5 in 500 ms, never hundreds.
    expect(watches).toBeGreaterThanOrEqual(3);
    expect(watches).toBeLessThanOrEqual(7);
    await reflector.stop();
  });

  test('a list that works after a failure clears problem at once, before the watch connects (the log line waits for the watch)', async () => {
    const { api, reflector, lines } = setup();
    api.listFailures = [new KubernetesApiError('GET list: connect ECONNREFUSED 127.0.0.1:1')];
    api.connectGate = new Promise(() => undefined);
    reflector.start();
    await reflector.whenSynced();
    expect(lines('warn')).toEqual([
      'cannot watch Services in fabric with selector app=peer (GET list: connect ECONNREFUSED 127.0.0.1:1); retrying with backoff',
    ]);
    expect(reflector.synced).toBe(true);
    expect(reflector.problem).toBeNull();
    expect(lines('info')).toEqual([]);
    await reflector.stop();
  });

  test('stop during a backoff sleep returns at once; whenSynced resolves on stop; nothing is handed on after stop', async () => {
    const { api, reflector, seen } = setup({ refusedBackoff: { initialMs: 60_000, maxMs: 60_000, factor: 1, jitter: 0 } });
    api.listFailures = [new KubernetesApiError('HTTP 401: Unauthorized', 401, 'Unauthorized')];
    reflector.start();
    await waitFor('the refusal', () => reflector.problem);
    // Now asleep for the refused backoff (a minute): stop cuts it (jest's 5 s limit would fail the test otherwise).
    await reflector.stop();
    await reflector.whenSynced();
    expect(reflector.synced).toBe(false);

    // A list in flight when stopped is aborted (its signal), and nothing is handed to replace.
    const second = setup();
    second.api.listGate = new Promise(() => undefined); // answers only when aborted
    second.api.items = [item('peer0', 5)];
    second.reflector.start();
    await waitFor('the list', () => second.api.calls.length === 1);
    await second.reflector.stop();
    expect(second.api.listAborted).toBe(true);
    expect(second.seen).toEqual([]);
    expect(second.api.calls).toEqual(['list']);
    expect(seen).toEqual([]);
  });

  test('stop aborts the open watch; events after it are not delivered', async () => {
    const { api, reflector, seen } = setup();
    reflector.start();
    await waitFor('the watch', () => api.watching);
    await reflector.stop();
    expect(api.watching).toBe(false);
    expect(() => api.emit('ADDED', item('late', 99))).toThrow('no open watch');
    expect(seen).toEqual(['replace []']);
  });
});
