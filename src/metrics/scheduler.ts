/**
 * Time and timers, injectable so that aggregation, flushing and reconnect backoff can be
 * driven by tests without sleeping.
 */
export interface Cancellable {
  cancel(): void;
}

export interface Scheduler {
  now(): number;
  setTimeout(callback: () => void, delayMs: number): Cancellable;
  setInterval(callback: () => void, intervalMs: number): Cancellable;
}

/** Node's timers, unref'd: metrics never keep a process alive on their own. */
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
