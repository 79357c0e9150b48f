import { defaultChunkChars, negotiateFormat, renderChunks, renderOpenMetrics, renderText, type Family } from '../../../src/metrics/prometheus/exposition';
import { droppedDefaultMetrics, PrometheusProvider } from '../../../src/metrics/prometheus/provider';
import { createServiceMetrics } from '../../../src/metrics/service-metrics';

describe('content negotiation', () => {
  test.each([
    [undefined, 'text'],
    ['', 'text'],
    ['*/*', 'text'],
    ['text/plain', 'text'],
    ['application/json', 'text'],
    // What Prometheus 2.42 sends:
    ['application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1', 'openmetrics'],
    ['application/openmetrics-text', 'openmetrics'],
    ['application/openmetrics-text; version=0.0.1', 'openmetrics'],
    ['application/openmetrics-text; version=2.0.0', 'text'],
    ['application/openmetrics-text;q=0.3, text/plain;q=0.9', 'text'],
    ['text/plain;q=0.5, application/openmetrics-text;q=0.5', 'openmetrics'],
    ['application/openmetrics-text;q=0', 'text'],
  ])('Accept %j gives %s', (accept, format) => {
    expect(negotiateFormat(accept)).toBe(format);
  });
});

const families: Family[] = [
  { name: 'requests_total', help: 'Requests "served"\nby route', type: 'counter', values: [{ value: 3, labels: { route: '/a"b\\c' } }] },
  {
    name: 'up_gauge',
    help: 'g',
    type: 'gauge',
    values: [
      { value: Number.NaN, labels: {} },
      { value: -Infinity, labels: { x: 'y' } },
    ],
  },
  {
    name: 'lat_seconds',
    help: 'h',
    type: 'histogram',
    values: [
      { value: 1, labels: { le: 0.5 }, metricName: 'lat_seconds_bucket' },
      { value: 2, labels: { le: '+Inf' }, metricName: 'lat_seconds_bucket' },
      { value: 0.7, labels: {}, metricName: 'lat_seconds_sum' },
      { value: 2, labels: {}, metricName: 'lat_seconds_count' },
    ],
  },
];

test('classic text format', () => {
  expect(renderText(families)).toBe(
    [
      '# HELP requests_total Requests "served"\\nby route',
      '# TYPE requests_total counter',
      'requests_total{route="/a\\"b\\\\c"} 3',
      '# HELP up_gauge g',
      '# TYPE up_gauge gauge',
      'up_gauge NaN',
      'up_gauge{x="y"} -Inf',
      '# HELP lat_seconds h',
      '# TYPE lat_seconds histogram',
      'lat_seconds_bucket{le="0.5"} 1',
      'lat_seconds_bucket{le="+Inf"} 2',
      'lat_seconds_sum 0.7',
      'lat_seconds_count 2',
      '',
    ].join('\n'),
  );
});

test('OpenMetrics: counter family without _total, samples with it, # EOF', () => {
  expect(renderOpenMetrics(families)).toBe(
    [
      '# TYPE requests counter',
      '# HELP requests Requests \\"served\\"\\nby route',
      'requests_total{route="/a\\"b\\\\c"} 3',
      '# TYPE up_gauge gauge',
      '# HELP up_gauge g',
      'up_gauge NaN',
      'up_gauge{x="y"} -Inf',
      '# TYPE lat_seconds histogram',
      '# HELP lat_seconds h',
      'lat_seconds_bucket{le="0.5"} 1',
      'lat_seconds_bucket{le="+Inf"} 2',
      'lat_seconds_sum 0.7',
      'lat_seconds_count 2',
      '# EOF',
      '',
    ].join('\n'),
  );
});

describe('the exposition in pieces (what /metrics sends)', () => {
  const many: Family[] = [
    ...families,
    {
      name: 'bench_series_total',
      help: 'many',
      type: 'counter',
      values: Array.from({ length: 5000 }, (_, i) => ({ value: i, labels: { component: `component${Math.floor(i / 100)}`, index: String(i % 100) } })),
    },
  ];

  test.each(['text', 'openmetrics'] as const)('%s: the pieces joined are the whole body, whatever the piece size', (format) => {
    const whole = format === 'text' ? renderText(many) : renderOpenMetrics(many);
    expect(whole).toContain('bench_series_total{component="component49",index="99"} 4999\n');
    for (const chunkChars of [1, 100, 4096, defaultChunkChars]) {
      const pieces = [...renderChunks(many, format, chunkChars)];
      expect(pieces.join('')).toBe(whole);
      // Whole lines only, and no piece much above the size asked for (one line at most).
      for (const piece of pieces) {
        expect(piece.endsWith('\n')).toBe(true);
        expect(piece.length).toBeLessThan(chunkChars + 200);
      }
    }
    expect([...renderChunks(many, format, 4096)].length).toBeGreaterThan(10);
  });

  test('an empty registry: nothing in the text format, only # EOF in OpenMetrics', () => {
    expect([...renderChunks([], 'text')]).toEqual([]);
    expect([...renderChunks([], 'openmetrics')].join('')).toBe('# EOF\n');
  });

  test('the provider: renderChunks and render give the same body', async () => {
    const provider = new PrometheusProvider({ defaultMetrics: false });
    const counter = provider.newCounter({ name: 'series', help: 'h', labelNames: ['component', 'index'] });
    for (let i = 0; i < 3000; i += 1)
      counter
        .with({ component: `c${Math.floor(i / 100)}` })
        .with({ index: String(i % 100) })
        .add(i + 1);
    const histogram = provider.newHistogram({ name: 'lat_seconds', help: 'h', labelNames: ['route'] });
    histogram.with({ route: '/a' }).observe(0.2);
    for (const accept of [undefined, 'application/openmetrics-text']) {
      const whole = await provider.render(accept);
      const pieces = await provider.renderChunks(accept);
      expect(pieces.contentType).toBe(whole.contentType);
      expect([...pieces.chunks].join('')).toBe(whole.body);
    }
    expect((await provider.render(undefined)).body).toContain('series_total{component="c29",index="99"} 3000\n');
  });
});

describe('PrometheusProvider.render', () => {
  test('service metrics and Node runtime metrics, in both formats, as often as asked', async () => {
    const provider = new PrometheusProvider();
    const metrics = createServiceMetrics(provider, '2.5.1');
    metrics.loggingEntriesChecked.with({ level: 'info' }).add(2);
    metrics.requests.with({ route: '/healthz', code: '200' }).add(1);

    const openMetricsAccept = 'application/openmetrics-text;version=1.0.0';
    for (let round = 0; round < 2; round += 1) {
      const text = await provider.render(undefined);
      expect(text.contentType).toBe('text/plain; version=0.0.4; charset=utf-8');
      expect(text.body).toContain('\nfabric_version{version="2.5.1"} 1\n');
      expect(text.body).toContain('# TYPE logging_entries_checked_total counter\nlogging_entries_checked_total{level="info"} 2\n');
      expect(text.body).toContain('operations_requests_total{route="/healthz",code="200"} 1\n');
      expect(text.body).toContain('# TYPE process_cpu_seconds_total counter\n');
      expect(text.body).toMatch(/\nnodejs_heap_size_used_bytes \d+/);
      for (const dropped of droppedDefaultMetrics) expect(text.body).not.toContain(`${dropped} `);

      const om = await provider.render(openMetricsAccept);
      expect(om.contentType).toBe('application/openmetrics-text; version=1.0.0; charset=utf-8');
      expect(om.body).toContain('# TYPE logging_entries_checked counter\n# HELP logging_entries_checked Number of log entries checked');
      expect(om.body).toContain('\nlogging_entries_checked_total{level="info"} 2\n');
      expect(om.body).toContain('# TYPE process_cpu_seconds counter\n');
      expect(om.body.endsWith('\n# EOF\n')).toBe(true);
    }
  });
});
