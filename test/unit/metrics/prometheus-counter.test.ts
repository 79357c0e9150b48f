import { Counter as PromCounter } from 'prom-client';
import { PrometheusProvider } from '../../../src/metrics/prometheus/provider';

/**
 * The prometheus provider's counters sum additions per series and give prom-client the sums when
 * the metric is read: every addition is in every read, once.
 */
describe('prometheus counters', () => {
  const options = { namespace: 'http', name: 'requests', help: 'h', labelNames: ['route', 'code'] };

  afterEach(() => jest.restoreAllMocks());

  test('every addition through a kept handle is in the next read, and only once across reads', async () => {
    const provider = new PrometheusProvider({ defaultMetrics: false });
    const counter = provider.newCounter(options);
    const ok = counter.with({ route: '/healthz', code: '200' });
    for (let i = 0; i < 5; i += 1) ok.add(1);
    counter.with({ route: '/healthz', code: '503' }).add(2);
    let body = (await provider.render(undefined)).body;
    expect(body).toContain('http_requests_total{route="/healthz",code="200"} 5');
    expect(body).toContain('http_requests_total{route="/healthz",code="503"} 2');
    ok.add(3);
    body = (await provider.render(undefined)).body;
    expect(body).toContain('http_requests_total{route="/healthz",code="200"} 8');
    expect(body).toContain('http_requests_total{route="/healthz",code="503"} 2');
    // prom-client's own reads see them too.
    ok.add(1);
    const family = await provider.registry.getSingleMetric('http_requests_total')?.get();
    expect(family?.values.find((v) => v.labels.code === '200')?.value).toBe(9);
  });

  test('an addition of 0 makes the series, as prom-client does', async () => {
    const provider = new PrometheusProvider({ defaultMetrics: false });
    provider.newCounter(options).with({ route: '/version', code: '200' }).add(0);
    expect((await provider.render(undefined)).body).toContain('http_requests_total{route="/version",code="200"} 0');
  });

  test('a series per addition (with() each time) is handed over every 1024 series, not kept until a read', async () => {
    const provider = new PrometheusProvider({ defaultMetrics: false });
    const counter = provider.newCounter(options);
    const inc = jest.spyOn(provider.registry.getSingleMetric('http_requests_total') as PromCounter, 'inc');
    for (let i = 0; i < 1023; i += 1) counter.with({ route: '/healthz', code: '200' }).add(1);
    expect(inc).not.toHaveBeenCalled();
    counter.with({ route: '/healthz', code: '200' }).add(1);
    expect(inc).toHaveBeenCalledTimes(1024);
    for (let i = 0; i < 10; i += 1) counter.with({ route: '/healthz', code: '200' }).add(1);
    expect((await provider.render(undefined)).body).toContain('http_requests_total{route="/healthz",code="200"} 1034');
    expect(inc).toHaveBeenCalledTimes(1034);
  });
});
