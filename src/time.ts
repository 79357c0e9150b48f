/**
 * Time and timers, the one injectable shape for both: a Clock says what time it is (ms since the
 * epoch, as Date.now), a Scheduler is a Clock that also runs timers (StatsD's flushing and
 * reconnect backoff, the fleet's put-backs). Tests drive them without sleeping.
 */
export interface Clock {
  /** Milliseconds since the epoch (Date.now), or of a monotonic clock where only durations are taken. */
  now(): number;
}

export interface Cancellable {
  cancel(): void;
}

export interface Scheduler extends Clock {
  setTimeout(callback: () => void, delayMs: number): Cancellable;
  setInterval(callback: () => void, intervalMs: number): Cancellable;
}

// The ground floor, with src/retry.ts (backoff, sleep): neither imports anything of the project's folders.

/** The wall clock. */
export const systemClock: Clock = { now: () => Date.now() };

/** A monotonic clock (performance.now), for durations that a wall-clock step must not distort. */
export const monotonicClock: Clock = { now: () => performance.now() };

/** Node's timers, unref'd: a timer of ours never keeps a process alive on its own. */
export const realScheduler: Scheduler = {
  now: () => Date.now(),
  setTimeout(callback, delayMs) {
    const timer = setTimeout(callback, delayMs);
    timer.unref();
    return { cancel: () => clearTimeout(timer) };
  },
  setInterval(callback, intervalMs) {
    const timer = setInterval(callback, intervalMs);
    timer.unref();
    return { cancel: () => clearInterval(timer) };
  },
};

/**
 * Node's timers, not unref'd: for the few waits that must hold the process open on their own,
 * because nothing else may yet or still (a start that waits for the API server before the
 * server listens, a stop that drains queued work). Any other timer is realScheduler's.
 */
export const keepAliveScheduler: Scheduler = {
  now: () => Date.now(),
  setTimeout(callback, delayMs) {
    const timer = setTimeout(callback, delayMs);
    return { cancel: () => clearTimeout(timer) };
  },
  setInterval(callback, intervalMs) {
    const timer = setInterval(callback, intervalMs);
    return { cancel: () => clearInterval(timer) };
  },
};
