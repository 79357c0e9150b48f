import { DuplicateCheckerError } from '../../../src/errors';
import type { Gauge, Histogram, LabelValues } from '../../../src/metrics/types';
import { CheckCancelledError, CheckTimeoutError, formatDuration } from '../../../src/health/abort-reasons';
import { InvalidCheckerNameError } from '../../../src/errors';
import { HealthService, type HealthMetrics } from '../../../src/health/health-service';
import type { CheckResult, HealthChecker } from '../../../src/health/types';
import type { Clock } from '../../../src/time';
import { CaptureLoggers } from '../../support/capture-logger';

const fixedClock: Clock = { now: () => Date.parse('2024-05-06T07:08:09.123Z') };

interface Deferred<T> {
  promise: Promise<T>;
  resolve(value: T): void;
  reject(error: unknown): void;
}

function deferred<T>(): Deferred<T> {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** A checker that answers only when the test says so, and remembers every call's signal. */
class ControlledChecker implements HealthChecker {
  readonly signals: AbortSignal[] = [];
  private pending: Array<Deferred<CheckResult>> = [];

  check(signal: AbortSignal): Promise<CheckResult> {
    this.signals.push(signal);
    const answer = deferred<CheckResult>();
    this.pending.push(answer);
    return answer.promise;
  }

  get calls(): number {
    return this.signals.length;
  }

  answer(result: CheckResult): void {
    for (const pending of this.pending.splice(0)) pending.resolve(result);
  }
}

const ok = (): HealthChecker => ({ check: async () => ({ ok: true }) });
const failing = (reason: string): HealthChecker => ({ check: async () => ({ ok: false, reason }) });
const never = (): HealthChecker => ({ check: () => new Promise<CheckResult>(() => undefined) });

function newService(timeoutMs = 2000, metrics?: HealthMetrics): { service: HealthService; loggers: CaptureLoggers } {
  const loggers = new CaptureLoggers();
  return { service: new HealthService({ timeoutMs, clock: fixedClock, loggers, metrics }), loggers };
}

/** Lets pending promise callbacks run. */
async function settle(): Promise<void> {
  for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
}

describe('formatDuration', () => {
  it.each([
    [2000, '2s'],
    [1500, '1.5s'],
    [250, '250ms'],
    [90_000, '1m30s'],
    [60_000, '1m0s'],
    [1234, '1.234s'],
  ])('%d ms is %s', (ms, text) => {
    expect(formatDuration(ms)).toBe(text);
  });
});

describe('HealthService reports', () => {
  it('answers OK with the clock time and no failed_checks when nothing is registered', async () => {
    const { service } = newService();
    await expect(service.check()).resolves.toEqual({ status: 'OK', time: '2024-05-06T07:08:09.123Z' });
  });

  it('answers OK when every checker passes', async () => {
    const { service } = newService();
    service.register('docker', ok());
    service.register('couchdb', ok());
    const report = await service.check();
    expect(report).toEqual({ status: 'OK', time: '2024-05-06T07:08:09.123Z' });
    expect(report).not.toHaveProperty('failed_checks');
  });

  it('lists failures sorted by component name, whatever the registration or completion order', async () => {
    const { service } = newService();
    const zeta = new ControlledChecker();
    const alpha = new ControlledChecker();
    service.register('zeta', zeta);
    service.register('middle', ok());
    service.register('alpha', alpha);
    const pending = service.check();
    await settle();
    zeta.answer({ ok: false, reason: 'zeta is down' });
    await settle();
    alpha.answer({ ok: false, reason: 'alpha is down' });
    await expect(pending).resolves.toEqual({
      status: 'Service Unavailable',
      time: '2024-05-06T07:08:09.123Z',
      failed_checks: [
        { component: 'alpha', reason: 'alpha is down' },
        { component: 'zeta', reason: 'zeta is down' },
      ],
    });
  });

  it('runs every checker concurrently', async () => {
    const { service } = newService();
    const first = new ControlledChecker();
    const second = new ControlledChecker();
    service.register('first', first);
    service.register('second', second);
    const pending = service.check();
    await settle();
    // Both started although neither has answered.
    expect(first.calls).toBe(1);
    expect(second.calls).toBe(1);
    first.answer({ ok: true });
    second.answer({ ok: true });
    await expect(pending).resolves.toMatchObject({ status: 'OK' });
  });
});

describe('HealthService timeouts and misbehaving checkers', () => {
  it('fails a checker that does not answer within its timeout, and aborts its signal with the reason', async () => {
    const { service } = newService(50);
    const stuck = new ControlledChecker();
    service.register('stuck', stuck);
    service.register('fine', ok());
    const report = await service.check();
    expect(report).toEqual({
      status: 'Service Unavailable',
      time: '2024-05-06T07:08:09.123Z',
      failed_checks: [{ component: 'stuck', reason: 'timed out after 50ms' }],
    });
    const signal = stuck.signals[0];
    expect(signal?.aborted).toBe(true);
    expect(signal?.reason).toBeInstanceOf(CheckTimeoutError);
  });

  it('fails a checker that ignores its signal and never settles', async () => {
    const { service } = newService(30);
    service.register('never', never());
    await expect(service.check()).resolves.toMatchObject({ failed_checks: [{ component: 'never', reason: 'timed out after 30ms' }] });
  });

  it("keeps the checker's own reason when it answers promptly on the timeout's abort", async () => {
    const { service } = newService(40);
    service.register('docker', {
      check: (signal) =>
        new Promise((resolve) => {
          signal.addEventListener('abort', () => {
            resolve({ ok: false, reason: `failed to ping to Docker daemon: ${(signal.reason as Error).message}` });
          });
        }),
    });
    await expect(service.check()).resolves.toMatchObject({
      failed_checks: [{ component: 'docker', reason: 'failed to ping to Docker daemon: timed out after 40ms' }],
    });
  });

  it('does not count an ok that arrives after the timeout', async () => {
    const { service } = newService(30);
    service.register('late', {
      check: (signal) => new Promise((resolve) => signal.addEventListener('abort', () => resolve({ ok: true }))),
    });
    await expect(service.check()).resolves.toMatchObject({ failed_checks: [{ component: 'late', reason: 'timed out after 30ms' }] });
  });

  it('turns a rejected promise into a failed check that says the checker failed', async () => {
    const { service } = newService();
    service.register('rejects', {
      check: async () => {
        throw new Error('database gone');
      },
    });
    await expect(service.check()).resolves.toMatchObject({ failed_checks: [{ component: 'rejects', reason: 'checker failed: database gone' }] });
  });

  it('turns a synchronous throw into a failed check', async () => {
    const { service } = newService();
    service.register('throws', {
      check: () => {
        throw new TypeError('not a function');
      },
    });
    await expect(service.check()).resolves.toMatchObject({ failed_checks: [{ component: 'throws', reason: 'checker failed: not a function' }] });
  });

  it('fails an answer that is not a CheckResult, and a failure without a reason', async () => {
    const { service } = newService();
    service.register('garbage', { check: async () => 'yes' as unknown as CheckResult });
    service.register('silent', { check: async () => ({ ok: false, reason: '' }) });
    const report = await service.check();
    expect(report.failed_checks).toEqual([
      { component: 'garbage', reason: expect.stringMatching(/^checker failed: it answered something other than/) },
      { component: 'silent', reason: 'checker failed without giving a reason' },
    ]);
  });
});

describe('HealthService shared runs', () => {
  it('serves 200 concurrent callers from one run of each checker', async () => {
    const { service } = newService();
    const checker = new ControlledChecker();
    service.register('runtime', checker);
    const callers = Array.from({ length: 200 }, () => service.check());
    await settle();
    checker.answer({ ok: false, reason: 'runtime down' });
    const reports = await Promise.all(callers);
    expect(checker.calls).toBe(1);
    for (const report of reports) {
      expect(report).toEqual({
        status: 'Service Unavailable',
        time: '2024-05-06T07:08:09.123Z',
        failed_checks: [{ component: 'runtime', reason: 'runtime down' }],
      });
    }
  });

  it('starts a fresh run for a call made after the previous run finished', async () => {
    const { service } = newService();
    let calls = 0;
    service.register('counted', { check: async () => ({ ok: ++calls > 0 }) as CheckResult });
    await service.check();
    await service.check();
    expect(calls).toBe(2);
  });

  it('does not let a caller that stops waiting cancel the run for the others', async () => {
    const { service } = newService();
    const checker = new ControlledChecker();
    service.register('runtime', checker);
    const leaving = new AbortController();
    const first = service.check(leaving.signal);
    const second = service.check();
    await settle();
    leaving.abort();
    await expect(first).resolves.toEqual({
      status: 'Service Unavailable',
      time: '2024-05-06T07:08:09.123Z',
      failed_checks: [{ component: 'runtime', reason: new CheckCancelledError().message }],
    });
    expect(checker.signals[0]?.aborted).toBe(false);
    checker.answer({ ok: true });
    await expect(second).resolves.toEqual({ status: 'OK', time: '2024-05-06T07:08:09.123Z' });
    expect(checker.calls).toBe(1);
  });

  it('stops the run when every caller has stopped waiting, and the next call starts anew', async () => {
    const { service } = newService();
    const checker = new ControlledChecker();
    service.register('runtime', checker);
    const callers = [new AbortController(), new AbortController()];
    const pending = callers.map((caller) => service.check(caller.signal));
    await settle();
    for (const caller of callers) caller.abort();
    await Promise.all(pending);
    expect(checker.signals[0]?.aborted).toBe(true);
    expect(checker.signals[0]?.reason).toBeInstanceOf(CheckCancelledError);

    const next = service.check();
    await settle();
    expect(checker.calls).toBe(2);
    expect(checker.signals[1]?.aborted).toBe(false);
    checker.answer({ ok: true });
    await expect(next).resolves.toMatchObject({ status: 'OK' });
  });

  it('is idle only with no checker registered and no run in flight (a run outlives its checker being removed)', async () => {
    const { service } = newService();
    expect(service.idle).toBe(true);
    const checker = new ControlledChecker();
    service.register('runtime', checker);
    expect(service.idle).toBe(false);
    const pending = service.check();
    await settle();
    service.unregister('runtime');
    expect(service.idle).toBe(false);
    checker.answer({ ok: true });
    await pending;
    expect(service.idle).toBe(true);
  });

  it('gives while idle, at once, the report check() resolves to', async () => {
    const { service } = newService();
    const now = service.reportNow();
    expect(now).toEqual({ status: 'OK', time: expect.stringMatching(/^\d{4}-\d\d-\d\dT/) as unknown });
    await expect(service.check()).resolves.toEqual({ status: 'OK', time: expect.any(String) as unknown });
    service.register('runtime', new ControlledChecker());
    expect(service.reportNow()).toBeUndefined();
  });

  it('starts nothing for a caller whose signal is already aborted', async () => {
    const { service } = newService();
    const checker = new ControlledChecker();
    service.register('runtime', checker);
    const report = await service.check(AbortSignal.abort());
    expect(checker.calls).toBe(0);
    expect(report.failed_checks).toEqual([{ component: 'runtime', reason: new CheckCancelledError().message }]);
  });

  it('leaves a checker registered during a run out of that run', async () => {
    const { service } = newService();
    const first = new ControlledChecker();
    service.register('first', first);
    const pending = service.check();
    await settle();
    service.register('later', failing('should not be in this run'));
    first.answer({ ok: true });
    await expect(pending).resolves.toMatchObject({ status: 'OK' });
    const next = service.check();
    await settle();
    first.answer({ ok: true });
    await expect(next).resolves.toMatchObject({ failed_checks: [{ component: 'later', reason: 'should not be in this run' }] });
    expect(first.calls).toBe(2);
  });
});

describe('HealthService registry', () => {
  it('refuses a name that is already taken', () => {
    const { service } = newService();
    service.register('docker', ok());
    expect(() => service.register('docker', ok())).toThrow(DuplicateCheckerError);
    expect(() => service.register('docker', ok())).toThrow('a health checker named "docker" is already registered');
  });

  it.each(['', ' docker', 'docker ', 'dock er', '-docker', 'a'.repeat(101), 'dö', 'a\nb'])('refuses the name %j', (name) => {
    const { service } = newService();
    expect(() => service.register(name, ok())).toThrow(InvalidCheckerNameError);
  });

  it.each(['docker', 'cri', 'couchdb.peer0', 'kafka-1', 'org1/peer0:7051', 'A_b'])('accepts the name %j', (name) => {
    const { service } = newService();
    expect(() => service.register(name, ok())).not.toThrow();
  });

  it('refuses a checker without a check method', () => {
    const { service } = newService();
    expect(() => service.register('broken', {} as HealthChecker)).toThrow(TypeError);
  });

  it('forgets an unregistered checker, which frees its name', async () => {
    const { service } = newService();
    service.register('docker', failing('down'));
    service.unregister('docker');
    service.unregister('never-registered');
    await expect(service.check()).resolves.toMatchObject({ status: 'OK' });
    service.register('docker', ok());
    expect(service.components()).toEqual(['docker']);
  });

  it('refuses a timeout that is not a positive whole number of milliseconds', () => {
    expect(() => new HealthService({ timeoutMs: 0, loggers: new CaptureLoggers() })).toThrow(RangeError);
    expect(() => new HealthService({ timeoutMs: 1.5, loggers: new CaptureLoggers() })).toThrow(RangeError);
  });
});

describe('HealthService logs and metrics', () => {
  it('logs each change of state once, with the reason', async () => {
    const { service, loggers } = newService();
    let answer: CheckResult = { ok: true };
    service.register('docker', { check: async () => answer });
    await service.check();
    answer = { ok: false, reason: 'failed to ping to Docker daemon: connection refused' };
    await service.check();
    await service.check();
    answer = { ok: true };
    await service.check();
    await service.check();

    const failing = loggers.find('warn', /docker/);
    expect(failing).toHaveLength(1);
    expect(failing[0]?.msg).toBe('health check docker is failing: failed to ping to Docker daemon: connection refused');
    expect(failing[0]?.fields).toEqual({ component: 'docker', reason: 'failed to ping to Docker daemon: connection refused' });
    const recovered = loggers.find('info', /docker/);
    expect(recovered).toHaveLength(1);
    expect(recovered[0]?.msg).toMatch(/^health check docker is ok again/);
  });

  it('logs a checker that fails from its first run', async () => {
    const { service, loggers } = newService();
    service.register('cri', failing('NetworkReady is false'));
    await service.check();
    await service.check();
    expect(loggers.find('warn', /cri is failing: NetworkReady is false/)).toHaveLength(1);
  });

  it('observes duration and sets status per component', async () => {
    const observed: Array<{ labels: LabelValues; value: number }> = [];
    const statuses: Array<{ labels: LabelValues; value: number }> = [];
    const histogram = (labels: LabelValues): Histogram => ({
      with: (more) => histogram({ ...labels, ...more }),
      observe: (value) => observed.push({ labels, value }),
    });
    const gauge = (labels: LabelValues): Gauge => ({
      with: (more) => gauge({ ...labels, ...more }),
      add: () => undefined,
      set: (value) => statuses.push({ labels, value }),
    });
    const { service } = newService(2000, { duration: histogram({}), status: gauge({}) });
    service.register('good', ok());
    service.register('bad', failing('nope'));
    await service.check();
    expect(statuses).toEqual(
      expect.arrayContaining([
        { labels: { component: 'good' }, value: 1 },
        { labels: { component: 'bad' }, value: 0 },
      ]),
    );
    expect(statuses).toHaveLength(2);
    expect(observed.map((o) => o.labels.component).sort()).toEqual(['bad', 'good']);
    for (const { value } of observed) {
      expect(value).toBeGreaterThanOrEqual(0);
      expect(value).toBeLessThan(2);
    }
  });

  it('keeps answering when the metrics throw, and logs the problem', async () => {
    const throwing: Histogram = {
      with: () => throwing,
      observe: () => {
        throw new Error('label trouble');
      },
    };
    const gauge: Gauge = { with: () => gauge, add: () => undefined, set: () => undefined };
    const { service, loggers } = newService(2000, { duration: throwing, status: gauge });
    service.register('docker', ok());
    await expect(service.check()).resolves.toMatchObject({ status: 'OK' });
    expect(loggers.find('error', /cannot record health metrics for docker: label trouble/)).toHaveLength(1);
  });

  it('a report from the error path is dated by the injected clock too', async () => {
    const loggers = new CaptureLoggers();
    const service = new HealthService({
      timeoutMs: 2000,
      clock: fixedClock,
      loggers,
      onStateChange: () => {
        throw new Error('listener trouble');
      },
    });
    service.register('docker', failing('daemon down'));
    await expect(service.check()).resolves.toEqual({
      status: 'Service Unavailable',
      time: '2024-05-06T07:08:09.123Z',
      failed_checks: [{ component: 'docker', reason: 'health service error: listener trouble' }],
    });
  });
});
