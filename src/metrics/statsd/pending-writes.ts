import type { Scheduler } from '../../time';

/**
 * Bytes handed to a socket whose write has not completed, with a cap: past it, packets are
 * dropped rather than queued, so a stalled daemon cannot make memory grow.
 */
export class PendingWrites {
  private pendingBytes = 0;
  private waiters: (() => void)[] = [];

  constructor(
    private readonly scheduler: Scheduler,
    readonly maxBytes: number,
  ) {}

  get bytes(): number {
    return this.pendingBytes;
  }

  /**
   * Starts a write of `bytes` unless that would pass the cap. `start` must call `complete`
   * once; `done` gets its outcome (or the refusal, at once).
   */
  write(bytes: number, start: (complete: (error: Error | null) => void) => void, done: (error: Error | null) => void): void {
    if (this.pendingBytes > 0 && this.pendingBytes + bytes > this.maxBytes) {
      done(new Error(`send buffer full (${this.pendingBytes} bytes not yet written, limit ${this.maxBytes})`));
      return;
    }
    this.pendingBytes += bytes;
    let finished = false;
    start((error) => {
      if (finished) return;
      finished = true;
      this.pendingBytes -= bytes;
      if (this.pendingBytes === 0) this.wake();
      done(error);
    });
  }

  /** Resolves when nothing is pending, or after `timeoutMs`. */
  drained(timeoutMs: number): Promise<void> {
    if (this.pendingBytes === 0) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = this.scheduler.setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w !== wake);
        resolve();
      }, timeoutMs);
      const wake = (): void => {
        timer.cancel();
        resolve();
      };
      this.waiters.push(wake);
    });
  }

  private wake(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const waiter of waiters) waiter();
  }
}
