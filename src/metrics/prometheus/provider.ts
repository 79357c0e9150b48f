import { Counter as PromCounter, Gauge as PromGauge, Histogram as PromHistogram, Registry, collectDefaultMetrics } from 'prom-client';
import { MetricOptionsError } from '../../errors';
import { MetricTable, defineMetric, type MetricDefinition } from '../definition';
import {
  MetricCore,
  counterHandle,
  gaugeHandle,
  histogramHandle,
  type BoundLabels,
  type CounterSeries,
  type GaugeSeries,
  type HistogramSeries,
} from '../handles';
import type { Counter, Gauge, Histogram, HistogramOptions, MetricOptions, MetricsProvider, ScrapeEndpoint } from '../types';
import { contentTypes, negotiateFormat, render, renderChunks, type Family } from './exposition';

/**
 * prom-client's default metrics that `promtool check metrics` rejects (gauges named
 * `_total`). The same numbers are in `nodejs_active_handles`, `nodejs_active_requests`
 * and `nodejs_active_resources`, by type.
 */
export const droppedDefaultMetrics: readonly string[] = ['nodejs_active_handles_total', 'nodejs_active_requests_total', 'nodejs_active_resources_total'];

/**
 * The name a counter is exposed under: Prometheus' `_total` convention (which promtool
 * enforces, and which Prometheus stores anyway when it scrapes OpenMetrics).
 */
function counterExpositionName(fqName: string): string {
  return fqName.endsWith('_total') ? fqName : `${fqName}_total`;
}

export interface PrometheusProviderOptions {
  /** Node process and runtime metrics (prom-client's defaults); default true. */
  defaultMetrics?: boolean;
}

/**
 * Provider `prometheus`: a prom-client Registry of its own (never the global one, so two
 * systems in one process do not collide), served by `scrape`.
 */
export class PrometheusProvider implements MetricsProvider {
  readonly registry = new Registry();
  private readonly table = new MetricTable();
  readonly scrape: ScrapeEndpoint = { render: (accept) => this.render(accept), renderChunks: (accept) => this.renderChunks(accept) };

  constructor(options: PrometheusProviderOptions = {}) {
    if (options.defaultMetrics ?? true) {
      collectDefaultMetrics({ register: this.registry });
      for (const name of droppedDefaultMetrics) this.registry.removeSingleMetric(name);
    }
  }

  // A series calls the metric with its labels rather than keeping prom-client's `labels()` child:
  // the child's methods are the same calls bound to the same labels (no work saved per call), and
  // it holds one bound function per method for every series (a gauge's five), bytes per series
  // that count at 100,000 series (issue 20, item 5). Nor are the series cached (MetricCore's
  // `cacheSeries` false): prom-client's own map holds each series' state, and a cache of key,
  // series object and closure beside it doubled the heap per series (492 -> 240 bytes).
  newCounter(options: MetricOptions): Counter {
    const definition = defineMetric('counter', options);
    return this.table.getOrCreate(definition, () => {
      const exposedName = counterExpositionName(definition.fqName);
      const pending = new PendingCounts((collect) =>
        this.register(
          definition,
          exposedName,
          (registers) => new PromCounter({ name: exposedName, help: definition.help, labelNames: definition.labelNames, registers, collect }),
        ),
      );
      return counterHandle(new MetricCore<CounterSeries>(definition, (labels: BoundLabels) => new PendingCount(labels, pending), false));
    });
  }

  newGauge(options: MetricOptions): Gauge {
    const definition = defineMetric('gauge', options);
    return this.table.getOrCreate(definition, () => {
      const gauge = this.register(
        definition,
        definition.fqName,
        (registers) => new PromGauge({ name: definition.fqName, help: definition.help, labelNames: definition.labelNames, registers }),
      );
      return gaugeHandle(
        new MetricCore<GaugeSeries>(
          definition,
          (labels: BoundLabels) => ({
            add: (delta) => gauge.inc(labels, delta),
            set: (value) => gauge.set(labels, value),
            remove: () => gauge.remove(labels),
          }),
          false,
        ),
      );
    });
  }

  newHistogram(options: HistogramOptions): Histogram {
    const definition = defineMetric('histogram', options);
    return this.table.getOrCreate(definition, () => {
      const histogram = this.register(
        definition,
        definition.fqName,
        (registers) =>
          new PromHistogram({
            name: definition.fqName,
            help: definition.help,
            labelNames: definition.labelNames,
            buckets: [...definition.buckets],
            registers,
          }),
      );
      return histogramHandle(
        new MetricCore<HistogramSeries>(definition, (labels: BoundLabels) => ({ observe: (value) => histogram.observe(labels, value) }), false),
      );
    });
  }

  async render(accept: string | undefined): Promise<{ contentType: string; body: string }> {
    const format = negotiateFormat(accept);
    return render(await this.collect(), format);
  }

  async renderChunks(accept: string | undefined): Promise<{ contentType: string; chunks: Iterable<string> }> {
    const format = negotiateFormat(accept);
    return { contentType: contentTypes[format], chunks: renderChunks(await this.collect(), format) };
  }

  private collect(): Promise<Family[]> {
    return Promise.all(this.registry.getMetricsAsArray().map((metric) => collect(metric)));
  }

  /** Names are checked across our metrics and prom-client's defaults (a counter `x` and a gauge `x_total` collide). */
  private register<M>(definition: MetricDefinition, exposedName: string, create: (registers: Registry[]) => M): M {
    if (this.registry.getSingleMetric(exposedName) !== undefined) {
      throw new MetricOptionsError(`${definition.description}: the Prometheus name '${exposedName}' is already taken by another metric in this registry`);
    }
    return create([this.registry]);
  }
}

/** Counts waiting in a counter's series at most: past this many, they go to prom-client at once. */
const maxPendingSeries = 1024;

/**
 * A counter's additions since it was last read. prom-client's `inc(labels, delta)` builds the text
 * of the labels to find the series on every call (about half of what the requests metric costs
 * every answer: docs/performance.md); here an addition to a series is a sum, and the sums go to
 * prom-client, one `inc` per series, when the metric is read (its `collect`). A series waits in the
 * list at most once, and the list holds at most maxPendingSeries: code that makes a series per
 * addition (`with(...).add()` each time) hands them over every maxPendingSeries additions.
 */
class PendingCounts {
  private readonly metric: PromCounter;
  private readonly waiting: PendingCount[] = [];

  /** `create` makes the prom-client counter with `collect`, which prom-client calls before every read of it (a scrape, `get()`, `metrics()`). */
  constructor(create: (collect: () => void) => PromCounter) {
    this.metric = create(() => this.report());
  }

  wait(series: PendingCount): void {
    this.waiting.push(series);
    if (this.waiting.length >= maxPendingSeries) this.report();
  }

  /** Gives prom-client the sums added since the last read, so that what it reports is every addition. */
  report(): void {
    const { metric, waiting } = this;
    for (const series of waiting) {
      metric.inc(series.labels, series.count);
      series.count = 0;
      series.waiting = false;
    }
    waiting.length = 0;
  }
}

/** One counter series (a handle's): what was added since prom-client last had it. */
class PendingCount implements CounterSeries {
  count = 0;
  /** In its counter's list (a count is waiting). */
  waiting = false;

  constructor(
    readonly labels: BoundLabels,
    private readonly pending: PendingCounts,
  ) {}

  add(delta: number): void {
    this.count += delta;
    if (!this.waiting) {
      this.waiting = true;
      this.pending.wait(this);
    }
  }
}

interface Collectable {
  /** The family, or a promise of it. */
  get(): unknown;
}

async function collect(metric: unknown): Promise<Family> {
  const family = (await (metric as Collectable).get()) as Family;
  return { name: family.name, help: family.help, type: String(family.type), values: family.values ?? [] };
}
