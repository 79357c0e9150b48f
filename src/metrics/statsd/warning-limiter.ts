/**
 * At most one warning of a kind per interval: a short write interval must not turn an outage
 * into a stream of identical warnings. Pure logic; time comes from the caller.
 */
export class WarningLimiter {
  private readonly last = new Map<string, { at: number; suppressed: number }>();

  constructor(private readonly intervalMs: number) {}

  /**
   * Whether a warning of `kind` may be logged at `now`. When it may, returns how many were
   * suppressed since the last one logged (0 for the first); when not, counts it and returns null.
   */
  take(kind: string, now: number): { suppressed: number; sinceMs: number } | null {
    const entry = this.last.get(kind);
    if (entry && now - entry.at < this.intervalMs) {
      entry.suppressed += 1;
      return null;
    }
    this.last.set(kind, { at: now, suppressed: 0 });
    return { suppressed: entry?.suppressed ?? 0, sinceMs: entry ? now - entry.at : 0 };
  }
}

/** `12.3 s`, `950 ms`: durations in log messages. */
export function formatDuration(ms: number): string {
  return ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(1)} s`;
}
