import type { LoggerFactory, Logger } from '../../logging/types';
import { realScheduler, type Cancellable, type Scheduler } from '../../time';
import type { MetricsSystem } from '../types';
import { StatsdAggregator } from './aggregator';
import type { BackoffPolicy } from '../../retry';
import { packEntries } from './packer';
import { StatsdProvider } from './provider';
import { TcpTransport } from './tcp-transport';
import type { ConnectionChange, Reachability, StatsdTransport } from './transport';
import { UdpTransport } from './udp-transport';
import { formatDuration, WarningLimiter } from '../../logging/warning-limiter';

export interface StatsdTuning {
  scheduler: Scheduler;
  /** Reservoir sampling and backoff jitter. */
  random: () => number;
  backoff: Partial<BackoffPolicy>;
  connectTimeoutMs: number;
  probeTimeoutMs: number;
  maxPendingBytes: number;
  maxTimingsPerSeries: number;
  /** Repeated warnings of one kind (drops, lost connections) are logged at most this often; default 60 s. */
  warningIntervalMs: number;
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

/** The daemon unreachable (TCP: not connected) since `since`; drop totals then, for the recovery message. */
interface Outage {
  since: number;
  atStart: boolean;
  droppedLines: number;
  droppedPackets: number;
  /** Whether its start was logged (a rate-limited loss is not, and then neither is its end). */
  announced: boolean;
}

/**
 * Provider `statsd` with its lifecycle: values aggregate in memory and are flushed every
 * writeInterval and on stop. A daemon that is down never blocks or fails anything: start
 * warns, what cannot be sent is dropped, counted and reported (at most one warning a minute),
 * and over TCP the end of an outage is logged once with its length and what it dropped.
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
  private readonly warnings: WarningLimiter;
  private startedAt = 0;
  private outage: Outage | null = null;

  constructor(private readonly options: StatsdSystemOptions) {
    this.scheduler = options.scheduler ?? realScheduler;
    this.logger = options.loggers.getLogger('metrics.statsd');
    this.warnings = new WarningLimiter(options.warningIntervalMs ?? 60_000);
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
        onConnectionChange: (change) => this.onConnectionChange(change),
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
    this.startedAt = this.scheduler.now();
    this.opening = this.transport.open().then((reachability) => {
      if (reachability.reachable) {
        this.logger.info(`statsd: sending metrics to ${description} every ${this.options.writeIntervalMs} ms`);
      } else {
        if (!this.transport.connected && this.outage === null) {
          this.outage = { since: this.startedAt, atStart: true, announced: true, droppedLines: 0, droppedPackets: 0 };
        }
        this.logger.warn(`statsd: the daemon at ${description} is unreachable (${reachability.reason}); metrics are dropped until it answers`, {
          address: description,
          reason: reachability.reason,
        });
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

  private onConnectionChange(change: ConnectionChange): void {
    const { description } = this.transport;
    const now = this.scheduler.now();
    if (!change.connected) {
      const allowed = this.warnings.take('lost', now);
      const { droppedLines, droppedPackets } = this.totals;
      this.outage = { since: now, atStart: false, announced: allowed !== null, droppedLines, droppedPackets };
      if (allowed) {
        this.logger.warn(
          `statsd: lost the connection to ${description} (${change.reason}); metrics are dropped until it is back; reconnecting with backoff${suppressedNote(allowed, 'not logged')}`,
          { address: description, reason: change.reason, suppressedWarnings: allowed.suppressed },
        );
      }
      return;
    }
    const outage = this.outage;
    if (outage === null) return;
    this.outage = null;
    if (!outage.announced) return;
    // The recovery message accounts for what the outage dropped: no separate drop warning for it.
    this.sinceReport = { ...this.sinceReport, packets: 0, lines: 0 };
    const lines = this.totals.droppedLines - outage.droppedLines;
    const packets = this.totals.droppedPackets - outage.droppedPackets;
    const downMs = now - outage.since;
    const what = outage.atStart
      ? `connected to ${description} after ${formatDuration(downMs)} unreachable since start`
      : `reconnected to ${description} after ${formatDuration(downMs)} down`;
    this.logger.info(`statsd: ${what}; ${lines} metric lines in ${packets} packets dropped meanwhile, ${this.totals.droppedLines} since start`, {
      address: description,
      downMs,
      droppedLines: lines,
      droppedPackets: packets,
      totalDroppedLines: this.totals.droppedLines,
    });
  }

  /**
   * One warning for everything dropped since the last one, at most one a warning interval
   * (what is held back is added to the next); `force` on stop.
   */
  private reportDrops(force = false): void {
    const report = this.sinceReport;
    if (report.lines === 0 && report.rejected === 0) return;
    const allowed = this.warnings.take('drops', this.scheduler.now()) ?? (force ? { suppressed: 0, sinceMs: 0 } : null);
    if (allowed === null) return;
    this.sinceReport = { packets: 0, lines: 0, rejected: 0, reason: '' };
    const parts: string[] = [];
    if (report.lines > 0) {
      parts.push(`dropped ${report.lines} metric lines in ${report.packets} packets for ${this.transport.description} (${report.reason})`);
    }
    if (report.rejected > 0) parts.push(`dropped ${report.rejected} negative histogram observations (not a StatsD timing)`);
    this.logger.warn(
      `statsd: ${parts.join('; ')}; ${this.totals.droppedLines} lines dropped since start${suppressedNote(allowed, 'held back and counted here')}`,
      {
        droppedLines: report.lines,
        droppedPackets: report.packets,
        rejectedObservations: report.rejected,
        totalDroppedLines: this.totals.droppedLines,
        suppressedWarnings: allowed.suppressed,
      },
    );
  }

  /** Stops the timer, sends a final flush, waits (bounded) for it to be written, closes. */
  stop(): Promise<void> {
    this.stopping ??= (async () => {
      this.timer?.cancel();
      this.timer = null;
      if (!this.opening) return;
      this.flush();
      await this.transport.close();
      this.reportDrops(true);
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

/** What a rate-limited warning adds when others were held back since the last one logged. */
function suppressedNote(allowed: { suppressed: number; sinceMs: number }, what: 'not logged' | 'held back and counted here'): string {
  if (allowed.suppressed === 0) return '';
  return ` (${allowed.suppressed} more in the last ${formatDuration(allowed.sinceMs)}, ${what})`;
}
