import { MetricTable, defineMetric } from '../definition';
import { MetricCore, counterHandle, gaugeHandle, histogramHandle } from '../handles';
import type { Counter, Gauge, HistogramOptions, Histogram, MetricOptions, MetricsProvider } from '../types';

const discard = { add: (): void => undefined, set: (): void => undefined, observe: (): void => undefined };

/**
 * Provider `disabled`: values go nowhere, but options, labels and values are checked as
 * with any other provider, so code that works here works when metrics are turned on.
 */
export class DisabledProvider implements MetricsProvider {
  private readonly table = new MetricTable();

  newCounter(options: MetricOptions): Counter {
    const definition = defineMetric('counter', options);
    return this.table.getOrCreate(definition, () => counterHandle(new MetricCore(definition, () => discard, false)));
  }

  newGauge(options: MetricOptions): Gauge {
    const definition = defineMetric('gauge', options);
    return this.table.getOrCreate(definition, () => gaugeHandle(new MetricCore(definition, () => discard, false)));
  }

  newHistogram(options: HistogramOptions): Histogram {
    const definition = defineMetric('histogram', options);
    return this.table.getOrCreate(definition, () => histogramHandle(new MetricCore(definition, () => discard, false)));
  }
}
