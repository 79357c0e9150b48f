/**
 * client-go's EventSourceObjectSpamFilter idea: a token bucket per key (burst, then one token
 * per refill interval). Pure: the caller passes the time.
 */
export class TokenBuckets {
  private readonly buckets = new Map<string, { tokens: number; updatedMs: number }>();

  constructor(
    private readonly burst: number,
    private readonly refillIntervalMs: number,
    private readonly maxKeys = 1024,
  ) {}

  /** Takes a token for `key` when one is available. */
  take(key: string, nowMs: number): boolean {
    const bucket = this.refill(key, nowMs);
    if (bucket.tokens < 1) return false;
    bucket.tokens -= 1;
    return true;
  }

  /** Milliseconds until `key` has a token (0: now). */
  waitMs(key: string, nowMs: number): number {
    const bucket = this.refill(key, nowMs);
    return bucket.tokens >= 1 ? 0 : Math.ceil((1 - bucket.tokens) * this.refillIntervalMs);
  }

  private refill(key: string, nowMs: number): { tokens: number; updatedMs: number } {
    let bucket = this.buckets.get(key);
    if (!bucket) {
      if (this.buckets.size >= this.maxKeys) {
        const oldest = this.buckets.keys().next().value;
        if (oldest !== undefined) this.buckets.delete(oldest);
      }
      bucket = { tokens: this.burst, updatedMs: nowMs };
      this.buckets.set(key, bucket);
      return bucket;
    }
    const elapsed = Math.max(0, nowMs - bucket.updatedMs);
    bucket.tokens = Math.min(this.burst, bucket.tokens + elapsed / this.refillIntervalMs);
    bucket.updatedMs = nowMs;
    return bucket;
  }
}
