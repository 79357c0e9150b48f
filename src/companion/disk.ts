/**
 * The disk figures of companion mode (docs/companion.md, "Disk"), the pure part: the thresholds of
 * the `disk` checker, the volumes the node's data folders share, and the reasons a volume fails.
 * No I/O here: disk-monitor.ts reads the figures.
 */

/** What statfs says of one volume, in bytes and inodes. */
export interface VolumeFigures {
  sizeBytes: number;
  /** Free for an unprivileged writer (statfs' bavail, df's "Avail"): what the node can still write. */
  freeBytes: number;
  /** 0 where the file system does not count inodes (btrfs, some network file systems): no inode threshold then. */
  inodes: number;
  freeInodes: number;
}

export interface DiskThresholds {
  /** 0 to 99; 0: no share. Applies to bytes and to inodes. */
  minFreePercent: number;
  /** 0: no floor. */
  minFreeBytes: number;
}

/** The fewest free bytes a volume of this size may have: the larger of the share and the floor. */
export function minFreeBytesFor(sizeBytes: number, thresholds: DiskThresholds): number {
  return Math.max(Math.ceil((sizeBytes * thresholds.minFreePercent) / 100), thresholds.minFreeBytes);
}

/** The fewest free inodes: the share of the volume's inodes (no floor: a volume has a fixed number). */
export function minFreeInodesFor(inodes: number, thresholds: DiskThresholds): number {
  return inodes > 0 ? Math.ceil((inodes * thresholds.minFreePercent) / 100) : 0;
}

export interface VolumeVerdict {
  ok: boolean;
  bytesLow: boolean;
  inodesLow: boolean;
  minFreeBytes: number;
  minFreeInodes: number;
}

/** Low: fewer free than the threshold (exactly the threshold is still enough). */
export function judgeVolume(figures: VolumeFigures, thresholds: DiskThresholds): VolumeVerdict {
  const minFreeBytes = minFreeBytesFor(figures.sizeBytes, thresholds);
  const minFreeInodes = minFreeInodesFor(figures.inodes, thresholds);
  const bytesLow = figures.freeBytes < minFreeBytes;
  const inodesLow = figures.inodes > 0 && figures.freeInodes < minFreeInodes;
  return { ok: !bytesLow && !inodesLow, bytesLow, inodesLow, minFreeBytes, minFreeInodes };
}

const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'] as const;

/** `1.5 GiB`, `512 B`. */
export function formatBytes(bytes: number): string {
  let value = bytes;
  let unit = 0;
  while (Math.abs(value) >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return unit === 0 ? `${value} B` : `${value.toFixed(1)} ${units[unit]}`;
}

/** `6.3%` of a whole (one decimal); `0.0%` of nothing. */
export function formatShare(part: number, whole: number): string {
  return `${(whole > 0 ? (part / whole) * 100 : 0).toFixed(1)}%`;
}

/** One of the node's data folders, as the configuration names it. */
export interface DataFolder {
  key: string;
  path: string;
}

/** A volume holding one or more of the data folders: named by the first of them (in the configuration's order). */
export interface Volume {
  /** Device id (stat's dev), as text. */
  device: string;
  folder: DataFolder;
  /** The other data folders on the same volume. */
  alsoHolds: DataFolder[];
  figures: VolumeFigures;
}

/** Groups measured folders by device, keeping the configuration's order: each volume once, named by its first folder. */
export function groupByDevice(measured: ReadonlyArray<{ folder: DataFolder; device: string; figures: VolumeFigures }>): Volume[] {
  const volumes = new Map<string, Volume>();
  for (const { folder, device, figures } of measured) {
    const known = volumes.get(device);
    if (known) known.alsoHolds.push(folder);
    else volumes.set(device, { device, folder, alsoHolds: [], figures });
  }
  return [...volumes.values()];
}

/** `peer.fileSystemPath /var/hyperledger/production (also holding ledger.snapshots.rootDir)`. */
export function volumeName(volume: Pick<Volume, 'folder' | 'alsoHolds'>): string {
  const also = volume.alsoHolds.length === 0 ? '' : ` (also holding ${volume.alsoHolds.map((folder) => folder.key).join(', ')})`;
  return `${volume.folder.key} ${volume.folder.path}${also}`;
}

/**
 * Why a volume fails, naming folder, key, free bytes and threshold: `peer.fileSystemPath
 * /var/hyperledger/production: 536870912 bytes free (512.0 MiB, 6.3% of 8.0 GiB), under the
 * threshold of 858993460 bytes (819.2 MiB: the larger of 10% of the volume and the 100.0 MiB floor)`.
 * '' when it does not fail.
 */
export function volumeProblem(volume: Pick<Volume, 'folder' | 'alsoHolds' | 'figures'>, thresholds: DiskThresholds): string {
  const { figures } = volume;
  const verdict = judgeVolume(figures, thresholds);
  const parts: string[] = [];
  if (verdict.bytesLow) {
    const share = thresholds.minFreePercent > 0 ? `${thresholds.minFreePercent}% of the volume` : '';
    const floor = thresholds.minFreeBytes > 0 ? `the ${formatBytes(thresholds.minFreeBytes)} floor` : '';
    const why = share !== '' && floor !== '' ? `the larger of ${share} and ${floor}` : share || floor;
    parts.push(
      `${figures.freeBytes} bytes free (${formatBytes(figures.freeBytes)}, ${formatShare(figures.freeBytes, figures.sizeBytes)} of ${formatBytes(figures.sizeBytes)}), ` +
        `under the threshold of ${verdict.minFreeBytes} bytes (${formatBytes(verdict.minFreeBytes)}: ${why})`,
    );
  }
  if (verdict.inodesLow) {
    parts.push(
      `${figures.freeInodes} inodes free (${formatShare(figures.freeInodes, figures.inodes)} of ${figures.inodes}), ` +
        `under the threshold of ${verdict.minFreeInodes} inodes (${thresholds.minFreePercent}% of the volume's)`,
    );
  }
  return parts.length === 0 ? '' : `${volumeName(volume)}: ${parts.join('; ')}`;
}
