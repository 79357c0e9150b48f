/**
 * StatsD values aggregated in memory between flushes, as Fabric (go-kit statsd) does:
 * counters summed, gauges last value, one timing per histogram observation (observed in
 * seconds, sent in milliseconds). Pure logic: `drain()` returns what goes on the wire.
 *
 * Memory is bounded by the number of series: counters and gauges are one number each,
 * and a histogram keeps at most `maxTimingsPerSeries` observations per interval (a
 * uniform reservoir sample, sent with `|@rate` so the daemon still counts every one).
 */

/** A number as StatsD reads it: never in exponent notation. */
export function formatStatsdNumber(value: number): string {
  if (Number.isInteger(value)) {
    return Math.abs(value) < 1e21 ? String(value) : BigInt(value).toString();
  }
  const text = String(value);
  if (!text.includes('e')) return text;
  return value.toFixed(20).replace(/0+$/, '').replace(/\.$/, '');
}

function formatMilliseconds(seconds: number): string {
  return formatStatsdNumber(Math.round(seconds * 1_000_000) / 1000);
}

class CounterCell {
  value = 0;
  touched = false;

  add(delta: number): void {
    this.value += delta;
    this.touched = true;
  }
}

class GaugeCell {
  value = 0;
  isSet = false;

  set(value: number): void {
    this.value = value;
    this.isSet = true;
  }

  add(delta: number): void {
    this.value += delta;
    this.isSet = true;
  }
}

class TimingCell {
  /** Observations kept this interval, in seconds. */
  readonly samples: number[] = [];
  /** Observations made this interval (kept or not). */
  observed = 0;
  /** Negative observations, which a StatsD timing cannot carry. */
  rejected = 0;

  constructor(
    private readonly capacity: number,
    private readonly random: () => number,
  ) {}

  observe(seconds: number): void {
    if (seconds < 0) {
      this.rejected += 1;
      return;
    }
    this.observed += 1;
    if (this.samples.length < this.capacity) {
      this.samples.push(seconds);
      return;
    }
    const slot = Math.floor(this.random() * this.observed);
    if (slot < this.capacity) this.samples[slot] = seconds;
  }
}

export interface AggregatorOptions {
  /** '' or ending in '.'; put before every bucket name. */
  prefix: string;
  /** Default 1000. */
  maxTimingsPerSeries?: number;
  /** For the reservoir; default Math.random. */
  random?: () => number;
}

/** What one interval produced: wire entries, and what could not be represented. */
export interface Drained {
  /**
   * One entry per value; an entry may hold two lines (a negative gauge is sent as `:0|g`
   * then the value, since a leading `-` alone means "decrement"), which must stay together.
   */
  entries: string[];
  /** Entries that are not a single line count as this many lines. */
  lines: number;
  /** Histogram observations dropped because they were negative. */
  rejectedObservations: number;
}

export class StatsdAggregator {
  private readonly counters = new Map<string, CounterCell>();
  private readonly gauges = new Map<string, GaugeCell>();
  private readonly timings = new Map<string, TimingCell>();
  private readonly prefix: string;
  private readonly capacity: number;
  private readonly random: () => number;

  constructor(options: AggregatorOptions) {
    this.prefix = options.prefix;
    this.capacity = options.maxTimingsPerSeries ?? 1000;
    this.random = options.random ?? Math.random;
  }

  counter(bucket: string): CounterCell {
    return getOrAdd(this.counters, this.prefix + bucket, () => new CounterCell());
  }

  gauge(bucket: string): GaugeCell {
    return getOrAdd(this.gauges, this.prefix + bucket, () => new GaugeCell());
  }

  /** Forgets a gauge: it is not sent at the next flushes (Gauge.remove). */
  removeGauge(bucket: string): void {
    this.gauges.delete(this.prefix + bucket);
  }

  timing(bucket: string): TimingCell {
    return getOrAdd(this.timings, this.prefix + bucket, () => new TimingCell(this.capacity, this.random));
  }

  /** Number of series (buckets) held, of every type. */
  get seriesCount(): number {
    return this.counters.size + this.gauges.size + this.timings.size;
  }

  /** Timing observations held for the next flush. */
  get heldObservations(): number {
    let held = 0;
    for (const cell of this.timings.values()) held += cell.samples.length;
    return held;
  }

  /**
   * The interval's values, then a new interval: counters touched since the last drain
   * (reset to 0), every gauge ever set (a gauge is a level: resending it heals a lost
   * packet or a restarted daemon), every timing kept.
   */
  drain(): Drained {
    const entries: string[] = [];
    let lines = 0;
    let rejectedObservations = 0;
    for (const [bucket, cell] of this.counters) {
      if (!cell.touched) continue;
      entries.push(`${bucket}:${formatStatsdNumber(cell.value)}|c`);
      lines += 1;
      cell.value = 0;
      cell.touched = false;
    }
    for (const [bucket, cell] of this.gauges) {
      if (!cell.isSet) continue;
      if (cell.value < 0) {
        entries.push(`${bucket}:0|g\n${bucket}:${formatStatsdNumber(cell.value)}|g`);
        lines += 2;
      } else {
        entries.push(`${bucket}:${formatStatsdNumber(cell.value)}|g`);
        lines += 1;
      }
    }
    for (const [bucket, cell] of this.timings) {
      rejectedObservations += cell.rejected;
      cell.rejected = 0;
      if (cell.samples.length === 0) continue;
      const sampled = cell.observed > cell.samples.length;
      const rate = sampled ? `|@${formatStatsdNumber(Number((cell.samples.length / cell.observed).toPrecision(6)))}` : '';
      for (const seconds of cell.samples) {
        entries.push(`${bucket}:${formatMilliseconds(seconds)}|ms${rate}`);
        lines += 1;
      }
      cell.samples.length = 0;
      cell.observed = 0;
    }
    return { entries, lines, rejectedObservations };
  }
}

function getOrAdd<V>(map: Map<string, V>, key: string, create: () => V): V {
  let value = map.get(key);
  if (value === undefined) {
    value = create();
    map.set(key, value);
  }
  return value;
}
