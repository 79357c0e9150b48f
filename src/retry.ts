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
