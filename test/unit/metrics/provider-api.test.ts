import { MetricLabelsError, MetricOptionsError, MetricValueError } from '../../../src/errors';
import { DisabledProvider } from '../../../src/metrics/disabled/provider';
import { PrometheusProvider } from '../../../src/metrics/prometheus/provider';
import { StatsdAggregator } from '../../../src/metrics/statsd/aggregator';
import { StatsdProvider } from '../../../src/metrics/statsd/provider';
import type { MetricsProvider } from '../../../src/metrics/types';

const providers: [string, () => MetricsProvider][] = [
  ['disabled', () => new DisabledProvider()],
  ['prometheus', () => new PrometheusProvider({ defaultMetrics: false })],
  ['statsd', () => new StatsdProvider(new StatsdAggregator({ prefix: '' }))],
];

describe.each(providers)('provider API, %s', (_name, make) => {
  let provider: MetricsProvider;
  beforeEach(() => {
    provider = make();
  });

  describe('options checked at creation', () => {
    test.each([
      [{ name: '', help: 'h' }, /counter '': name is required/],
      [{ name: 'a-b', help: 'h' }, /counter 'a-b': name 'a-b' is not a valid metric name part/],
      [{ namespace: '9ns', name: 'n', help: 'h' }, /counter '9ns_n': namespace '9ns'/],
      [{ subsystem: 's.t', name: 'n', help: 'h' }, /counter 's\.t_n': subsystem 's\.t'/],
      [{ name: 'n', help: '' }, /counter 'n': help is required/],
      [{ name: 'n', help: 'h', labelNames: ['ok', 'not-ok'] }, /counter 'n': label name "not-ok" is not valid/],
      [{ name: 'n', help: 'h', labelNames: ['__x'] }, /counter 'n': label name '__x' is reserved/],
      [{ name: 'n', help: 'h', labelNames: ['a', 'a'] }, /counter 'n': label name 'a' is listed twice/],
      [
        { namespace: 'ns', name: 'n', help: 'h', labelNames: ['channel'], statsdFormat: '%{#fqname}.%{chanel}' },
        /counter 'ns_n': statsdFormat '%\{#fqname\}\.%\{chanel\}' references label 'chanel', which is not one of its labelNames \[channel\]/,
      ],
    ])('%j', (options, message) => {
      expect(() => provider.newCounter(options)).toThrow(MetricOptionsError);
      expect(() => provider.newCounter(options)).toThrow(message);
    });

    test('histogram buckets must increase; le is reserved', () => {
      expect(() => provider.newHistogram({ name: 'h', help: 'h', buckets: [1, 0.5] })).toThrow(/histogram 'h': buckets must increase strictly; 0.5 follows 1/);
      expect(() => provider.newHistogram({ name: 'h', help: 'h', buckets: [] })).toThrow(/buckets must not be empty/);
      expect(() => provider.newHistogram({ name: 'h', help: 'h', labelNames: ['le'] })).toThrow(/'le' is reserved/);
    });
  });

  describe('registering the same name again', () => {
    test('with the same options returns the same metric', () => {
      const first = provider.newCounter({ namespace: 'a', name: 'b', help: 'h', labelNames: ['x', 'y'] });
      const second = provider.newCounter({ namespace: 'a', name: 'b', help: 'h', labelNames: ['y', 'x'] });
      expect(second).toBe(first);
    });

    test('with other options says what differs', () => {
      provider.newCounter({ namespace: 'a', name: 'b', help: 'h', labelNames: ['x'] });
      expect(() => provider.newCounter({ namespace: 'a', name: 'b', help: 'h', labelNames: ['x', 'y'] })).toThrow(
        "counter 'a_b' is already registered with other options (registered vs now: labelNames [x] vs [x, y])",
      );
      expect(() => provider.newGauge({ namespace: 'a', name: 'b', help: 'other' })).toThrow(
        /gauge 'a_b' is already registered with other options \(registered vs now: type counter vs gauge; help "h" vs "other"; labelNames \[x\] vs \[\]\)/,
      );
      expect(() => provider.newCounter({ name: 'a_b', help: 'h', labelNames: ['x'] })).toThrow(/namespace\/subsystem\/name 'a'\/''\/'b' vs ''\/''\/'a_b'/);
    });
  });

  describe('labels', () => {
    test('an unknown label name in with() names the metric and the label', () => {
      const counter = provider.newCounter({ namespace: 'ns', name: 'c', help: 'h', labelNames: ['route', 'code'] });
      expect(() => counter.with({ rout: '/x' })).toThrow(MetricLabelsError);
      expect(() => counter.with({ rout: '/x' })).toThrow("counter 'ns_c': with() was given label 'rout', which is not one of its labelNames [route, code]");
    });

    test('a missing label value is refused when a value is recorded', () => {
      const counter = provider.newCounter({ namespace: 'ns', name: 'c', help: 'h', labelNames: ['route', 'code'] });
      const partial = counter.with({ route: '/x' });
      expect(() => partial.add(1)).toThrow(MetricLabelsError);
      expect(() => partial.add(1)).toThrow(/counter 'ns_c': add\(\) needs a value for label 'code' \(labelNames \[route, code\]\)/);
      expect(() => counter.add(1)).toThrow(/needs a value for label 'route', 'code'/);
      expect(() => partial.with({ code: '200' }).add(1)).not.toThrow();
    });

    test('label values must be strings', () => {
      const gauge = provider.newGauge({ name: 'g', help: 'h', labelNames: ['n'] });
      expect(() => gauge.with({ n: 5 as unknown as string })).toThrow(/gauge 'g': label 'n' must be a string, got number/);
    });
  });

  describe('values', () => {
    test('a counter only goes up; values must be finite', () => {
      const counter = provider.newCounter({ name: 'c', help: 'h' });
      expect(() => counter.add(-1)).toThrow(/counter 'c': add\(-1\): a counter only goes up/);
      expect(() => counter.add(Number.NaN)).toThrow(/counter 'c': add\(NaN\): the value must be a finite number/);
      // A wrong value is a MetricValueError, not a label error.
      expect(() => counter.add(-1)).toThrow(MetricValueError);
      expect(() => counter.add(Number.NaN)).toThrow(MetricValueError);
      expect(() => counter.add(-1)).not.toThrow(MetricLabelsError);
      const gauge = provider.newGauge({ name: 'g', help: 'h' });
      expect(() => gauge.set(Infinity)).toThrow(/gauge 'g': set\(Infinity\)/);
      expect(() => gauge.add(-3)).not.toThrow();
      const histogram = provider.newHistogram({ name: 'h', help: 'h' });
      expect(() => histogram.observe(Number.NaN)).toThrow(/histogram 'h': observe\(NaN\)/);
    });
  });
});

describe('prometheus registries', () => {
  test('two providers in one process do not collide', async () => {
    const one = new PrometheusProvider({ defaultMetrics: false });
    const two = new PrometheusProvider({ defaultMetrics: false });
    one.newCounter({ name: 'same', help: 'h' }).add(2);
    two.newCounter({ name: 'same', help: 'h' }).add(5);
    expect((await one.render(undefined)).body).toContain('same_total 2\n');
    expect((await two.render(undefined)).body).toContain('same_total 5\n');
  });

  test('a counter x and a gauge x_total would expose the same name', () => {
    const provider = new PrometheusProvider({ defaultMetrics: false });
    provider.newCounter({ name: 'x', help: 'h' });
    expect(() => provider.newGauge({ name: 'x_total', help: 'h' })).toThrow(
      "gauge 'x_total': the Prometheus name 'x_total' is already taken by another metric in this registry",
    );
  });
});
