import { MetricLabelsError } from '../../../src/errors';
import { DisabledProvider } from '../../../src/metrics/disabled/provider';
import { PrometheusProvider } from '../../../src/metrics/prometheus/provider';
import { StatsdAggregator } from '../../../src/metrics/statsd/aggregator';
import { StatsdProvider } from '../../../src/metrics/statsd/provider';

/** Gauge.remove: a series that is no longer exported (a fleet node that left), on every provider. */
describe('Gauge.remove', () => {
  const options = { namespace: 'fleet', name: 'node_up', help: 'h', labelNames: ['node', 'group'], statsdFormat: '%{#fqname}.%{node}.%{group}' };

  test('prometheus: the series is gone from the exposition, the others stay; a later set makes it again', async () => {
    const provider = new PrometheusProvider({ defaultMetrics: false });
    const gauge = provider.newGauge(options);
    gauge.with({ node: 'a', group: 'g' }).set(1);
    gauge.with({ node: 'b', group: 'g' }).set(0);
    gauge.with({ group: 'g' }).remove?.({ node: 'a' });
    let body = (await provider.render(undefined)).body;
    expect(body).not.toContain('node="a"');
    expect(body).toContain('fleet_node_up{node="b",group="g"} 0');
    gauge.with({ node: 'a', group: 'g' }).set(1);
    body = (await provider.render(undefined)).body;
    expect(body).toContain('fleet_node_up{node="a",group="g"} 1');
  });

  test('statsd: a removed gauge is no longer resent at each flush', () => {
    const aggregator = new StatsdAggregator({ prefix: '' });
    const gauge = new StatsdProvider(aggregator).newGauge(options);
    gauge.with({ node: 'a', group: 'g' }).set(1);
    gauge.with({ node: 'b', group: 'g' }).set(1);
    expect(aggregator.drain().entries).toEqual(['fleet.node_up.a.g:1|g', 'fleet.node_up.b.g:1|g']);
    gauge.remove?.({ node: 'a', group: 'g' });
    expect(aggregator.drain().entries).toEqual(['fleet.node_up.b.g:1|g']);
  });

  test('every label is needed, as for set; the disabled provider accepts it', () => {
    const gauge = new PrometheusProvider({ defaultMetrics: false }).newGauge(options);
    expect(() => gauge.remove?.({ node: 'a' })).toThrow(MetricLabelsError);
    expect(() => new DisabledProvider().newGauge(options).remove?.({ node: 'a', group: 'g' })).not.toThrow();
  });
});
