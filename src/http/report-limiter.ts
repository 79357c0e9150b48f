/**
 * At most `perWindow` reports in any window of `windowMs` (a fixed window from the first report
 * in it): a client retrying a refused handshake in a loop must not flood the log, while a few
 * refusals in a row are all reported. Pure logic; time comes from the caller.
 */
export class ReportLimiter {
  private windowStart = Number.NEGATIVE_INFINITY;
  private reported = 0;
  private suppressed = 0;

  constructor(
    private readonly perWindow: number,
    private readonly windowMs: number,
  ) {}

  /** Null when this report is to be dropped (it is counted); else how many were dropped before it. */
  take(now: number): { suppressed: number } | null {
    if (now - this.windowStart >= this.windowMs) {
      this.windowStart = now;
      this.reported = 0;
    }
    if (this.reported >= this.perWindow) {
      this.suppressed += 1;
      return null;
    }
    this.reported += 1;
    const suppressed = this.suppressed;
    this.suppressed = 0;
    return { suppressed };
  }
}
