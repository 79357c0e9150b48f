import { OperationsEventEmitter } from '../../../src/events';
import type { ConfigMapApi, ConfigMapLike, WatchEventType } from '../../../src/kubernetes/logspec-configmap';
import { LogSpecConfigMapWatcher } from '../../../src/kubernetes/logspec-configmap';
import { EventRecorder, type CoreEventBody, type EventPatch, type EventSink } from '../../../src/kubernetes/recorder';
import { TokenBuckets } from '../../../src/kubernetes/token-bucket';
import { LogSpecError } from '../../../src/errors';
import { realScheduler } from '../../../src/time';
import { CaptureLoggers } from '../../support/capture-logger';
import { delay, waitFor } from '../../support/wait';

function captureLogger(): { logger: ReturnType<CaptureLoggers['getLogger']>; lines: () => string[] } {
  const loggers = new CaptureLoggers();
  return { logger: loggers.getLogger('operations.kubernetes'), lines: () => loggers.entries.map((entry) => entry.msg) };
}

class MemorySink implements EventSink {
  readonly created: CoreEventBody[] = [];
  readonly patches: Array<{ name: string; patch: EventPatch }> = [];
  failWith: { statusCode: number } | null = null;
  gate: Promise<void> | null = null;

  async create(event: CoreEventBody): Promise<void> {
    if (this.gate) await this.gate;
    if (this.failWith) throw Object.assign(new Error('refused'), this.failWith);
    this.created.push(structuredClone(event));
  }

  async patch(_namespace: string, name: string, patch: EventPatch): Promise<void> {
    if (this.gate) await this.gate;
    if (this.failWith) throw Object.assign(new Error('refused'), this.failWith);
    this.patches.push({ name, patch });
  }

  count(reason: string): number {
    const event = this.created.find((candidate) => candidate.reason === reason);
    if (!event) return 0;
    const last = this.patches.filter((entry) => entry.name === event.metadata.name).at(-1);
    return last?.patch.count ?? event.count;
  }
}

function counter(): { add(delta: number): void; total: number } {
  return {
    total: 0,
    add(delta: number) {
      this.total += delta;
    },
  };
}

const pod = { name: 'peer0-0', namespace: 'org1', uid: 'u-1' };

describe('OperationsEventEmitter', () => {
  test('a throwing listener is logged; the others still run and emit() does not throw', () => {
    const { logger, lines } = captureLogger();
    const emitter = new OperationsEventEmitter(logger);
    const seen: string[] = [];
    emitter.subscribe(() => {
      throw new Error('integration broke');
    });
    const unsubscribe = emitter.subscribe((event) => seen.push(event.type));
    expect(() => emitter.emit({ type: 'tls.reloadRefused', reason: 'x' })).not.toThrow();
    expect(seen).toEqual(['tls.reloadRefused']);
    expect(lines().join('\n')).toContain('integration broke');
    unsubscribe();
    emitter.emit({ type: 'tls.reloadRefused', reason: 'y' });
    expect(seen).toHaveLength(1);
  });
});

describe('EventRecorder', () => {
  test('identical events become one Event whose count is patched; different messages are different Events', async () => {
    const sink = new MemorySink();
    const { logger } = captureLogger();
    const recorder = new EventRecorder({ pod, sink, logger, dropped: counter() });
    for (let i = 0; i < 100; i += 1) recorder.record('Warning', 'HealthCheckFailed', 'health check docker is failing: down');
    recorder.record('Warning', 'HealthCheckFailed', 'health check cri is failing: down');
    expect(await recorder.drain(5000)).toBe(true);
    const docker = sink.created.filter((event) => event.message.includes('docker'));
    expect(docker).toHaveLength(1);
    expect(sink.count('HealthCheckFailed')).toBe(100);
    expect(sink.created).toHaveLength(2);
    expect(docker[0]).toMatchObject({ involvedObject: { kind: 'Pod', name: 'peer0-0', namespace: 'org1', uid: 'u-1' }, source: { component: 'fabric-ops' } });
    recorder.stop();
  });

  test('beyond the burst, repeats wait for a token and are coalesced into one patch', async () => {
    const sink = new MemorySink();
    let now = 1_000_000;
    // Node's timers, the test's clock: the token refill is a clock step, the writes' wakes are real.
    const scheduler = { ...realScheduler, now: () => now };
    const recorder = new EventRecorder({ pod, sink, logger: captureLogger().logger, dropped: counter(), scheduler, burst: 2, refillIntervalMs: 60_000 });
    for (let i = 0; i < 10; i += 1) {
      recorder.record('Normal', 'LogSpecChanged', 'same');
      // Apart in time, so that the writer wakes between them.
      await delay(5);
    }
    // No more than the burst of 2 is written meanwhile: the rest waits for a token.
    await delay(50);
    expect(sink.created.length + sink.patches.length).toBe(2);
    now += 60_000; // one token later
    recorder.record('Normal', 'LogSpecChanged', 'same'); // wakes the writer
    expect(await recorder.drain(2000)).toBe(true);
    expect(sink.count('LogSpecChanged')).toBe(11);
    expect(sink.created.length + sink.patches.length).toBe(3);
    recorder.stop();
  });

  test('an outage is logged once; the queue drops the oldest beyond its limit and counts it; recovery is logged', async () => {
    const sink = new MemorySink();
    sink.failWith = { statusCode: 403 };
    const dropped = counter();
    const { logger, lines } = captureLogger();
    const recorder = new EventRecorder({ pod, sink, logger, dropped, queueLimit: 3, backoffInitialMs: 20, backoffMaxMs: 40 });
    for (let i = 0; i < 5; i += 1) recorder.record('Warning', 'R', `message ${i}`);
    // Several failed tries (backoff 20 to 40 ms) meanwhile: the outage is still logged once.
    await delay(150);
    expect(lines().filter((line) => line.includes('cannot record Kubernetes events'))).toHaveLength(1);
    expect(dropped.total).toBe(2);
    sink.failWith = null;
    expect(await recorder.drain(3000)).toBe(true);
    expect(sink.created.map((event) => event.message).sort()).toEqual(['message 2', 'message 3', 'message 4']);
    expect(lines().join('\n')).toContain('Kubernetes events are recorded again');
    recorder.stop();
  });

  test('failed writes are retried after delays doubling from backoffInitialMs to backoffMaxMs; a success resets them', async () => {
    jest.useFakeTimers();
    try {
      const attempts: number[] = [];
      let failing = true;
      const sink: EventSink = {
        async create() {
          attempts.push(Date.now());
          if (failing) throw Object.assign(new Error('unavailable'), { statusCode: 503 });
        },
        async patch() {
          attempts.push(Date.now());
          if (failing) throw Object.assign(new Error('unavailable'), { statusCode: 503 });
        },
      };
      // Backoff 100 ms doubling to 400 ms; `random` draws the jitter.
      const retrying = (random: number): EventRecorder =>
        new EventRecorder({ pod, sink, logger: captureLogger().logger, dropped: counter(), backoffInitialMs: 100, backoffMaxMs: 400, random: () => random });
      // random 0.5: the jitter's middle, every delay as the policy says.
      const recorder = retrying(0.5);
      const start = Date.now();
      recorder.record('Warning', 'R', 'm');
      await jest.advanceTimersByTimeAsync(1_500);
      // Attempts at 0, then after 100, 200, 400, 400 (capped) ms.
      expect(attempts.map((at) => at - start)).toEqual([0, 100, 300, 700, 1100, 1500]);
      failing = false;
      await jest.advanceTimersByTimeAsync(400);
      expect(attempts).toHaveLength(7);
      failing = true;
      attempts.length = 0;
      const second = Date.now();
      recorder.record('Warning', 'R', 'm');
      await jest.advanceTimersByTimeAsync(300);
      // Back to the initial delay after the success.
      expect(attempts.map((at) => at - second)).toEqual([0, 100, 300]);
      recorder.stop();

      // With jitter (±20 %): random 0 makes each delay 0.8 of the policy's, so recorders of many pods do not retry in step.
      attempts.length = 0;
      const early = retrying(0);
      const third = Date.now();
      early.record('Warning', 'R', 'm');
      await jest.advanceTimersByTimeAsync(900);
      expect(attempts.map((at) => at - third)).toEqual([0, 80, 240, 560, 880]);
      early.stop();
    } finally {
      jest.useRealTimers();
    }
  });

  test('an event the server refuses as invalid (422) is dropped, not retried', async () => {
    const sink = new MemorySink();
    sink.failWith = { statusCode: 422 };
    const dropped = counter();
    const recorder = new EventRecorder({ pod, sink, logger: captureLogger().logger, dropped });
    recorder.record('Warning', 'R', 'm');
    expect(await recorder.drain(2000)).toBe(true);
    expect(dropped.total).toBe(1);
    recorder.stop();
  });

  test('record() returns at once while the sink hangs', () => {
    const sink = new MemorySink();
    sink.gate = new Promise(() => undefined);
    const recorder = new EventRecorder({ pod, sink, logger: captureLogger().logger, dropped: counter(), requestTimeoutMs: 50 });
    const started = performance.now();
    for (let i = 0; i < 1000; i += 1) recorder.record('Normal', 'R', `m${i % 10}`);
    expect(performance.now() - started).toBeLessThan(500);
    recorder.stop();
  });
});

describe('TokenBuckets', () => {
  test('burst, then one token per interval, per key', () => {
    const buckets = new TokenBuckets(2, 1000);
    expect([buckets.take('a', 0), buckets.take('a', 0), buckets.take('a', 0)]).toEqual([true, true, false]);
    expect(buckets.take('b', 0)).toBe(true);
    expect(buckets.waitMs('a', 0)).toBe(1000);
    expect(buckets.take('a', 1000)).toBe(true);
  });
});

describe('LogSpecConfigMapWatcher', () => {
  function fakeApi(): ConfigMapApi & {
    emit(type: WatchEventType, object: ConfigMapLike & { code?: number }): void;
    end(): void;
    lists: number;
    items: ConfigMapLike[];
  } {
    let handler: ((type: WatchEventType, object: ConfigMapLike & { code?: number }) => void) | null = null;
    let finish: (() => void) | null = null;
    const api = {
      lists: 0,
      items: [] as ConfigMapLike[],
      async list() {
        api.lists += 1;
        return { resourceVersion: String(10 + api.lists), items: api.items };
      },
      watch(_rv: string, onEvent: (type: WatchEventType, object: ConfigMapLike & { code?: number }) => void) {
        handler = onEvent;
        const ended = new Promise<'closed' | 'aborted'>((resolve) => (finish = () => resolve('closed')));
        return { connected: Promise.resolve(), ended, abort: () => finish?.() };
      },
      emit(type: WatchEventType, object: ConfigMapLike & { code?: number }) {
        handler?.(type, object);
      },
      end() {
        finish?.();
      },
    };
    return api;
  }

  test('applies changes only; a re-list with the same value leaves a later change alone; 410 lists again; invalid values are logged', async () => {
    const api = fakeApi();
    api.items = [{ metadata: { name: 'ls', resourceVersion: '5' }, data: { logspec: 'debug\n' } }];
    const applied: Array<[string, string]> = [];
    const { logger, lines } = captureLogger();
    const watcher = new LogSpecConfigMapWatcher({
      api,
      namespace: 'org1',
      name: 'ls',
      key: 'logspec',
      logger,
      getLogSpec: () => applied.at(-1)?.[0] ?? 'info',
      setLogSpec: (spec, actor) => {
        if (spec === 'Bad') throw new LogSpecError(`invalid logging specification '${spec}': bad segment '${spec}'`);
        applied.push([spec, actor]);
      },
    });
    watcher.start();
    await waitFor('the listed spec applied', () => applied.length > 0, { everyMs: 5 });
    expect(applied).toEqual([['debug', 'configmap org1/ls']]);
    api.emit('ERROR', { code: 410 });
    // Time for the list again to be made and handled (counted below): it applies nothing new.
    await delay(30);
    expect(api.lists).toBe(2);
    expect(applied).toHaveLength(1);
    api.emit('MODIFIED', { metadata: { name: 'ls', resourceVersion: '20' }, data: { logspec: 'Bad' } });
    expect(lines().join('\n')).toContain("invalid logging specification 'Bad'");
    api.emit('DELETED', { metadata: { name: 'ls', resourceVersion: '21' } });
    api.emit('MODIFIED', { metadata: { name: 'ls', resourceVersion: '22' }, data: { logspec: 'info' } });
    expect(applied.map(([spec]) => spec)).toEqual(['debug', 'info']);
    await watcher.stop();
  });
});
