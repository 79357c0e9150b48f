import { MetricTable, defineMetric } from '../definition';
import { MetricCore, counterHandle, gaugeHandle, histogramHandle, type CounterSeries, type GaugeSeries, type HistogramSeries } from '../handles';
import type { Counter, Gauge, Histogram, HistogramOptions, MetricOptions, MetricsProvider } from '../types';
import type { StatsdAggregator } from './aggregator';

/**
 * Provider `statsd`: every series is a cell of the aggregator, under the bucket name its
 * statsdFormat gives (label sets that give the same name share the cell, as in Fabric).
 */
export class StatsdProvider implements MetricsProvider {
  private readonly table = new MetricTable();

  constructor(private readonly aggregator: StatsdAggregator) {}

  newCounter(options: MetricOptions): Counter {
    const definition = defineMetric('counter', options);
    return this.table.getOrCreate(definition, () =>
      counterHandle(new MetricCore<CounterSeries>(definition, (labels) => this.aggregator.counter(definition.statsdName.format(labels)))),
    );
  }

  newGauge(options: MetricOptions): Gauge {
    const definition = defineMetric('gauge', options);
    return this.table.getOrCreate(definition, () =>
      gaugeHandle(
        new MetricCore<GaugeSeries>(definition, (labels) => {
          const bucket = definition.statsdName.format(labels);
          const cell = this.aggregator.gauge(bucket);
          // A removed gauge is no longer resent at every flush (the aggregator resends every level it holds).
          return { add: (delta) => cell.add(delta), set: (value) => cell.set(value), remove: () => this.aggregator.removeGauge(bucket) };
        }),
      ),
    );
  }

  newHistogram(options: HistogramOptions): Histogram {
    const definition = defineMetric('histogram', options);
    return this.table.getOrCreate(definition, () =>
      histogramHandle(new MetricCore<HistogramSeries>(definition, (labels) => this.aggregator.timing(definition.statsdName.format(labels)))),
    );
  }
}
