import { retry, sleep } from '../../src/retry';
import { FakeScheduler, InstantScheduler } from '../support/fake-scheduler';

/** Settles within the microtasks queued so far: whether `promise` has resolved by now. */
async function settled(promise: Promise<void>): Promise<boolean> {
  let done = false;
  void promise.then(() => (done = true));
  await Promise.resolve();
  await Promise.resolve();
  return done;
}

describe('sleep on a Scheduler', () => {
  test("resolves when the scheduler's time reaches the delay, not before", async () => {
    const scheduler = new FakeScheduler();
    const slept = sleep(scheduler, 500);
    expect(scheduler.pending).toBe(1);
    scheduler.advance(499);
    expect(await settled(slept)).toBe(false);
    scheduler.advance(1);
    expect(await settled(slept)).toBe(true);
    expect(scheduler.pending).toBe(0);
  });

  test('an abort cuts it at once and cancels its timer; an abort afterwards changes nothing', async () => {
    const scheduler = new FakeScheduler();
    const stop = new AbortController();
    const slept = sleep(scheduler, 60_000, stop.signal);
    stop.abort();
    expect(await settled(slept)).toBe(true);
    expect(scheduler.pending).toBe(0);

    const other = new AbortController();
    const full = sleep(scheduler, 10, other.signal);
    scheduler.advance(10);
    expect(await settled(full)).toBe(true);
    other.abort();
    expect(scheduler.pending).toBe(0);
  });

  test('a signal already aborted resolves at once and sets no timer', async () => {
    const scheduler = new FakeScheduler();
    const stop = new AbortController();
    stop.abort();
    const slept = sleep(scheduler, 60_000, stop.signal);
    expect(scheduler.pending).toBe(0);
    expect(await settled(slept)).toBe(true);
  });
});

describe('retry (the one retry loop)', () => {
  const policy = { initialMs: 100, maxMs: 1_000, factor: 2, jitter: 0 };

  test('tries until the attempt resolves, waiting the backoff between, and says how many failed', async () => {
    const scheduler = new InstantScheduler();
    let calls = 0;
    const retried: number[] = [];
    const result = await retry(
      async () => {
        calls += 1;
        if (calls < 4) throw new Error(`failure ${calls}`);
        return 'value';
      },
      { policy, scheduler, onRetry: (_error, failures) => retried.push(failures) },
    );
    expect(result).toEqual({ value: 'value', failures: 3 });
    expect(scheduler.waits).toEqual([100, 200, 400]);
    expect(retried).toEqual([1, 2, 3]);
  });

  test('an error giveUp names is thrown at once; past the deadline the last error is thrown', async () => {
    const scheduler = new InstantScheduler();
    await expect(retry(() => Promise.reject(new Error('refused')), { policy, scheduler, giveUp: () => true })).rejects.toThrow('refused');
    expect(scheduler.waits).toEqual([]);
    let calls = 0;
    await expect(
      retry(
        () => {
          calls += 1;
          return Promise.reject(new Error(`down ${calls}`));
        },
        { policy, scheduler, deadlineMs: 1_000 },
      ),
    ).rejects.toThrow('down 4');
    // 100 + 200 + 400 = 700 ms waited; the next wait (800) would end after the deadline.
    expect(scheduler.waits).toEqual([100, 200, 400]);
  });
});
