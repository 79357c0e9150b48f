/** Reconnect delays: exponential, capped, with jitter so that many peers do not reconnect in step. Pure logic. */
export interface BackoffPolicy {
  initialMs: number;
  maxMs: number;
  factor: number;
  /** 0..1: the delay is scaled by a random factor in [1 - jitter, 1 + jitter], then capped. */
  jitter: number;
}

/**
 * Quick first retries, so a daemon that restarts is reached again within about 100 ms, and a
 * low cap, so one that was down for long is reached within 2 s of coming back: a refused
 * connection attempt every 2 s costs nothing worth saving.
 */
export const defaultBackoff: BackoffPolicy = { initialMs: 100, maxMs: 2_000, factor: 2, jitter: 0.2 };

/** Delay before reconnect attempt `failures` (1 for the first retry). */
export function backoffDelay(policy: BackoffPolicy, failures: number, random: () => number): number {
  const exponent = Math.max(0, failures - 1);
  const base = Math.min(policy.maxMs, policy.initialMs * policy.factor ** exponent);
  const scaled = base * (1 - policy.jitter + 2 * policy.jitter * random());
  return Math.max(0, Math.min(policy.maxMs, Math.round(scaled)));
}
