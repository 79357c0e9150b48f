import { setTimeout as delay } from 'node:timers/promises';

export { delay };

export interface WaitOptions {
  /** How long to keep trying; default 10 s. */
  timeoutMs?: number;
  /** Pause between tries; default 50 ms. */
  everyMs?: number;
  /** Checked before each try: a string ends the wait at once with that reason (a daemon that exited). */
  giveUpIf?: () => string | undefined;
}

type Outcome<T> = T | undefined | null | false;

/**
 * The tests' one polling helper. Calls `probe` until it returns something other than undefined,
 * null or false, and returns that. A probe that throws is tried again; the last error is in the
 * failure, which names `what` and the time waited. Only for waiting on real things (a server's
 * state, a daemon's output): never as a timed assertion.
 */
export async function waitFor<T>(what: string, probe: () => Outcome<T> | Promise<Outcome<T>>, options: WaitOptions = {}): Promise<T> {
  const timeoutMs = options.timeoutMs ?? 10_000;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const reason = options.giveUpIf?.();
    if (reason !== undefined) throw new Error(`${what}: gave up: ${reason}`);
    let failure = '';
    try {
      const value = await probe();
      if (value !== undefined && value !== null && value !== false) return value;
    } catch (error) {
      failure = error instanceof Error ? error.message : String(error);
    }
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms${failure ? ` (last error: ${failure})` : ''}`);
    await delay(options.everyMs ?? 50);
  }
}
