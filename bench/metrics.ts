/**
 * Benchmark (not a test): metric updates per second through each provider with labels, the
 * time to render /metrics with 10,000 series, and the event-loop delay while the StatsD
 * provider flushes 10,000 series to the real daemon (UDP and TCP).
 *
 * Run:
 *
 *   cd /work/main && node_modules/.bin/tsc -p tsconfig.json --outDir .tmp/bench-build \
 *     && $(scripts/node24.sh) .tmp/bench-build/bench/metrics.js [--seconds 1]
 */
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { DisabledProvider } from '../src/metrics/disabled/provider';
import { PrometheusProvider } from '../src/metrics/prometheus/provider';
import { createServiceMetrics } from '../src/metrics/service-metrics';
import { StatsdAggregator } from '../src/metrics/statsd/aggregator';
import { StatsdProvider } from '../src/metrics/statsd/provider';
import { StatsdMetricsSystem } from '../src/metrics/statsd/system';
import type { MetricsProvider } from '../src/metrics/types';
import type { Logger, LoggerFactory } from '../src/logging/types';
import { StatsdDaemon } from '../test/support/statsd-daemon';

const seconds = Number(process.argv[process.argv.indexOf('--seconds') + 1] ?? '') || 1;

const quietLogger: Logger = {
  name: 'bench',
  payload: () => undefined,
  debug: () => undefined,
  info: () => undefined,
  warn: (msg) => console.error(`  (warn) ${msg}`),
  error: (msg) => console.error(`  (error) ${msg}`),
  isEnabled: () => false,
};
const loggers: LoggerFactory = { getLogger: () => quietLogger };

function format(n: number): string {
  return Math.round(n).toLocaleString('en-US');
}

/** Runs `step(i)` in batches for about `seconds`; returns calls per second. */
function rate(step: (i: number) => void): number {
  const batch = 10_000;
  let calls = 0;
  const start = performance.now();
  const end = start + seconds * 1000;
  while (performance.now() < end) {
    for (let i = 0; i < batch; i += 1) step(calls + i);
    calls += batch;
  }
  return calls / ((performance.now() - start) / 1000);
}

const routes = ['/logspec', '/healthz', '/version', '/metrics'];
const codes = ['200', '204', '400', '401', '404', '503'];
const components = Array.from({ length: 20 }, (_, i) => `component${i}`);

function updates(name: string, provider: MetricsProvider): void {
  const requests = provider.newCounter({
    namespace: 'bench',
    name: 'requests',
    help: 'h',
    labelNames: ['route', 'code'],
    statsdFormat: '%{#fqname}.%{route}.%{code}',
  });
  const duration = provider.newHistogram({
    namespace: 'bench',
    name: 'duration_seconds',
    help: 'h',
    labelNames: ['component'],
    statsdFormat: '%{#fqname}.%{component}',
  });
  const level = provider.newGauge({ namespace: 'bench', name: 'level', help: 'h', labelNames: ['component'], statsdFormat: '%{#fqname}.%{component}' });
  const cached = requests.with({ route: '/healthz', code: '200' });

  const rows: [string, number][] = [
    ['counter add, handle kept', rate(() => cached.add(1))],
    ['counter with({route, code}).add', rate((i) => requests.with({ route: routes[i % 4] ?? '', code: codes[i % 6] ?? '' }).add(1))],
    ['histogram with({component}).observe', rate((i) => duration.with({ component: components[i % 20] ?? '' }).observe((i % 100) / 1000))],
    ['gauge with({component}).set', rate((i) => level.with({ component: components[i % 20] ?? '' }).set(i))],
  ];
  for (const [what, perSecond] of rows) console.log(`  ${name.padEnd(10)} ${what.padEnd(38)} ${format(perSecond).padStart(12)} /s`);
}

async function renderTimes(): Promise<void> {
  const provider = new PrometheusProvider();
  createServiceMetrics(provider, '2.5.1');
  const series = provider.newGauge({ namespace: 'bench', name: 'series', help: 'h', labelNames: ['channel', 'peer'] });
  for (let i = 0; i < 10_000; i += 1) series.with({ channel: `channel${i % 100}`, peer: `peer${Math.floor(i / 100)}` }).set(i);
  for (const [label, accept] of [
    ['text 0.0.4', undefined],
    ['OpenMetrics', 'application/openmetrics-text; version=1.0.0'],
  ] as const) {
    await provider.render(accept);
    const times: number[] = [];
    let bytes = 0;
    for (let i = 0; i < 20; i += 1) {
      const start = performance.now();
      const { body } = await provider.render(accept);
      times.push(performance.now() - start);
      bytes = Buffer.byteLength(body);
    }
    times.sort((a, b) => a - b);
    console.log(
      `  ${label.padEnd(12)} median ${times[10]?.toFixed(1)} ms, max ${times[19]?.toFixed(1)} ms, ${format(bytes / 1024)} KiB (10,000 series + service and Node metrics)`,
    );
  }
}

async function flushDelay(network: 'udp' | 'tcp'): Promise<void> {
  const daemon = await StatsdDaemon.start({ network, flushIntervalMs: 500 });
  const writeIntervalMs = 200;
  const system = new StatsdMetricsSystem({ network, host: daemon.host, port: daemon.port, writeIntervalMs, prefix: '', loggers });
  try {
    const gauge = system.provider.newGauge({ namespace: 'bench', name: 'series', help: 'h', labelNames: ['n'], statsdFormat: '%{#fqname}.%{n}' });
    for (let i = 0; i < 10_000; i += 1) gauge.with({ n: `s${i}` }).set(i);

    const idle = monitorEventLoopDelay({ resolution: 1 });
    idle.enable();
    await new Promise((r) => setTimeout(r, writeIntervalMs * 5));
    idle.disable();

    await system.start();
    await system.opened();
    const flushTimes: number[] = [];
    const flush = system.flush.bind(system);
    system.flush = () => {
      const start = performance.now();
      flush();
      flushTimes.push(performance.now() - start);
    };
    const busy = monitorEventLoopDelay({ resolution: 1 });
    busy.enable();
    await new Promise((r) => setTimeout(r, writeIntervalMs * 10 + 50));
    busy.disable();
    const stats = system.stats();
    const ms = (ns: number): string => (ns / 1e6).toFixed(1);
    flushTimes.sort((a, b) => a - b);
    console.log(
      `  ${network}: ${flushTimes.length} flushes of 10,000 gauges; flush() ${flushTimes[Math.floor(flushTimes.length / 2)]?.toFixed(1)} ms median, ${flushTimes.at(-1)?.toFixed(1)} ms max; ${format(stats.sentPackets / Math.max(1, stats.flushes))} packets per flush; dropped ${stats.droppedLines}`,
    );
    console.log(
      `       event-loop delay while flushing: p50 ${ms(busy.percentile(50))} ms, p99 ${ms(busy.percentile(99))} ms, max ${ms(busy.max)} ms (idle: p99 ${ms(idle.percentile(99))} ms, max ${ms(idle.max)} ms)`,
    );
  } finally {
    await system.stop();
    await daemon.cleanup();
  }
}

async function main(): Promise<void> {
  console.log(`Node ${process.version}, ${seconds} s per rate figure`);
  console.log('\nMetric updates per second, with labels:');
  updates('disabled', new DisabledProvider());
  updates('prometheus', new PrometheusProvider({ defaultMetrics: false }));
  updates('statsd', new StatsdProvider(new StatsdAggregator({ prefix: '' })));

  console.log('\nRendering /metrics (PrometheusProvider.render) with 10,000 series:');
  await renderTimes();

  console.log('\nStatsD provider flushing 10,000 series to the real daemon every 200 ms:');
  await flushDelay('udp');
  await flushDelay('tcp');
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
