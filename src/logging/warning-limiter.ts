/**
 * At most `perWindow` warnings of a kind in a window of `windowMs` that opens at the first one: a
 * short write interval must not turn an outage into a stream of identical warnings, nor a client
 * retrying a refused handshake in a loop flood the log, while a few in a row are all reported.
 * Pure logic; time comes from the caller. Used by the StatsD system (one per kind per minute) and
 * the server's refused-certificate reports (ten in any ten seconds).
 */
export class WarningLimiter {
  private readonly windows = new Map<string, { start: number; reported: number; suppressed: number }>();

  constructor(
    private readonly windowMs: number,
    private readonly perWindow = 1,
  ) {}

  /**
   * Whether a warning of `kind` may be logged at `now`. When it may, returns how many were
   * suppressed before it (0 for the first) and the time since its window opened; when not,
   * counts it and returns null.
   */
  take(kind: string, now: number): { suppressed: number; sinceMs: number } | null {
    const window = this.windows.get(kind);
    if (window && now - window.start < this.windowMs) {
      if (window.reported >= this.perWindow) {
        window.suppressed += 1;
        return null;
      }
      window.reported += 1;
      const suppressed = window.suppressed;
      window.suppressed = 0;
      return { suppressed, sinceMs: now - window.start };
    }
    this.windows.set(kind, { start: now, reported: 1, suppressed: 0 });
    return { suppressed: window?.suppressed ?? 0, sinceMs: window ? now - window.start : 0 };
  }
}

/** `12.3 s`, `950 ms`: durations in log messages. */
export function formatDuration(ms: number): string {
  return ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(1)} s`;
}
