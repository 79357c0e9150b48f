import { WarningLimiter } from '../../../src/logging/warning-limiter';

describe('WarningLimiter with several per window (the refused-certificate reports)', () => {
  it('lets perWindow reports through per window, counts the rest, and hands the count to the next one let through', () => {
    const limiter = new WarningLimiter(1000, 2);
    const take = (now: number): { suppressed: number } | null => {
      const allowed = limiter.take('refusal', now);
      return allowed === null ? null : { suppressed: allowed.suppressed };
    };
    expect(take(0)).toEqual({ suppressed: 0 });
    expect(take(10)).toEqual({ suppressed: 0 });
    expect(take(20)).toBeNull();
    expect(take(999)).toBeNull();
    expect(take(1000)).toEqual({ suppressed: 2 });
    expect(take(1001)).toEqual({ suppressed: 0 });
    expect(take(1002)).toBeNull();
  });
});
