import net, { type AddressInfo } from 'node:net';
import { createMetricsSystem, type MetricsSystemDeps } from '../../../src/metrics/create';
import { createServiceMetrics } from '../../../src/metrics/service-metrics';
import { StatsdMetricsSystem } from '../../../src/metrics/statsd/system';
import type { NormalisedConfig } from '../../../src/config/types';
import { CaptureLoggers } from '../../support/capture-logger';
import { testConfig } from '../../support/config';
import { freePort } from '../../support/ports';
import { StatsdDaemon, type StatsdNetwork } from '../../support/statsd-daemon';
import { delay, waitFor } from '../../support/wait';
import { FakeScheduler } from '../../support/fake-scheduler';

function statsdConfig(network: StatsdNetwork, port: number, writeIntervalMs: number, prefix = ''): NormalisedConfig['metrics'] {
  return testConfig({
    metrics: { provider: 'statsd', statsd: { network, address: { host: '127.0.0.1', port }, writeIntervalMs, prefix } },
  }).metrics;
}

function startSystem(config: NormalisedConfig['metrics'], deps: Partial<MetricsSystemDeps> = {}) {
  const loggers = new CaptureLoggers();
  const system = createMetricsSystem(config, { loggers, ...deps });
  if (!(system instanceof StatsdMetricsSystem)) throw new Error('expected the statsd metrics system');
  return { system, loggers };
}

const fastBackoff = { initialMs: 50, maxMs: 400 };

describe.each(['udp', 'tcp'] as const)('StatsD over %s, against the real daemon', (network) => {
  let daemon: StatsdDaemon;
  beforeAll(async () => {
    daemon = await StatsdDaemon.start({ network });
  });
  afterAll(async () => {
    await daemon.cleanup();
  });

  test('counters summed, gauges last value, timings in ms, service metrics, prefix; no bad lines', async () => {
    const prefix = `${network}run.`;
    const { system, loggers } = startSystem(statsdConfig(network, daemon.port, 100, prefix));
    await system.start();
    await expect(system.opened()).resolves.toEqual({ reachable: true });
    expect(loggers.find('info', new RegExp(`statsd: sending metrics to ${network} 127.0.0.1:${daemon.port} every 100 ms`))).toHaveLength(1);

    const { provider } = system;
    const service = createServiceMetrics(provider, '2.5.1');
    service.loggingEntriesChecked.with({ level: 'info' }).add(3);
    service.loggingEntriesChecked.with({ level: 'info' }).add(4);
    service.requests.with({ route: '/healthz', code: '503' }).add(1);
    service.requests.with({ route: 'unmatched', code: '404' }).add(2);
    service.healthCheckStatus.with({ component: 'docker' }).set(0);
    service.healthCheckDuration.with({ component: 'docker' }).observe(0.25);
    service.healthCheckDuration.with({ component: 'docker' }).observe(1.5);
    const depth = provider.newGauge({ namespace: 'queue', name: 'depth', help: 'h' });
    depth.set(4);
    depth.add(-10);

    const received = await daemon.waitFor(
      (r) => (r.timerCounts[`${prefix}health.check_duration_seconds.docker`] === 2 ? r : undefined),
      'the health check timings',
    );
    expect(received.counters[`${prefix}logging.entries_checked.info`]).toBe(7);
    // The daemon would turn a '/' into '-': the route arrives as sent, without its slash.
    expect(received.counters[`${prefix}operations.requests.healthz.503`]).toBe(1);
    expect(received.counters[`${prefix}operations.requests.unmatched.404`]).toBe(2);
    expect(Object.keys(received.counters).filter((k) => k.includes('-'))).toEqual([]);
    expect(received.gauges[`${prefix}fabric_version.2_5_1`]).toBe(1);
    expect(received.gauges[`${prefix}health.check_status.docker`]).toBe(0);
    expect(received.gauges[`${prefix}queue.depth`]).toBe(-6);
    expect(received.timers[`${prefix}health.check_duration_seconds.docker`]).toEqual([250, 1500]);
    expect(received.badLines).toBe(0);

    await system.stop();
  });

  test('stop sends a final flush', async () => {
    const { system } = startSystem(statsdConfig(network, daemon.port, 3_600_000, `${network}final.`));
    await system.start();
    await system.opened();
    system.provider.newCounter({ name: 'last_words', help: 'h' }).add(42);
    await system.stop();
    const received = await daemon.waitFor((r) => r.counters[`${network}final.last_words`], 'the final flush');
    expect(received).toBe(42);
  });

  test('2,000 series in one flush all arrive (packed several lines per packet)', async () => {
    const { system } = startSystem(statsdConfig(network, daemon.port, 3_600_000, `${network}many.`));
    await system.start();
    await system.opened();
    const counter = system.provider.newCounter({ name: 'c', help: 'h', labelNames: ['n'], statsdFormat: '%{#fqname}.%{n}' });
    for (let n = 0; n < 2000; n += 1) counter.with({ n: `s${n}` }).add(n + 1);
    await system.stop();
    const stats = system.stats();
    expect(stats.sentLines).toBe(2000);
    expect(stats.sentPackets).toBeLessThan(2000 / 10);
    const received = await daemon.waitFor(
      (r) => (Object.keys(r.counters).filter((k) => k.startsWith(`${network}many.c.`)).length === 2000 ? r : undefined),
      'all 2,000 counters',
    );
    for (let n = 0; n < 2000; n += 1) expect(received.counters[`${network}many.c.s${n}`]).toBe(n + 1);
    expect(received.badLines).toBe(0);
  });
});

describe.each(['udp', 'tcp'] as const)('StatsD over %s, daemon down at start', (network) => {
  test('the system starts with a warning, and values arrive once the daemon is up', async () => {
    // Probed: the daemon is down first and started later on this port (statsd 0.9 cannot bind port 0).
    const port = await freePort(network);
    const { system, loggers } = startSystem(statsdConfig(network, port, 100), { statsd: { backoff: fastBackoff } });
    await system.start();
    const reachability = await system.opened();
    expect(reachability.reachable).toBe(false);
    const warnings = loggers.find('warn', new RegExp(`statsd: the daemon at ${network} 127.0.0.1:${port} is unreachable \\(.*ECONNREFUSED`));
    expect(warnings).toHaveLength(1);

    const counter = system.provider.newCounter({ name: 'early', help: 'h' });
    counter.add(1);
    await waitFor('three flushes', () => system.stats().flushes >= 3, { timeoutMs: 15_000, everyMs: 20 });

    const daemon = await StatsdDaemon.start({ network, port });
    try {
      if (network === 'tcp') await waitFor('the reconnection', () => system.stats().connected, { timeoutMs: 15_000, everyMs: 20 });
      const gauge = system.provider.newGauge({ name: 'later', help: 'h' });
      gauge.set(5);
      const received = await daemon.waitFor((r) => r.gauges.later, 'a gauge set after the daemon came up');
      expect(received).toBe(5);
    } finally {
      await system.stop();
      await daemon.cleanup();
    }
    if (network === 'tcp') expect(system.stats().droppedLines).toBeGreaterThan(0);
  });
});

describe('StatsD over tcp, daemon stopped mid-run and started again', () => {
  test('later values arrive after the reconnection; nothing piles up meanwhile', async () => {
    const daemon = await StatsdDaemon.start({ network: 'tcp' });
    const maxPendingBytes = 64 * 1024;
    const { system, loggers } = startSystem(statsdConfig('tcp', daemon.port, 100), { statsd: { backoff: fastBackoff, maxPendingBytes } });
    try {
      await system.start();
      await expect(system.opened()).resolves.toEqual({ reachable: true });
      const counter = system.provider.newCounter({ name: 'ticks', help: 'h', labelNames: ['n'], statsdFormat: '%{#fqname}.%{n}' });
      counter.with({ n: 'before' }).add(1);
      await daemon.waitFor((r) => r.counters['ticks.before'], 'a value before the outage');

      await daemon.stop();
      await waitFor('the client noticing the lost connection', () => !system.stats().connected, { timeoutMs: 15_000, everyMs: 20 });
      const droppedAtStart = system.stats().droppedLines;
      let rounds = 0;
      await waitFor(
        'ten flushes of drops',
        () => {
          for (let n = 0; n < 200; n += 1) counter.with({ n: `outage${n}` }).add(1);
          rounds += 1;
          const stats = system.stats();
          expect(stats.pendingBytes).toBeLessThanOrEqual(maxPendingBytes);
          expect(stats.series).toBeLessThanOrEqual(201);
          return stats.droppedLines - droppedAtStart >= 2000;
        },
        { timeoutMs: 15_000, everyMs: 20 },
      );
      expect(rounds).toBeGreaterThan(1);
      expect(loggers.find('warn', /statsd: lost the connection to tcp 127\.0\.0\.1:\d+/)).toHaveLength(1);
      expect(loggers.find('warn', /statsd: dropped \d+ metric lines in \d+ packets for tcp .* \(not connected to tcp/).length).toBeGreaterThan(0);

      await daemon.restart();
      await waitFor('the reconnection', () => system.stats().connected, { timeoutMs: 15_000, everyMs: 20 });
      expect(loggers.find('info', /statsd: reconnected to tcp 127\.0\.0\.1:\d+/)).toHaveLength(1);
      counter.with({ n: 'after' }).add(5);
      const after = await daemon.waitFor((r) => r.counters['ticks.after'], 'a value after the restart');
      expect(after).toBe(5);
    } finally {
      await system.stop();
      await daemon.cleanup();
    }
  });
});

describe.each(['udp', 'tcp'] as const)('StatsD over %s, a long outage (injected clock)', (network) => {
  test('1,000 flush intervals with the daemon down: buffers stay bounded, then values flow again', async () => {
    // Probed: the daemon is down first and started later on this port (statsd 0.9 cannot bind port 0).
    const port = await freePort(network);
    const scheduler = new FakeScheduler();
    const intervalMs = 10_000;
    const maxPendingBytes = 32 * 1024;
    const { system } = startSystem(statsdConfig(network, port, intervalMs), {
      statsd: { scheduler, maxPendingBytes, maxTimingsPerSeries: 50, probeTimeoutMs: 100 },
    });
    await system.start();
    await expect(system.opened()).resolves.toMatchObject({ reachable: false });
    const counter = system.provider.newCounter({ name: 'c', help: 'h', labelNames: ['n'], statsdFormat: '%{#fqname}.%{n}' });
    const histogram = system.provider.newHistogram({ name: 'h', help: 'h', labelNames: ['n'], statsdFormat: '%{#fqname}.%{n}' });

    const samples: number[] = [];
    for (let interval = 0; interval < 1000; interval += 1) {
      for (let n = 0; n < 50; n += 1) {
        counter.with({ n: String(n) }).add(1);
        for (let k = 0; k < 3; k += 1) histogram.with({ n: String(n) }).observe(0.01 * k);
      }
      scheduler.advance(intervalMs);
      // Let socket I/O (refused connections, datagram callbacks) happen between intervals.
      await new Promise((r) => setImmediate(r));
      const stats = system.stats();
      samples.push(stats.pendingBytes);
      expect(stats.series).toBe(100);
      expect(stats.heldObservations).toBe(0);
      expect(stats.pendingBytes).toBeLessThanOrEqual(maxPendingBytes);
    }
    expect(system.stats().flushes).toBe(1000);
    if (network === 'tcp') {
      expect(system.stats().droppedLines).toBeGreaterThanOrEqual(1000 * 200);
      expect(Math.max(...samples)).toBe(0);
    }

    const daemon = await StatsdDaemon.start({ network, port });
    try {
      if (network === 'tcp') {
        await waitFor(
          'the reconnection',
          () => {
            scheduler.advance(1000);
            return system.stats().connected;
          },
          { timeoutMs: 15_000, everyMs: 20 },
        );
      }
      counter.with({ n: 'back' }).add(9);
      scheduler.advance(intervalMs);
      const value = await daemon.waitFor((r) => r.counters['c.back'], 'a value after the outage');
      expect(value).toBe(9);
    } finally {
      const stopping = system.stop();
      scheduler.advance(2000);
      await stopping;
      await daemon.cleanup();
    }
  });
});

describe('StatsD over tcp, a daemon that hangs (stops reading)', () => {
  test('writes pile up only to the cap, the rest is dropped; values flow again when it reads', async () => {
    const daemon = await StatsdDaemon.start({ network: 'tcp' });
    const scheduler = new FakeScheduler();
    const maxPendingBytes = 64 * 1024;
    const { system, loggers } = startSystem(statsdConfig('tcp', daemon.port, 1000), { statsd: { scheduler, maxPendingBytes } });
    try {
      await system.start();
      await expect(system.opened()).resolves.toEqual({ reachable: true });
      const gauge = system.provider.newGauge({ name: 'g', help: 'h', labelNames: ['n'], statsdFormat: '%{#fqname}.%{n}' });
      for (let n = 0; n < 10_000; n += 1) gauge.with({ n: String(n) }).set(n);

      daemon.pause();
      let flushes = 0;
      while (system.stats().droppedLines === 0) {
        flushes += 1;
        if (flushes > 500) throw new Error(`no drops after 500 flushes: ${JSON.stringify(system.stats())}`);
        scheduler.advance(1000);
        await new Promise((r) => setImmediate(r));
        expect(system.stats().pendingBytes).toBeLessThanOrEqual(maxPendingBytes);
      }
      for (let i = 0; i < 20; i += 1) {
        scheduler.advance(1000);
        await new Promise((r) => setImmediate(r));
        expect(system.stats().pendingBytes).toBeLessThanOrEqual(maxPendingBytes);
      }
      expect(system.stats().connected).toBe(true);
      expect(loggers.find('warn', /statsd: dropped \d+ metric lines in \d+ packets for tcp .* \(send buffer full/).length).toBeGreaterThan(0);

      daemon.resume();
      await waitFor('the daemon reading the backlog', () => system.stats().pendingBytes === 0, { timeoutMs: 30_000, everyMs: 20 });
      system.provider.newCounter({ name: 'after_hang', help: 'h' }).add(3);
      scheduler.advance(1000);
      const value = await daemon.waitFor((r) => r.counters.after_hang, 'a value after the daemon resumed', 30_000);
      expect(value).toBe(3);
    } finally {
      daemon.resume();
      const stopping = system.stop();
      scheduler.advance(2000);
      await stopping;
      await daemon.cleanup();
    }
  });
});

/** Lets socket I/O (refused or accepted connections, closes) happen between fake-clock steps. */
function io(ms = 2): Promise<void> {
  return delay(ms);
}

/** Advances the fake clock in steps, with real I/O between, until `done` or `maxMs` of fake time. */
async function advanceUntil(scheduler: FakeScheduler, done: () => boolean, what: string, stepMs = 10, maxMs = 30_000): Promise<number> {
  const start = scheduler.now();
  while (!done()) {
    if (scheduler.now() - start > maxMs) throw new Error(`${what}: not within ${maxMs} ms of fake time`);
    scheduler.advance(stepMs);
    await io();
  }
  return scheduler.now() - start;
}

function retryDelays(loggers: CaptureLoggers): number[] {
  return loggers.find('debug', /statsd: cannot connect to tcp .* next attempt in \d+ ms/).map((e) => Number(/next attempt in (\d+) ms/.exec(e.msg)?.[1]));
}

describe('StatsD over tcp, outages logged once, warnings rate-limited, reconnection quick (injected clock, real daemon)', () => {
  test('daemon down at start for 5 minutes at a 100 ms interval: one drop warning a minute, the recovery logged once, reconnected within 2 s', async () => {
    // Probed: the daemon is down first and started later on this port (statsd 0.9 cannot bind port 0).
    const port = await freePort('tcp');
    const scheduler = new FakeScheduler();
    const { system, loggers } = startSystem(statsdConfig('tcp', port, 100), { statsd: { scheduler } });
    await system.start();
    await expect(system.opened()).resolves.toMatchObject({ reachable: false });
    const counter = system.provider.newCounter({ name: 'c', help: 'h' });
    for (let i = 0; i < 3000; i += 1) {
      counter.add(1);
      scheduler.advance(100);
      await new Promise((r) => setImmediate(r));
    }
    expect(system.stats().droppedLines).toBe(3000);

    const drops = loggers.find('warn', /statsd: dropped \d+ metric lines/);
    expect(drops.map((e) => e.fields.droppedLines)).toEqual([1, 600, 600, 600, 600]);
    expect(drops[0]?.msg).not.toMatch(/more in the last/);
    for (const warning of drops.slice(1)) {
      expect(warning.msg).toMatch(/lines dropped since start \(599 more in the last 60\.0 s, held back and counted here\)$/);
    }

    // Quick first retries, capped at 2 s (before: 250 ms doubling to 10 s).
    const delays = retryDelays(loggers);
    expect(delays[0]).toBeLessThanOrEqual(120);
    expect(delays.length).toBeGreaterThan(140);
    expect(Math.max(...delays)).toBeLessThanOrEqual(2000);

    // The daemon comes up just after a failed attempt: the next one is at most the cap away.
    const attempts = delays.length;
    await advanceUntil(scheduler, () => retryDelays(loggers).length > attempts, 'the next connection attempt', 100);
    const wait = retryDelays(loggers).at(-1) ?? Infinity;
    // Held-back drops are reported at the next minute even when nothing new was dropped: all are accounted for.
    const allDrops = loggers.find('warn', /statsd: dropped \d+ metric lines/);
    expect(allDrops.map((e) => e.fields.droppedLines)).toEqual([1, 600, 600, 600, 600, 599]);
    const daemon = await StatsdDaemon.start({ network: 'tcp', port });
    try {
      const tookMs = await advanceUntil(scheduler, () => system.stats().connected, 'the reconnection');
      expect(tookMs).toBeLessThanOrEqual(Math.min(wait, 2000) + 50);

      const recovered = loggers.find('info', /statsd: connected to tcp 127\.0\.0\.1:\d+ after/);
      expect(recovered).toHaveLength(1);
      expect(recovered[0]?.msg).toMatch(
        /^statsd: connected to tcp 127\.0\.0\.1:\d+ after 30\d\.\d s unreachable since start; 30\d\d metric lines in 30\d\d packets dropped meanwhile, 30\d\d since start$/,
      );
      expect(recovered[0]?.fields.droppedLines).toBe(system.stats().droppedLines);

      counter.add(7);
      scheduler.advance(100);
      expect(await daemon.waitFor((r) => r.counters.c, 'a value after the recovery')).toBe(7);
      expect(loggers.find('info', /statsd: (re)?connected to/)).toHaveLength(1);
      expect(loggers.find('warn', /statsd: dropped/)).toHaveLength(6);
    } finally {
      const stopping = system.stop();
      scheduler.advance(2000);
      await stopping;
      await daemon.cleanup();
    }
  });

  test('daemon stopped for 30 s: the loss and the recovery are logged once each, with the length and the drops; one drop warning', async () => {
    const daemon = await StatsdDaemon.start({ network: 'tcp' });
    const scheduler = new FakeScheduler();
    const { system, loggers } = startSystem(statsdConfig('tcp', daemon.port, 100), { statsd: { scheduler } });
    try {
      await system.start();
      await expect(system.opened()).resolves.toEqual({ reachable: true });
      const counter = system.provider.newCounter({ name: 'ticks', help: 'h' });

      await daemon.stop();
      await advanceUntil(scheduler, () => !system.stats().connected, 'the client noticing the lost connection');
      const lostAt = scheduler.now();
      const droppedBefore = system.stats().droppedLines;
      while (scheduler.now() - lostAt < 30_000) {
        counter.add(1);
        scheduler.advance(100);
        await new Promise((r) => setImmediate(r));
      }
      expect(loggers.find('warn', /statsd: lost the connection to tcp 127\.0\.0\.1:\d+/)).toHaveLength(1);
      expect(loggers.find('warn', /statsd: dropped \d+ metric lines/)).toHaveLength(1);

      await daemon.restart();
      await advanceUntil(scheduler, () => system.stats().connected, 'the reconnection');
      const dropped = system.stats().droppedLines - droppedBefore;
      expect(dropped).toBeGreaterThanOrEqual(299);
      const recovered = loggers.find('info', /statsd: reconnected to tcp/);
      expect(recovered).toHaveLength(1);
      expect(recovered[0]?.msg).toMatch(
        new RegExp(
          `^statsd: reconnected to tcp 127\\.0\\.0\\.1:${daemon.port} after 3[0-2]\\.\\d s down; ${dropped} metric lines in ${dropped} packets dropped meanwhile, \\d+ since start$`,
        ),
      );

      counter.add(5);
      scheduler.advance(100);
      expect(await daemon.waitFor((r) => r.counters.ticks, 'a value after the restart')).toBe(5);
      // The outage's drops were reported by the recovery message: no drop warning after it.
      scheduler.advance(1000);
      expect(loggers.find('warn', /statsd: dropped/)).toHaveLength(1);
    } finally {
      const stopping = system.stop();
      scheduler.advance(2000);
      await stopping;
      await daemon.cleanup();
    }
  });

  test('a daemon that accepts and at once closes every connection: retried at most every 2 s, one loss warning a minute', async () => {
    let accepted = 0;
    const server = net.createServer((socket) => {
      accepted += 1;
      socket.destroy();
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as AddressInfo).port;
    const scheduler = new FakeScheduler();
    const { system, loggers } = startSystem(statsdConfig('tcp', port, 1000), { statsd: { scheduler } });
    try {
      await system.start();
      await system.opened();
      const start = scheduler.now();
      while (scheduler.now() - start < 120_000) {
        scheduler.advance(100);
        await io();
      }
      // 120 s at the 2 s cap (less 20 % jitter) is at most 75 connections, plus the quick first ones.
      expect(accepted).toBeGreaterThan(40);
      expect(accepted).toBeLessThanOrEqual(85);
      const lost = loggers.find('warn', /statsd: lost the connection/);
      expect(lost.length).toBeGreaterThanOrEqual(2);
      expect(lost.length).toBeLessThanOrEqual(3);
      expect(lost[1]?.msg).toMatch(/ \(\d+ more in the last 6\d\.\d s, not logged\)$/);
      expect(loggers.find('info', /statsd: (re)?connected to/).length).toBeLessThanOrEqual(3);
    } finally {
      const stopping = system.stop();
      scheduler.advance(2000);
      await stopping;
      await new Promise((r) => server.close(r));
    }
  });
});
