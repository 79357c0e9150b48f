import { stat, statfs, type BigIntStats, type StatsFs } from 'node:fs';
import { describeFileError } from '../file-errors';
import type { CheckResult, HealthChecker } from '../health/types';
import type { Logger } from '../logging/types';
import type { Gauge, MetricsProvider } from '../metrics/types';
import { realScheduler, type Cancellable, type Scheduler } from '../time';
import { Reread } from './reread';
import {
  formatBytes,
  formatShare,
  groupByDevice,
  judgeVolume,
  volumeName,
  volumeProblem,
  type DataFolder,
  type DiskThresholds,
  type Volume,
  type VolumeFigures,
  type VolumeVerdict,
} from './disk';

/**
 * The companion's metrics about the node's data volumes (docs/companion.md, "Disk"), declared once:
 * the monitor creates these gauges, and `make docs` (scripts/gendocs.ts) writes their table.
 * One series per volume (folders on one device are one volume), labelled with the first of its
 * data folders in the configuration's order: at most as many series as the dialect has data-folder keys.
 */
export const diskMetricOptions = {
  freeBytes: {
    namespace: 'companion',
    subsystem: 'disk',
    name: 'free_bytes',
    help: "Bytes free for the node (statfs' available blocks) on each volume holding the node's data folders",
    labelNames: ['folder', 'key'],
    statsdFormat: '%{#fqname}.%{key}',
  },
  sizeBytes: {
    namespace: 'companion',
    subsystem: 'disk',
    name: 'size_bytes',
    help: "Size in bytes of each volume holding the node's data folders",
    labelNames: ['folder', 'key'],
    statsdFormat: '%{#fqname}.%{key}',
  },
  freeInodes: {
    namespace: 'companion',
    subsystem: 'disk',
    name: 'free_inodes',
    help: "Free inodes on each volume holding the node's data folders (0 with companion_disk_inodes 0: the file system does not count them)",
    labelNames: ['folder', 'key'],
    statsdFormat: '%{#fqname}.%{key}',
  },
  inodes: {
    namespace: 'companion',
    subsystem: 'disk',
    name: 'inodes',
    help: "Inodes of each volume holding the node's data folders (0: the file system does not count them)",
    labelNames: ['folder', 'key'],
    statsdFormat: '%{#fqname}.%{key}',
  },
  minFreeBytes: {
    namespace: 'companion',
    subsystem: 'disk',
    name: 'min_free_bytes',
    help: "The disk checker's threshold for each volume: fewer bytes free than this fails it (the larger of the configured share of its size and the configured floor)",
    labelNames: ['folder', 'key'],
    statsdFormat: '%{#fqname}.%{key}',
  },
  minFreeInodes: {
    namespace: 'companion',
    subsystem: 'disk',
    name: 'min_free_inodes',
    help: "The disk checker's threshold for each volume's inodes: fewer free than this fails it (the configured share of its inodes)",
    labelNames: ['folder', 'key'],
    statsdFormat: '%{#fqname}.%{key}',
  },
} as const;

export interface DiskMonitorOptions {
  folders: readonly DataFolder[];
  thresholds: DiskThresholds;
  /** How often the figures are read for the metrics (the checker reads them on every run). */
  recheckIntervalMs: number;
  logger: Logger;
  metrics: MetricsProvider;
  scheduler?: Scheduler;
}

export interface MeasuredVolume extends Volume {
  verdict: VolumeVerdict;
  /** Why it fails ('' when it does not). */
  problem: string;
}

export interface UnmeasuredFolder extends DataFolder {
  /** True when the folder does not exist (yet): a new node creates it. */
  missing: boolean;
  problem: string;
}

export interface DiskReport {
  volumes: MeasuredVolume[];
  /** Data folders that could not be measured: missing, not a folder, or unreadable. None of these fails the checker. */
  unmeasured: UnmeasuredFolder[];
  /** ISO 8601, or null before the first read. */
  checkedAt: string | null;
}

type Measurement =
  { ok: true; folder: DataFolder; device: string; figures: VolumeFigures } | { ok: false; folder: DataFolder; missing: boolean; problem: string };

// node:fs's callback functions as promises, as src/tls/files.ts: node:fs/promises would load Node's
// readline and REPL-history modules that its FileHandle needs, for nothing (the companion's footprint,
// docs/companion.md "Footprint").
function statAsync(path: string): Promise<BigIntStats> {
  return new Promise((resolve, reject) => stat(path, { bigint: true }, (error, stats) => (error ? reject(error) : resolve(stats))));
}
function statfsAsync(path: string): Promise<StatsFs> {
  return new Promise((resolve, reject) => statfs(path, (error, stats) => (error ? reject(error) : resolve(stats))));
}

async function measure(folder: DataFolder): Promise<Measurement> {
  try {
    const info = await statAsync(folder.path);
    if (!info.isDirectory()) return { ok: false, folder, missing: false, problem: 'is not a folder' };
    const volume = await statfsAsync(folder.path);
    return {
      ok: true,
      folder,
      device: info.dev.toString(),
      figures: { sizeBytes: volume.blocks * volume.bsize, freeBytes: volume.bavail * volume.bsize, inodes: volume.files, freeInodes: volume.ffree },
    };
  } catch (error) {
    const missing = (error as NodeJS.ErrnoException).code === 'ENOENT';
    return { ok: false, folder, missing, problem: missing ? 'does not exist (yet)' : describeFileError(error) };
  }
}

function labelsOf(volume: Volume): { folder: string; key: string } {
  return { folder: volume.folder.path, key: volume.folder.key };
}

/**
 * The free bytes and inodes of the volumes holding the node's data folders: read at start and
 * every recheck interval for the gauges, and again on every run of the `disk` checker (statfs is
 * cheap). A volume under a threshold fails the checker, with a reason naming folder, key, free
 * bytes and threshold; a data folder that does not exist yet (a new node), or cannot be read, is
 * reported once in the log and fails nothing until it can be measured. Nothing here throws out of a timer.
 */
export class DiskMonitor implements HealthChecker {
  private readonly scheduler: Scheduler;
  private readonly logger: Logger;
  private readonly gauges: Record<keyof typeof diskMetricOptions, Gauge>;
  /** Series exported, by `folder\0key`. */
  private readonly series = new Map<string, { folder: string; key: string }>();
  /** Per data folder (key): what was last told of it ('' once measured). */
  private readonly told = new Map<string, string>();
  /** Volumes (by their naming folder) last seen failing, with the reason told. */
  private readonly failing = new Map<string, string>();
  private interval: Cancellable | null = null;
  private readonly reread: Reread;
  private stopped = false;
  private last: DiskReport = { volumes: [], unmeasured: [], checkedAt: null };
  /** Completed reads. */
  reads = 0;

  constructor(private readonly options: DiskMonitorOptions) {
    this.scheduler = options.scheduler ?? realScheduler;
    this.logger = options.logger;
    this.reread = new Reread(
      async () => this.apply(await Promise.all(options.folders.map(measure))),
      this.logger,
      "reading the node's data volumes",
      () => this.stopped,
    );
    const gauge = (key: keyof typeof diskMetricOptions): Gauge => options.metrics.newGauge(diskMetricOptions[key]);
    this.gauges = {
      freeBytes: gauge('freeBytes'),
      sizeBytes: gauge('sizeBytes'),
      freeInodes: gauge('freeInodes'),
      inodes: gauge('inodes'),
      minFreeBytes: gauge('minFreeBytes'),
      minFreeInodes: gauge('minFreeInodes'),
    };
  }

  /** The first read (awaited: the start-up log has every volume), then the periodic one. */
  async start(): Promise<void> {
    await this.refresh();
    this.interval = this.scheduler.setInterval(() => void this.refresh(), this.options.recheckIntervalMs);
  }

  stop(): void {
    this.stopped = true;
    this.interval?.cancel();
  }

  get report(): DiskReport {
    return this.last;
  }

  /** The `disk` checker: reads the volumes again and fails while one is under a threshold. */
  async check(): Promise<CheckResult> {
    await this.refresh();
    const problems = this.last.volumes.filter((volume) => !volume.verdict.ok).map((volume) => volume.problem);
    return problems.length === 0 ? { ok: true } : { ok: false, reason: problems.join('; ') };
  }

  /** Reads every folder again; a call during a read makes one more read after it. Never rejects. */
  refresh(): Promise<void> {
    return this.reread.run();
  }

  private apply(measurements: readonly Measurement[]): void {
    if (this.stopped) return;
    const { thresholds } = this.options;
    const first = this.reads === 0;
    const measured = measurements.flatMap((m) => (m.ok ? [m] : []));
    const unmeasured = measurements.flatMap((m) => (m.ok ? [] : [{ ...m.folder, missing: m.missing, problem: m.problem }]));
    const volumes = groupByDevice(measured).map((volume) => ({
      ...volume,
      verdict: judgeVolume(volume.figures, thresholds),
      problem: volumeProblem(volume, thresholds),
    }));

    // Gauges: one series per volume; a volume no longer measured (or named by another folder now) loses its series.
    const current = new Map(volumes.map((volume) => [`${volume.folder.path}\u0000${volume.folder.key}`, volume]));
    for (const [id, labels] of this.series) {
      if (current.has(id)) continue;
      for (const gauge of Object.values(this.gauges)) gauge.remove?.(labels);
      this.series.delete(id);
    }
    for (const [id, volume] of current) {
      const labels = labelsOf(volume);
      const { figures, verdict } = volume;
      this.gauges.freeBytes.with(labels).set(figures.freeBytes);
      this.gauges.sizeBytes.with(labels).set(figures.sizeBytes);
      this.gauges.freeInodes.with(labels).set(figures.freeInodes);
      this.gauges.inodes.with(labels).set(figures.inodes);
      this.gauges.minFreeBytes.with(labels).set(verdict.minFreeBytes);
      this.gauges.minFreeInodes.with(labels).set(verdict.minFreeInodes);
      this.series.set(id, labels);
    }

    this.tellFolders(measurements, volumes);
    this.tellVolumes(volumes, first);
    this.last = { volumes, unmeasured, checkedAt: new Date(this.scheduler.now()).toISOString() };
    this.reads += 1;
  }

  /** A folder that cannot be measured is told once while that lasts; one that can again, once. */
  private tellFolders(measurements: readonly Measurement[], volumes: readonly Volume[]): void {
    for (const m of measurements) {
      const { key, path } = m.folder;
      const before = this.told.get(key);
      if (m.ok) {
        const volume = volumes.find((v) => v.folder.key === key || v.alsoHolds.some((folder) => folder.key === key));
        if (before !== undefined && before !== '' && volume)
          this.logger.info(`node data folder ${key} ${path} can be measured now: on the volume of ${volumeName(volume)}`, { key, path });
        this.told.set(key, '');
        continue;
      }
      if (before === m.problem) continue;
      this.told.set(key, m.problem);
      const fields = { key, path, problem: m.problem };
      if (m.missing)
        this.logger.warn(
          `node data folder ${key} ${path} does not exist (yet): its volume is not measured, and fails nothing, until it does (a new node creates it; if it should exist, mount the node's data volume into the companion at this path)`,
          fields,
        );
      else this.logger.warn(`node data folder ${key} ${path} cannot be measured: ${m.problem}`, fields);
    }
  }

  /** Each volume once at start (as the certificates), then when it goes under a threshold and when it is above again. */
  private tellVolumes(volumes: readonly MeasuredVolume[], first: boolean): void {
    const { thresholds } = this.options;
    const stillFailing = new Set<string>();
    for (const volume of volumes) {
      const name = volumeName(volume);
      const { figures, verdict } = volume;
      const fields = {
        key: volume.folder.key,
        path: volume.folder.path,
        freeBytes: figures.freeBytes,
        sizeBytes: figures.sizeBytes,
        freeInodes: figures.freeInodes,
        inodes: figures.inodes,
        minFreeBytes: verdict.minFreeBytes,
        minFreeInodes: verdict.minFreeInodes,
      };
      if (first) {
        const inodes = figures.inodes > 0 ? `, ${figures.freeInodes} of ${figures.inodes} inodes free` : ', inodes not counted';
        this.logger.info(
          `node data volume of ${name}: ${formatBytes(figures.freeBytes)} free of ${formatBytes(figures.sizeBytes)} (${formatShare(figures.freeBytes, figures.sizeBytes)})${inodes}; ` +
            `the disk checker fails under ${formatBytes(verdict.minFreeBytes)}${figures.inodes > 0 ? ` or ${verdict.minFreeInodes} inodes` : ''} free (${thresholds.minFreePercent}%, floor ${formatBytes(thresholds.minFreeBytes)})`,
          fields,
        );
      }
      const id = `${volume.folder.key}\u0000${volume.folder.path}`;
      if (verdict.ok) continue;
      stillFailing.add(id);
      if (!this.failing.has(id)) this.logger.warn(`node data volume low: ${volume.problem}`, fields);
      this.failing.set(id, volume.problem);
    }
    for (const id of [...this.failing.keys()]) {
      if (stillFailing.has(id)) continue;
      this.failing.delete(id);
      const [key = '', path = ''] = id.split('\u0000');
      const now = volumes.find((volume) => volume.folder.key === key && volume.folder.path === path);
      if (now)
        this.logger.info(`node data volume of ${volumeName(now)}: above its thresholds again (${formatBytes(now.figures.freeBytes)} free)`, { key, path });
    }
  }
}
