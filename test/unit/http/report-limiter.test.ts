import { ReportLimiter } from '../../../src/http/report-limiter';

describe('ReportLimiter', () => {
  it('lets perWindow reports through per window, counts the rest, and hands the count to the next one let through', () => {
    const limiter = new ReportLimiter(2, 1000);
    expect(limiter.take(0)).toEqual({ suppressed: 0 });
    expect(limiter.take(10)).toEqual({ suppressed: 0 });
    expect(limiter.take(20)).toBeNull();
    expect(limiter.take(999)).toBeNull();
    expect(limiter.take(1000)).toEqual({ suppressed: 2 });
    expect(limiter.take(1001)).toEqual({ suppressed: 0 });
    expect(limiter.take(1002)).toBeNull();
  });
});
