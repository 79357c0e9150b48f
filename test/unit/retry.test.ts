import { sleep } from '../../src/retry';
import { FakeScheduler } from '../support/fake-scheduler';

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
