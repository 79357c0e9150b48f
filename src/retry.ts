/**
 * Backoff and waiting, beside src/time.ts on the ground floor (it imports nothing of the
 * project's folders but time.ts): the one backoff formula every retry of fabric-ops uses, and the
 * one sleep on a Scheduler, so that tests drive both with a fake Scheduler instead of sleeping.
 */
import type { Scheduler } from './time';

/** Retry delays: exponential, capped, with jitter so that many processes do not retry in step. */
export interface BackoffPolicy {
  initialMs: number;
  maxMs: number;
  factor: number;
  /** 0..1: the delay is scaled by a random factor in [1 - jitter, 1 + jitter], then capped. */
  jitter: number;
}

/**
 * StatsD's reconnect delays (TcpTransport). Quick first retries, so a daemon that restarts is
 * reached again within about 100 ms, and a low cap, so one that was down for long is reached
 * within 2 s of coming back: a refused connection attempt every 2 s costs nothing worth saving.
 */
export const defaultBackoff: BackoffPolicy = { initialMs: 100, maxMs: 2_000, factor: 2, jitter: 0.2 };

/** Pure: the delay before retry number `failures` (1 for the first retry); `random` draws the jitter (Math.random). */
export function backoffDelay(policy: BackoffPolicy, failures: number, random: () => number): number {
  const exponent = Math.max(0, failures - 1);
  const base = Math.min(policy.maxMs, policy.initialMs * policy.factor ** exponent);
  const scaled = base * (1 - policy.jitter + 2 * policy.jitter * random());
  return Math.max(0, Math.min(policy.maxMs, Math.round(scaled)));
}

/**
 * Resolves after `ms` on `scheduler`'s timer, or as soon as `signal` aborts (at once when it
 * already has); never rejects. A cut sleep resolves rather than throws because every caller
 * cuts one to go on with its loop at once (a stop, new work), not to fail.
 */
export function sleep(scheduler: Scheduler, ms: number, signal?: AbortSignal): Promise<void> {
  if (signal?.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = (): void => {
      timer.cancel();
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = scheduler.setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });
}

export interface RetryOptions {
  policy: BackoffPolicy;
  /** Its timers wait between attempts, its clock bounds them (a fake one in tests). */
  scheduler: Scheduler;
  /** Draws the jitter; Math.random. */
  random?: () => number;
  /** No attempt starts later than this many ms after the first: the last error is thrown instead. */
  deadlineMs?: number;
  /** An error not worth another attempt (a refusal): thrown at once. */
  giveUp?: (error: unknown) => boolean;
  /** Told of each failure that will be tried again: its number (1 for the first) and the wait before the next attempt. */
  onRetry?: (error: unknown, failures: number, delayMs: number) => void;
}

/**
 * Calls `attempt` until it resolves, waiting backoffDelay(policy) on the scheduler between
 * attempts; throws the last error when `giveUp` says so or the next attempt would start after
 * the deadline. Resolves with the value and how many attempts failed before it.
 */
export async function retry<T>(attempt: () => Promise<T>, options: RetryOptions): Promise<{ value: T; failures: number }> {
  const deadline = options.deadlineMs === undefined ? Infinity : options.scheduler.now() + options.deadlineMs;
  for (let failures = 0; ;) {
    try {
      return { value: await attempt(), failures };
    } catch (error) {
      failures += 1;
      const delay = backoffDelay(options.policy, failures, options.random ?? Math.random);
      if (options.giveUp?.(error) === true || options.scheduler.now() + delay > deadline) throw error;
      options.onRetry?.(error, failures, delay);
      await sleep(options.scheduler, delay);
    }
  }
}
