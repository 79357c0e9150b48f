import { formatStatsdNumber, StatsdAggregator } from '../../../src/metrics/statsd/aggregator';
import { backoffDelay, defaultBackoff } from '../../../src/retry';
import { formatDuration, WarningLimiter } from '../../../src/logging/warning-limiter';
import { packEntries, safeUdpPacketBytes, type Packet } from '../../../src/metrics/statsd/packer';
import { StatsdMetricsSystem } from '../../../src/metrics/statsd/system';
import type { Reachability, StatsdTransport } from '../../../src/metrics/statsd/transport';
import { createServiceMetrics } from '../../../src/metrics/service-metrics';
import { CaptureLoggers } from '../../support/capture-logger';
import { FakeScheduler } from '../../support/fake-scheduler';

/** Records every packet; can be told to refuse them, as a transport does when the daemon is gone. */
class MemoryTransport implements StatsdTransport {
  readonly description = 'udp test:8125';
  readonly maxPacketBytes = safeUdpPacketBytes;
  readonly packets: Packet[] = [];
  refuse: string | null = null;
  closed = false;
  pendingBytes = 0;
  connected = true;

  open(): Promise<Reachability> {
    return Promise.resolve(this.refuse ? { reachable: false, reason: this.refuse } : { reachable: true });
  }

  send(packet: Packet, done: (error: Error | null) => void): void {
    if (this.refuse) return done(new Error(this.refuse));
    this.packets.push(packet);
    done(null);
  }

  close(): Promise<void> {
    this.closed = true;
    return Promise.resolve();
  }

  /** Lines sent since the last call. */
  take(): string[] {
    const lines = this.packets.flatMap((p) => p.payload.split('\n'));
    this.packets.length = 0;
    return lines;
  }
}

function setup(options: { prefix?: string; writeIntervalMs?: number; random?: () => number; maxTimingsPerSeries?: number } = {}) {
  const scheduler = new FakeScheduler();
  const transport = new MemoryTransport();
  const loggers = new CaptureLoggers();
  const system = new StatsdMetricsSystem({
    network: 'udp',
    host: '127.0.0.1',
    port: 8125,
    writeIntervalMs: options.writeIntervalMs ?? 10_000,
    prefix: options.prefix ?? '',
    loggers,
    scheduler,
    transport,
    random: options.random,
    maxTimingsPerSeries: options.maxTimingsPerSeries,
  });
  return { scheduler, transport, loggers, system, provider: system.provider };
}

describe('StatsD aggregation: what is on the wire after a sequence of calls and flushes', () => {
  test('counters are summed per interval and reset; untouched counters are not sent', async () => {
    const { scheduler, transport, system, provider } = setup();
    await system.start();
    const counter = provider.newCounter({ namespace: 'ns', subsystem: 'sub', name: 'hits', help: 'h' });
    counter.add(1);
    counter.add(2.5);
    counter.add(3);
    expect(transport.take()).toEqual([]);
    scheduler.advance(9_999);
    expect(transport.take()).toEqual([]);
    scheduler.advance(1);
    expect(transport.take()).toEqual(['ns.sub.hits:6.5|c']);
    scheduler.advance(10_000);
    expect(transport.take()).toEqual([]);
    counter.add(4);
    scheduler.advance(10_000);
    expect(transport.take()).toEqual(['ns.sub.hits:4|c']);
    await system.stop();
  });

  test('gauges send their last value, every interval once set; a negative value is sent as 0 then the value', async () => {
    const { scheduler, transport, system, provider } = setup();
    await system.start();
    const gauge = provider.newGauge({ name: 'queue', help: 'h' });
    const unset = provider.newGauge({ name: 'unset', help: 'h' });
    expect(unset).toBeDefined();
    gauge.set(5);
    gauge.set(7);
    gauge.add(3);
    scheduler.advance(10_000);
    expect(transport.take()).toEqual(['queue:10|g']);
    scheduler.advance(10_000);
    expect(transport.take()).toEqual(['queue:10|g']);
    gauge.add(-12);
    scheduler.advance(10_000);
    const packets = transport.packets.map((p) => p.payload);
    expect(packets).toEqual(['queue:0|g\nqueue:-2|g']);
    await system.stop();
  });

  test('one timing per histogram observation, seconds sent as milliseconds', async () => {
    const { scheduler, transport, system, provider } = setup();
    await system.start();
    const histogram = provider.newHistogram({ namespace: 'health', name: 'check_duration_seconds', help: 'h' });
    histogram.observe(0.25);
    histogram.observe(1.5);
    histogram.observe(0.0001234);
    scheduler.advance(10_000);
    expect(transport.take()).toEqual([
      'health.check_duration_seconds:250|ms',
      'health.check_duration_seconds:1500|ms',
      'health.check_duration_seconds:0.123|ms',
    ]);
    scheduler.advance(10_000);
    expect(transport.take()).toEqual([]);
    await system.stop();
  });

  test('more observations than the reservoir holds are sampled, with |@rate so the daemon counts them all', async () => {
    let seed = 1;
    const random = (): number => {
      seed = (seed * 16807) % 2147483647;
      return (seed - 1) / 2147483646;
    };
    const { scheduler, transport, system, provider } = setup({ random, maxTimingsPerSeries: 10 });
    await system.start();
    const histogram = provider.newHistogram({ name: 'h', help: 'h' });
    for (let i = 0; i < 40; i += 1) histogram.observe(i / 1000);
    expect(system.stats().heldObservations).toBe(10);
    scheduler.advance(10_000);
    const lines = transport.take();
    expect(lines).toHaveLength(10);
    for (const line of lines) expect(line).toMatch(/^h:\d+\|ms\|@0\.25$/);
    await system.stop();
  });

  test('negative observations cannot be StatsD timings: dropped, counted and reported', async () => {
    const { scheduler, transport, system, provider, loggers } = setup();
    await system.start();
    provider.newHistogram({ name: 'h', help: 'h' }).observe(-1);
    scheduler.advance(10_000);
    expect(transport.take()).toEqual([]);
    expect(system.stats().rejectedObservations).toBe(1);
    expect(loggers.find('warn', /dropped 1 negative histogram observations/)).toHaveLength(1);
    await system.stop();
  });

  test('label values go where the format puts them; label sets with the same bucket share it', async () => {
    const { scheduler, transport, system, provider } = setup({ prefix: 'peer0.' });
    await system.start();
    const requests = provider.newCounter({
      namespace: 'operations',
      name: 'requests',
      help: 'h',
      labelNames: ['route', 'code'],
      statsdFormat: '%{#fqname}.%{route}.%{code}',
    });
    const byRoute = provider.newCounter({ name: 'plain', help: 'h', labelNames: ['route'] });
    requests.with({ route: '/logspec', code: '200' }).add(1);
    requests.with({ route: '/logspec' }).with({ code: '200' }).add(1);
    requests.with({ route: 'a.b c', code: '404' }).add(1);
    byRoute.with({ route: 'one' }).add(1);
    byRoute.with({ route: 'two' }).add(2);
    scheduler.advance(10_000);
    expect(transport.take()).toEqual(['peer0.operations.requests.logspec.200:2|c', 'peer0.operations.requests.a_b_c.404:1|c', 'peer0.plain:3|c']);
    await system.stop();
  });

  test('the service metrics: fabric_version.<version> with dots made underscores', async () => {
    const { scheduler, transport, system, provider } = setup();
    await system.start();
    const metrics = createServiceMetrics(provider, '2.5.1');
    metrics.loggingEntriesChecked.with({ level: 'info' }).add(3);
    metrics.healthCheckStatus.with({ component: 'docker' }).set(0);
    metrics.logspecChanges.add(1);
    scheduler.advance(10_000);
    expect(transport.take().sort()).toEqual(
      ['fabric_version.2_5_1:1|g', 'logging.entries_checked.info:3|c', 'health.check_status.docker:0|g', 'logging.spec_changes:1|c'].sort(),
    );
    await system.stop();
  });

  test('lines are packed into packets of at most 1432 bytes', async () => {
    const { scheduler, transport, system, provider } = setup();
    await system.start();
    const counter = provider.newCounter({ name: 'c', help: 'h', labelNames: ['n'], statsdFormat: '%{#fqname}.%{n}' });
    for (let i = 0; i < 500; i += 1) counter.with({ n: `series${i}` }).add(i + 1);
    scheduler.advance(10_000);
    const packets = transport.packets;
    expect(packets.length).toBeGreaterThan(1);
    for (const packet of packets) {
      expect(Buffer.byteLength(packet.payload)).toBeLessThanOrEqual(1432);
      expect(packet.bytes).toBe(Buffer.byteLength(packet.payload));
    }
    const lines = transport.take();
    expect(lines).toHaveLength(500);
    expect(lines[0]).toBe('c.series0:1|c');
    expect(lines[499]).toBe('c.series499:500|c');
    expect(system.stats()).toMatchObject({ sentLines: 500, droppedLines: 0 });
    await system.stop();
  });

  test('stop sends a final flush, then closes the transport; nothing is sent afterwards', async () => {
    const { scheduler, transport, system, provider } = setup();
    await system.start();
    const counter = provider.newCounter({ name: 'c', help: 'h' });
    counter.add(1);
    scheduler.advance(10_000);
    counter.add(5);
    await system.stop();
    expect(transport.take()).toEqual(['c:1|c', 'c:5|c']);
    expect(transport.closed).toBe(true);
    expect(scheduler.pending).toBe(0);
    counter.add(1);
    scheduler.advance(100_000);
    expect(transport.take()).toEqual([]);
  });

  test('a daemon that cannot be reached: start warns, packets are dropped, counted and reported at most once a minute', async () => {
    const { scheduler, transport, system, provider, loggers } = setup();
    transport.refuse = 'connect ECONNREFUSED 127.0.0.1:8125';
    await system.start();
    await expect(system.opened()).resolves.toEqual({ reachable: false, reason: 'connect ECONNREFUSED 127.0.0.1:8125' });
    expect(loggers.find('warn', /statsd: the daemon at udp test:8125 is unreachable \(connect ECONNREFUSED/)).toHaveLength(1);

    const counter = provider.newCounter({ name: 'c', help: 'h', labelNames: ['n'], statsdFormat: '%{#fqname}.%{n}' });
    const intervals = 200;
    for (let i = 0; i < intervals; i += 1) {
      for (let n = 0; n < 100; n += 1) counter.with({ n: String(n) }).add(1);
      scheduler.advance(10_000);
      expect(system.stats().series).toBe(100);
    }
    const stats = system.stats();
    expect(stats.droppedLines).toBe(intervals * 100);
    expect(stats.sentLines).toBe(0);
    expect(stats.heldObservations).toBe(0);
    const dropWarnings = (): { droppedLines: unknown; msg: string }[] =>
      loggers
        .find('warn', /statsd: dropped \d+ metric lines in \d+ packets for udp test:8125 \(connect ECONNREFUSED/)
        .map((e) => ({ droppedLines: e.fields.droppedLines, msg: e.msg }));
    // At 10 s, then every 60 s (six intervals each) up to 1990 s; the last 100 lines are held back.
    const drops = dropWarnings();
    expect(drops.map((d) => d.droppedLines)).toEqual([100, ...Array<number>(33).fill(600)]);
    expect(drops[0]?.msg).toMatch(/; 100 lines dropped since start$/);
    for (const drop of drops.slice(1)) expect(drop.msg).toMatch(/ lines dropped since start \(5 more in the last 60\.0 s, held back and counted here\)$/);

    transport.refuse = null;
    counter.with({ n: '1' }).add(7);
    scheduler.advance(10_000);
    expect(transport.take()).toEqual(['c.1:7|c']);
    await system.stop();
    // Stopping reports what was held back: every dropped line is in a warning.
    const all = dropWarnings().map((d) => Number(d.droppedLines));
    expect(all).toHaveLength(35);
    expect(all.reduce((a, b) => a + b, 0)).toBe(intervals * 100);
  });
});

describe('packer', () => {
  test('keeps multi-line entries whole and puts an oversized entry alone', () => {
    const big = `x:${'1'.repeat(50)}|c`;
    const packets = packEntries(['a:1|c', 'b:0|g\nb:-1|g', big, 'c:1|c'], 15);
    expect(packets.map((p) => [p.payload, p.lines])).toEqual([
      ['a:1|c', 1],
      ['b:0|g\nb:-1|g', 2],
      [big, 1],
      ['c:1|c', 1],
    ]);
    expect(packEntries([], 1432)).toEqual([]);
  });
});

describe('numbers on the wire', () => {
  test.each([
    [1, '1'],
    [2.5, '2.5'],
    [1e-7, '0.0000001'],
    [1e21, '1000000000000000000000'],
    [-3, '-3'],
  ])('%p is written %s', (value, text) => {
    expect(formatStatsdNumber(value)).toBe(text);
  });
});

describe('reconnect backoff', () => {
  test('doubles from the initial delay up to the cap, with jitter around it', () => {
    const middle = (): number => 0.5;
    const delays = [1, 2, 3, 4, 5, 6, 7, 8].map((n) => backoffDelay(defaultBackoff, n, middle));
    expect(delays).toEqual([100, 200, 400, 800, 1600, 2000, 2000, 2000]);
    expect(backoffDelay(defaultBackoff, 1, () => 0)).toBe(80);
    expect(backoffDelay(defaultBackoff, 1, () => 1)).toBe(120);
    expect(backoffDelay(defaultBackoff, 20, () => 0)).toBe(1600);
    expect(backoffDelay(defaultBackoff, 20, () => 1)).toBe(2000);
    expect(backoffDelay(defaultBackoff, 10_000, () => 1)).toBe(2000);
  });
});

describe('warning limiter', () => {
  test('one warning of a kind per interval, with the number held back since the last one', () => {
    const limiter = new WarningLimiter(60_000);
    expect(limiter.take('drops', 0)).toEqual({ suppressed: 0, sinceMs: 0 });
    expect(limiter.take('drops', 100)).toBeNull();
    expect(limiter.take('drops', 59_999)).toBeNull();
    expect(limiter.take('lost', 59_999)).toEqual({ suppressed: 0, sinceMs: 0 });
    expect(limiter.take('drops', 60_000)).toEqual({ suppressed: 2, sinceMs: 60_000 });
    expect(limiter.take('drops', 200_000)).toEqual({ suppressed: 0, sinceMs: 140_000 });
  });

  test.each([
    [0, '0 ms'],
    [950, '950 ms'],
    [1000, '1.0 s'],
    [61_540, '61.5 s'],
    [3_600_000, '3600.0 s'],
  ])('%p ms reads %s', (ms, text) => {
    expect(formatDuration(ms)).toBe(text);
  });
});

describe('aggregator memory', () => {
  test('series are held once; a drain empties counters and timings', () => {
    const aggregator = new StatsdAggregator({ prefix: '' });
    aggregator.counter('a').add(1);
    aggregator.counter('a').add(1);
    aggregator.timing('t').observe(1);
    expect(aggregator.seriesCount).toBe(2);
    expect(aggregator.drain()).toEqual({ entries: ['a:2|c', 't:1000|ms'], lines: 2, rejectedObservations: 0 });
    expect(aggregator.heldObservations).toBe(0);
    expect(aggregator.drain().entries).toEqual([]);
  });
});
