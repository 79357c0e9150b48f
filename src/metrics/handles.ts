/**
 * The Counter / Gauge / Histogram objects handed to callers, shared by every provider:
 * label binding (`with`), label and value checks, and, for providers whose series cost
 * something to make (statsd's), a per-metric cache of series so that a hot
 * `with(labels).add(1)` costs one map lookup. A provider only supplies the series for a
 * complete set of label values.
 */
import { MetricLabelsError, MetricValueError } from '../errors';
import type { MetricDefinition } from './definition';
import type { Counter, Gauge, Histogram, LabelValues } from './types';

export type BoundLabels = Readonly<Record<string, string>>;

export interface CounterSeries {
  add(delta: number): void;
}

export interface GaugeSeries {
  add(delta: number): void;
  set(value: number): void;
  /** Stop exporting this series (Gauge.remove); absent where there is nothing to stop (disabled). */
  remove?(): void;
}

export interface HistogramSeries {
  observe(value: number): void;
}

/** Makes the provider's series for a complete set of label values (every labelName present). */
export type SeriesFactory<S> = (labels: BoundLabels) => S;

const labelKeySeparator = '\u0000';

/** One metric's definition, its provider's series factory, and the series made so far. */
export class MetricCore<S> {
  private readonly series = new Map<string, S>();

  /**
   * `cacheSeries` false: for series that cost nothing to make and keep no state of their own
   * (the disabled provider's; prometheus's, whose state is in prom-client's own map).
   */
  constructor(
    readonly definition: MetricDefinition,
    private readonly factory: SeriesFactory<S>,
    private readonly cacheSeries = true,
  ) {}

  /** Merges label values into those already bound, checking names and types. */
  bind(bound: BoundLabels, given: LabelValues): BoundLabels {
    const { definition } = this;
    if (typeof given !== 'object' || given === null || Array.isArray(given)) {
      throw new MetricLabelsError(`${definition.description}: with() takes an object of label values, got ${JSON.stringify(given)}`);
    }
    const merged: Record<string, string> = { ...bound };
    for (const [name, value] of Object.entries(given)) {
      if (!definition.labelNameSet.has(name)) {
        throw new MetricLabelsError(
          `${definition.description}: with() was given label '${name}', which is not one of its labelNames [${definition.labelNames.join(', ')}]`,
        );
      }
      if (typeof value !== 'string') {
        throw new MetricLabelsError(`${definition.description}: label '${name}' must be a string, got ${typeof value}`);
      }
      merged[name] = value;
    }
    return merged;
  }

  /** The series for these labels; throws when a label value is missing. */
  seriesFor(labels: BoundLabels, operation: string): S {
    const { labelNames } = this.definition;
    const { cacheSeries } = this;
    let key = '';
    const missing: string[] = [];
    for (const name of labelNames) {
      const value = labels[name];
      if (value === undefined) missing.push(name);
      else if (cacheSeries) key += value + labelKeySeparator;
    }
    if (missing.length > 0) {
      throw new MetricLabelsError(
        `${this.definition.description}: ${operation}() needs a value for label ${missing.map((m) => `'${m}'`).join(', ')} (labelNames [${labelNames.join(', ')}]); give it with with({ ${missing[0]}: ... })`,
      );
    }
    if (!cacheSeries) return this.factory(labels);
    let series = this.series.get(key);
    if (series === undefined) {
      series = this.factory(labels);
      this.series.set(key, series);
    }
    return series;
  }

  /** Gauge.remove: the provider drops the series, and so does the cache (a later set makes it anew). */
  remove(labels: BoundLabels): void {
    const series = this.seriesFor(labels, 'remove') as { remove?(): void };
    series.remove?.();
    let key = '';
    for (const name of this.definition.labelNames) key += (labels[name] as string) + labelKeySeparator;
    this.series.delete(key);
  }
}

function checkFinite(core: MetricCore<unknown>, operation: string, value: number): void {
  if (typeof value !== 'number' || !Number.isFinite(value)) {
    throw new MetricValueError(`${core.definition.description}: ${operation}(${String(value)}): the value must be a finite number`);
  }
}

abstract class Handle<S> {
  private series: S | undefined;

  constructor(
    protected readonly core: MetricCore<S>,
    protected readonly labels: BoundLabels,
  ) {}

  protected resolve(operation: string): S {
    if (this.series === undefined) this.series = this.core.seriesFor(this.labels, operation);
    return this.series;
  }
}

class CounterHandle extends Handle<CounterSeries> implements Counter {
  with(labels: LabelValues): Counter {
    return new CounterHandle(this.core, this.core.bind(this.labels, labels));
  }

  add(delta: number): void {
    checkFinite(this.core, 'add', delta);
    if (delta < 0) {
      throw new MetricValueError(`${this.core.definition.description}: add(${delta}): a counter only goes up; use a gauge`);
    }
    this.resolve('add').add(delta);
  }
}

class GaugeHandle extends Handle<GaugeSeries> implements Gauge {
  with(labels: LabelValues): Gauge {
    return new GaugeHandle(this.core, this.core.bind(this.labels, labels));
  }

  add(delta: number): void {
    checkFinite(this.core, 'add', delta);
    this.resolve('add').add(delta);
  }

  set(value: number): void {
    checkFinite(this.core, 'set', value);
    this.resolve('set').set(value);
  }

  remove(labels: LabelValues): void {
    (this.core as MetricCore<unknown>).remove(this.core.bind(this.labels, labels));
  }
}

class HistogramHandle extends Handle<HistogramSeries> implements Histogram {
  with(labels: LabelValues): Histogram {
    return new HistogramHandle(this.core, this.core.bind(this.labels, labels));
  }

  observe(value: number): void {
    checkFinite(this.core, 'observe', value);
    this.resolve('observe').observe(value);
  }
}

const noLabels: BoundLabels = Object.freeze({});

export function counterHandle(core: MetricCore<CounterSeries>): Counter {
  return new CounterHandle(core, noLabels);
}

export function gaugeHandle(core: MetricCore<GaugeSeries>): Gauge {
  return new GaugeHandle(core, noLabels);
}

export function histogramHandle(core: MetricCore<HistogramSeries>): Histogram {
  return new HistogramHandle(core, noLabels);
}
