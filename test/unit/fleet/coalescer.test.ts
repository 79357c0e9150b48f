import { Coalescer } from '../../../src/fleet/health';
import { FakeScheduler } from '../../support/fake-scheduler';

describe('health rounds: coalescing and the reuse window', () => {
  test('callers during a round share it; after it, the answer is reused for reuseMs, then a new round runs', async () => {
    const scheduler = new FakeScheduler();
    let rounds = 0;
    let finish: (value: number) => void = () => undefined;
    const coalescer = new Coalescer(
      () => {
        rounds += 1;
        return new Promise<number>((resolve) => (finish = resolve));
      },
      1000,
      scheduler,
    );
    const during = [coalescer.run(), coalescer.run(), coalescer.run()];
    finish(1);
    expect(await Promise.all(during)).toEqual([1, 1, 1]);
    expect(rounds).toBe(1);
    scheduler.advance(999);
    expect(await coalescer.run()).toBe(1);
    expect(rounds).toBe(1);
    scheduler.advance(1);
    const next = coalescer.run();
    finish(2);
    expect(await next).toBe(2);
    expect(rounds).toBe(2);
  });

  test('a failed round is not reused', async () => {
    let rounds = 0;
    const coalescer = new Coalescer(() => {
      rounds += 1;
      return rounds === 1 ? Promise.reject(new Error('boom')) : Promise.resolve(rounds);
    }, 60_000);
    await expect(coalescer.run()).rejects.toThrow('boom');
    expect(await coalescer.run()).toBe(2);
  });

  test('invalidate: the next caller gets a new round, and a round in flight when it was called is not reused', async () => {
    let rounds = 0;
    let finish: (value: number) => void = () => undefined;
    const coalescer = new Coalescer(() => {
      rounds += 1;
      return new Promise<number>((resolve) => (finish = resolve));
    }, 60_000);
    const first = coalescer.run();
    coalescer.invalidate();
    finish(1);
    expect(await first).toBe(1);
    const second = coalescer.run();
    expect(rounds).toBe(2);
    finish(2);
    expect(await second).toBe(2);
    expect(await coalescer.run()).toBe(2);
    coalescer.invalidate();
    const third = coalescer.run();
    finish(3);
    expect(await third).toBe(3);
    expect(rounds).toBe(3);
  });

  test('a caller arriving after invalidate() while a round runs gets a round that started after it, not the running one', async () => {
    const finishers: Array<(value: number) => void> = [];
    const coalescer = new Coalescer(() => new Promise<number>((resolve) => finishers.push(resolve)), 60_000);
    const before = coalescer.run();
    // A write lands while the round runs: what that round read may predate it.
    coalescer.invalidate();
    const after = coalescer.run();
    const alsoAfter = coalescer.run();
    expect(finishers).toHaveLength(2);
    finishers[0]!(1);
    finishers[1]!(2);
    expect(await before).toBe(1);
    expect(await after).toBe(2);
    expect(await alsoAfter).toBe(2);
    // The round started after the write is the one reused.
    expect(await coalescer.run()).toBe(2);
    expect(finishers).toHaveLength(2);
  });
});
