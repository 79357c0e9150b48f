import type { LoggerFactory, Logger } from '../../logging/types';
import { realScheduler, type Cancellable, type Scheduler } from '../scheduler';
import type { MetricsSystem } from '../types';
import { StatsdAggregator } from './aggregator';
import type { BackoffPolicy } from './backoff';
import { packEntries } from './packer';
import { StatsdProvider } from './provider';
import { TcpTransport } from './tcp-transport';
import type { Reachability, StatsdTransport } from './transport';
import { UdpTransport } from './udp-transport';

export interface StatsdTuning {
  scheduler: Scheduler;
  /** Reservoir sampling and backoff jitter. */
  random: () => number;
  backoff: Partial<BackoffPolicy>;
  connectTimeoutMs: number;
  probeTimeoutMs: number;
  maxPendingBytes: number;
  maxTimingsPerSeries: number;
}

export interface StatsdSystemOptions extends Partial<StatsdTuning> {
  network: 'udp' | 'tcp';
  host: string;
  port: number;
  writeIntervalMs: number;
  /** '' or ending in '.'. */
  prefix: string;
  loggers: LoggerFactory;
  /** Replaces the UDP/TCP transport (tests). */
  transport?: StatsdTransport;
}

/** Counters since start, for tests, benchmarks and diagnostics. */
export interface StatsdStats {
  /** Buckets held in memory, of every type. */
  series: number;
  /** Histogram observations held for the next flush. */
  heldObservations: number;
  /** Bytes handed to the socket and not yet written. */
  pendingBytes: number;
  connected: boolean;
  flushes: number;
  sentPackets: number;
  sentLines: number;
  droppedPackets: number;
  droppedLines: number;
  /** Negative histogram observations (a StatsD timing cannot be negative). */
  rejectedObservations: number;
}

interface DropReport {
  packets: number;
  lines: number;
  rejected: number;
  reason: string;
}

/**
 * Provider `statsd` with its lifecycle: values aggregate in memory and are flushed every
 * writeInterval and on stop. A daemon that is down never blocks or fails anything: start
 * warns, what cannot be sent is dropped, counted and reported in one warning per interval.
 */
export class StatsdMetricsSystem implements MetricsSystem {
  readonly provider: StatsdProvider;
  readonly scrape = null;
  readonly transport: StatsdTransport;
  private readonly aggregator: StatsdAggregator;
  private readonly scheduler: Scheduler;
  private readonly logger: Logger;
  private timer: Cancellable | null = null;
  private opening: Promise<Reachability> | null = null;
  private stopping: Promise<void> | null = null;
  private readonly totals = { flushes: 0, sentPackets: 0, sentLines: 0, droppedPackets: 0, droppedLines: 0, rejected: 0 };
  private sinceReport: DropReport = { packets: 0, lines: 0, rejected: 0, reason: '' };

  constructor(private readonly options: StatsdSystemOptions) {
    this.scheduler = options.scheduler ?? realScheduler;
    this.logger = options.loggers.getLogger('metrics.statsd');
    this.aggregator = new StatsdAggregator({
      prefix: options.prefix,
      maxTimingsPerSeries: options.maxTimingsPerSeries,
      random: options.random,
    });
    this.provider = new StatsdProvider(this.aggregator);
    this.transport = options.transport ?? this.createTransport();
  }

  private createTransport(): StatsdTransport {
    const { options, scheduler } = this;
    if (options.network === 'tcp') {
      return new TcpTransport({
        host: options.host,
        port: options.port,
        scheduler,
        logger: this.logger,
        backoff: options.backoff,
        random: options.random,
        connectTimeoutMs: options.connectTimeoutMs,
        maxPendingBytes: options.maxPendingBytes,
      });
    }
    return new UdpTransport({
      host: options.host,
      port: options.port,
      scheduler,
      probeTimeoutMs: options.probeTimeoutMs,
      maxPendingBytes: options.maxPendingBytes,
    });
  }

  /**
   * Starts the flush timer and opens the transport without waiting for it: start-up is
   * never held up by the daemon. `opened` tells when reachability is known.
   */
  start(): Promise<void> {
    if (this.opening || this.stopping) return Promise.resolve();
    const { description } = this.transport;
    this.opening = this.transport.open().then((reachability) => {
      if (reachability.reachable) {
        this.logger.info(`statsd: sending metrics to ${description} every ${this.options.writeIntervalMs} ms`);
      } else {
        this.logger.warn(
          `statsd: the daemon at ${description} is unreachable (${reachability.reason}); metrics are dropped until it answers`,
          { address: description, reason: reachability.reason },
        );
      }
      return reachability;
    });
    this.timer = this.scheduler.setInterval(() => this.flush(), this.options.writeIntervalMs);
    return Promise.resolve();
  }

  /** Resolves with what the first connection attempt (TCP) or probe (UDP) found. */
  opened(): Promise<Reachability> {
    return this.opening ?? Promise.resolve({ reachable: false, reason: 'not started' });
  }

  /** Sends the interval's values now (the timer calls this; tests and benchmarks may too). */
  flush(): void {
    const drained = this.aggregator.drain();
    this.totals.flushes += 1;
    if (drained.rejectedObservations > 0) {
      this.totals.rejected += drained.rejectedObservations;
      this.sinceReport.rejected += drained.rejectedObservations;
    }
    for (const packet of packEntries(drained.entries, this.transport.maxPacketBytes)) {
      this.transport.send(packet, (error) => {
        if (error) {
          this.totals.droppedPackets += 1;
          this.totals.droppedLines += packet.lines;
          this.sinceReport.packets += 1;
          this.sinceReport.lines += packet.lines;
          this.sinceReport.reason = error.message;
        } else {
          this.totals.sentPackets += 1;
          this.totals.sentLines += packet.lines;
        }
      });
    }
    this.reportDrops();
  }

  /** One warning for everything dropped since the last one. */
  private reportDrops(): void {
    const report = this.sinceReport;
    if (report.lines === 0 && report.rejected === 0) return;
    this.sinceReport = { packets: 0, lines: 0, rejected: 0, reason: '' };
    const parts: string[] = [];
    if (report.lines > 0) {
      parts.push(`dropped ${report.lines} metric lines in ${report.packets} packets for ${this.transport.description} (${report.reason})`);
    }
    if (report.rejected > 0) parts.push(`dropped ${report.rejected} negative histogram observations (not a StatsD timing)`);
    this.logger.warn(`statsd: ${parts.join('; ')}; ${this.totals.droppedLines} lines dropped since start`, {
      droppedLines: report.lines,
      droppedPackets: report.packets,
      rejectedObservations: report.rejected,
      totalDroppedLines: this.totals.droppedLines,
    });
  }

  /** Stops the timer, sends a final flush, waits (bounded) for it to be written, closes. */
  stop(): Promise<void> {
    this.stopping ??= (async () => {
      this.timer?.cancel();
      this.timer = null;
      if (!this.opening) return;
      this.flush();
      await this.transport.close();
      this.reportDrops();
    })();
    return this.stopping;
  }

  stats(): StatsdStats {
    return {
      series: this.aggregator.seriesCount,
      heldObservations: this.aggregator.heldObservations,
      pendingBytes: this.transport.pendingBytes,
      connected: this.transport.connected,
      flushes: this.totals.flushes,
      sentPackets: this.totals.sentPackets,
      sentLines: this.totals.sentLines,
      droppedPackets: this.totals.droppedPackets,
      droppedLines: this.totals.droppedLines,
      rejectedObservations: this.totals.rejected,
    };
  }
}
