import { watch, type FSWatcher } from 'node:fs';
import type { CompanionConfig } from '../config/types';
import type { Logger } from '../logging/types';
import type { EventType } from '../kubernetes/recorder';
import type { Gauge, MetricsProvider } from '../metrics/types';
import { realScheduler, type Cancellable, type Scheduler } from '../time';
import { certificateLabels, daysLeft, expiryStage, seriesId, type CertificateProblem, type ExpiryStage, type NodeCertificate } from './certificates';
import { foldersToWatch, scanCertificates, type Scan } from './scan';
import { Reread } from './reread';

/** The companion's metrics about the node's certificates (docs/companion.md, "Metrics"). */
export const certificateMetricOptions = {
  expiry: {
    namespace: 'companion',
    subsystem: 'certificate',
    name: 'expiry_timestamp_seconds',
    help: "notAfter of each certificate the node's configuration names, in seconds since the epoch",
    labelNames: ['kind', 'key', 'subject', 'issuer', 'serial'],
    statsdFormat: '%{#fqname}.%{kind}.%{serial}',
  },
  problems: {
    namespace: 'companion',
    subsystem: 'certificate',
    name: 'file_problems',
    help: "Files the node's configuration names (per key) that are missing, unreadable or hold no certificate",
    labelNames: ['key'],
    statsdFormat: '%{#fqname}.%{key}',
  },
} as const;

export interface CertificateMonitorOptions {
  certificates: CompanionConfig['certificates'];
  logger: Logger;
  metrics: MetricsProvider;
  /** Timers and the wall clock expiry is judged by; default Node's timers. */
  scheduler?: Scheduler;
  /** Calm period after a file-system event before the files are read again; default 200 ms. */
  settleMs?: number;
  /** Watch the folders (fs.watch) besides the periodic re-check; default true. */
  watchFolders?: boolean;
  /** Hold Events until recordEventsWith (Kubernetes Events are on): the warnings at start are recorded too. */
  holdEvents?: boolean;
}

/** Where a Kubernetes Event goes (the integration's recorder: aggregated, rate-limited, off the caller's path). */
export type RecordCertificateEvent = (type: EventType, reason: string, message: string) => void;

/** Events held before the Kubernetes integration (started after the server listens) takes them. */
const maxHeldEvents = 64;

export interface CertificateReport {
  certificates: Array<NodeCertificate & { stage: ExpiryStage }>;
  problems: CertificateProblem[];
  /** ISO 8601, or null before the first read. */
  checkedAt: string | null;
}

const dayMs = 86_400_000;

/**
 * Reads the node's certificates at start, again when their folders change (fs.watch) and at every
 * re-check interval (a missed event, or time passing into a window); keeps one gauge series per
 * certificate (a renewed certificate's series replaces the old one), logs each certificate once
 * as Fabric does at start, warns inside the windows (again daily), reports each problem file once.
 * Nothing here throws out of a timer.
 */
export class CertificateMonitor {
  private readonly scheduler: Scheduler;
  private readonly logger: Logger;
  private readonly expiry: Gauge;
  private readonly problemGauge: Gauge;
  private readonly series = new Map<string, Record<string, string>>();
  private readonly problemKeys = new Set<string>();
  /** Certificates seen (by key, path, fingerprint): their stage, and when it was last told. */
  private readonly seen = new Map<string, { stage: ExpiryStage; toldMs: number }>();
  private readonly reportedProblems = new Set<string>();
  private readonly watchers: FSWatcher[] = [];
  private interval: Cancellable | null = null;
  private settle: Cancellable | null = null;
  private readonly reread: Reread;
  private stopped = false;
  private last: CertificateReport = { certificates: [], problems: [], checkedAt: null };
  /** Completed reads, for tests and the start-up line. */
  reads = 0;
  private record: RecordCertificateEvent | null = null;
  private held: Array<[EventType, string, string]> | null;

  constructor(private readonly options: CertificateMonitorOptions) {
    this.held = options.holdEvents === true ? [] : null;
    this.scheduler = options.scheduler ?? realScheduler;
    this.logger = options.logger;
    this.reread = new Reread(
      async () => this.apply(await scanCertificates(options.certificates.sources)),
      this.logger,
      "reading the node's certificates",
      () => this.stopped,
    );
    this.expiry = options.metrics.newGauge(certificateMetricOptions.expiry);
    this.problemGauge = options.metrics.newGauge(certificateMetricOptions.problems);
  }

  /** The first read (awaited: the start-up log has every certificate), then the watchers and the re-check timer. */
  async start(): Promise<void> {
    await this.refresh();
    if (this.options.watchFolders !== false) this.watch();
    this.interval = this.scheduler.setInterval(() => void this.refresh(), this.options.certificates.recheckIntervalMs);
  }

  stop(): void {
    this.stopped = true;
    this.interval?.cancel();
    this.settle?.cancel();
    for (const watcher of this.watchers.splice(0)) watcher.close();
  }

  get report(): CertificateReport {
    return this.last;
  }

  /** Reads everything again; a call during a read makes one more read after it. Never rejects. */
  refresh(): Promise<void> {
    return this.reread.run();
  }

  private watch(): void {
    for (const folder of foldersToWatch(this.options.certificates.sources)) {
      try {
        const watcher = watch(folder, { persistent: false }, () => this.changed());
        // A watched folder that goes away: the periodic re-check still runs.
        watcher.on('error', () => watcher.close());
        this.watchers.push(watcher);
      } catch {
        // A folder that does not exist (yet): reported by the read; the periodic re-check covers it.
      }
    }
  }

  private changed(): void {
    if (this.stopped) return;
    this.settle?.cancel();
    this.settle = this.scheduler.setTimeout(() => void this.refresh(), this.options.settleMs ?? 200);
  }

  private apply(scan: Scan): void {
    if (this.stopped) return;
    const now = this.scheduler.now();
    const windows = this.options.certificates;
    const first = this.reads === 0;

    // Gauges: one series per distinct labels; series of certificates no longer there are removed.
    const current = new Map<string, { labels: Record<string, string>; value: number }>();
    for (const certificate of scan.certificates) {
      const labels = certificateLabels(certificate);
      current.set(seriesId(labels), { labels, value: certificate.notAfterMs / 1000 });
    }
    for (const [id, labels] of this.series) if (!current.has(id)) this.expiry.remove?.(labels);
    this.series.clear();
    for (const [id, { labels, value }] of current) {
      this.expiry.with(labels).set(value);
      this.series.set(id, labels);
    }

    const stillSeen = new Set<string>();
    const certificates = scan.certificates.map((certificate) => {
      const stage = expiryStage(certificate.notAfterMs, now, windows);
      const id = `${certificate.key}\u0000${certificate.path}\u0000${certificate.fingerprint}`;
      stillSeen.add(id);
      const before = this.seen.get(id);
      if (before === undefined)
        this.logger.info(`${first ? '' : 'new '}node certificate ${certificate.kind} will expire on ${certificate.notAfter}`, fieldsOf(certificate));
      const tell = before === undefined || before.stage !== stage || (stage !== 'ok' && now - before.toldMs >= dayMs);
      if (tell && stage !== 'ok') this.tellStage(certificate, stage, now);
      this.seen.set(id, { stage, toldMs: tell ? now : (before?.toldMs ?? now) });
      return { ...certificate, stage };
    });
    for (const id of [...this.seen.keys()]) if (!stillSeen.has(id)) this.seen.delete(id);

    this.applyProblems(scan.problems);
    this.last = { certificates, problems: scan.problems, checkedAt: new Date(now).toISOString() };
    this.reads += 1;
  }

  /** Kubernetes Events from now on (null: none); those held since the start go first. */
  recordEventsWith(record: RecordCertificateEvent | null): void {
    const held = this.held ?? [];
    this.held = null;
    this.record = record;
    if (record !== null) for (const [type, reason, message] of held) record(type, reason, message);
  }

  private event(reason: string, message: string): void {
    if (this.record !== null) {
      this.record('Warning', reason, message);
      return;
    }
    if (this.held === null) return;
    if (this.held.length >= maxHeldEvents) this.held.shift();
    this.held.push(['Warning', reason, message]);
  }

  private tellStage(certificate: NodeCertificate, stage: ExpiryStage, now: number): void {
    const fields = fieldsOf(certificate);
    const days = daysLeft(certificate.notAfterMs, now);
    const what = `node certificate ${certificate.kind} (${certificate.key} ${certificate.path}, ${certificate.subject})`;
    if (stage === 'expired') {
      const message = `${what} expired on ${certificate.notAfter}: the node refuses or is refused with it; renew it now`;
      this.logger.error(message, fields);
      this.event('NodeCertificateExpired', message);
    } else if (stage === 'warning') {
      const message = `${what} expires on ${certificate.notAfter}, within ${this.options.certificates.warningDays} days (${days} days left): renew it`;
      this.logger.warn(message, fields);
      this.event('NodeCertificateExpiresSoon', message);
    } else
      this.logger.info(
        `${what} expires on ${certificate.notAfter}, within ${this.options.certificates.planningDays} days (${days} days left): plan its renewal`,
        fields,
      );
  }

  private applyProblems(problems: readonly CertificateProblem[]): void {
    const now = new Set<string>();
    const perKey = new Map<string, number>();
    for (const problem of problems) {
      const id = `${problem.key}\u0000${problem.path}\u0000${problem.problem}`;
      now.add(id);
      perKey.set(problem.key, (perKey.get(problem.key) ?? 0) + 1);
      if (!this.reportedProblems.has(id)) {
        this.reportedProblems.add(id);
        this.logger.warn(`node certificate file ${problem.path} (${problem.key}, ${problem.kind}): ${problem.problem}`, {
          key: problem.key,
          path: problem.path,
          kind: problem.kind,
          problem: problem.problem,
        });
      }
    }
    for (const id of [...this.reportedProblems]) {
      if (now.has(id)) continue;
      this.reportedProblems.delete(id);
      const [key = '', path = ''] = id.split('\u0000');
      this.logger.info(`node certificate file ${path} (${key}): the problem is gone`, { key, path });
    }
    for (const key of [...this.problemKeys]) if (!perKey.has(key)) this.problemGauge.with({ key }).set(0);
    for (const [key, count] of perKey) {
      this.problemGauge.with({ key }).set(count);
      this.problemKeys.add(key);
    }
  }
}

function fieldsOf(certificate: NodeCertificate): Record<string, string> {
  return {
    kind: certificate.kind,
    key: certificate.key,
    path: certificate.path,
    subject: certificate.subject,
    issuer: certificate.issuer,
    serial: certificate.serial,
    notAfter: certificate.notAfter,
  };
}
