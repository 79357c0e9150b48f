import type { Cancellable, Scheduler } from '../../src/time';

interface Timer {
  due: number;
  interval: number | null;
  callback: () => void;
  cancelled: boolean;
}

/** A Scheduler whose time moves only when a test calls advance(). */
export class FakeScheduler implements Scheduler {
  private time = 0;
  private timers: Timer[] = [];

  now(): number {
    return this.time;
  }

  setTimeout(callback: () => void, delayMs: number): Cancellable {
    return this.add({ due: this.time + delayMs, interval: null, callback, cancelled: false });
  }

  setInterval(callback: () => void, intervalMs: number): Cancellable {
    return this.add({ due: this.time + intervalMs, interval: intervalMs, callback, cancelled: false });
  }

  /** Timers not yet fired or cancelled. */
  get pending(): number {
    return this.timers.filter((t) => !t.cancelled).length;
  }

  /** Moves time forward, firing every timer that falls due, in order. */
  advance(ms: number): void {
    const end = this.time + ms;
    for (;;) {
      const next = this.timers.filter((t) => !t.cancelled && t.due <= end).sort((a, b) => a.due - b.due)[0];
      if (!next) break;
      this.time = next.due;
      if (next.interval === null) next.cancelled = true;
      else next.due += next.interval;
      next.callback();
    }
    this.time = end;
    this.timers = this.timers.filter((t) => !t.cancelled);
  }

  private add(timer: Timer): Cancellable {
    this.timers.push(timer);
    return { cancel: () => (timer.cancelled = true) };
  }
}

/**
 * A FakeScheduler whose time jumps to each timeout as soon as it is set (the callback runs in a
 * microtask): a retry loop's waits cost nothing, and `waits` lists them in order.
 */
export class InstantScheduler extends FakeScheduler {
  readonly waits: number[] = [];

  override setTimeout(callback: () => void, delayMs: number): Cancellable {
    this.waits.push(delayMs);
    const timer = super.setTimeout(callback, delayMs);
    queueMicrotask(() => this.advance(delayMs));
    return timer;
  }
}
