/**
 * Time and timers, the one injectable shape for both: a Clock says what time it is (ms since the
 * epoch, as Date.now), a Scheduler is a Clock that also runs timers. Tests drive them without
 * sleeping. Import them from here. The Scheduler is still declared in src/metrics/scheduler.ts,
 * where it began (StatsD's flushing and reconnect backoff); it is to move here.
 */
export { realScheduler, type Cancellable, type Scheduler } from './metrics/scheduler';

export interface Clock {
  /** Milliseconds since the epoch (Date.now), or of a monotonic clock where only durations are taken. */
  now(): number;
}

/** The wall clock. */
export const systemClock: Clock = { now: () => Date.now() };

/** A monotonic clock (performance.now), for durations that a wall-clock step must not distort. */
export const monotonicClock: Clock = { now: () => performance.now() };
