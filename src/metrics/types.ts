/**
 * The provider API that fabric-ops and the code embedding it use to create metrics,
 * shaped like Fabric's common/metrics. The same calls work whatever provider is
 * configured (prometheus, statsd, disabled).
 */

export interface MetricOptions {
  namespace?: string;
  subsystem?: string;
  name: string;
  help: string;
  /** Names of the labels `with()` must be given values for. */
  labelNames?: readonly string[];
  /** StatsD bucket name template; default `%{#fqname}`. May reference `%{#namespace}`, `%{#subsystem}`, `%{#name}`, `%{#fqname}` and `%{<label>}`. */
  statsdFormat?: string;
}

export interface HistogramOptions extends MetricOptions {
  /** Upper bounds, in the unit observed (seconds for durations). */
  buckets?: readonly number[];
}

export type LabelValues = Readonly<Record<string, string>>;

export interface Counter {
  with(labels: LabelValues): Counter;
  add(delta: number): void;
}

export interface Gauge {
  with(labels: LabelValues): Gauge;
  add(delta: number): void;
  set(value: number): void;
  /**
   * Drops the series of these label values (with those already bound, every labelName): it is no
   * longer exported (a fleet node that left). Optional, so that a Gauge written elsewhere still fits.
   */
  remove?(labels: LabelValues): void;
}

export interface Histogram {
  with(labels: LabelValues): Histogram;
  observe(value: number): void;
}

export interface MetricsProvider {
  newCounter(options: MetricOptions): Counter;
  newGauge(options: MetricOptions): Gauge;
  newHistogram(options: HistogramOptions): Histogram;
}

/** What `/metrics` serves when the provider is prometheus. */
export interface ScrapeEndpoint {
  /** Renders the exposition for a request's Accept header (classic text or OpenMetrics). */
  render(accept: string | undefined): Promise<{ contentType: string; body: string }>;
  /**
   * The same body as consecutive pieces, made as they are read: what `/metrics` sends, so
   * that a scrape of a large registry never holds the whole body as one string.
   */
  renderChunks(accept: string | undefined): Promise<{ contentType: string; chunks: Iterable<string> }>;
}

/** A configured provider with its lifecycle. */
export interface MetricsSystem {
  readonly provider: MetricsProvider;
  /** Non-null only for prometheus. */
  readonly scrape: ScrapeEndpoint | null;
  start(): Promise<void>;
  /** Stops timers and, for statsd, sends a final flush. */
  stop(): Promise<void>;
}
