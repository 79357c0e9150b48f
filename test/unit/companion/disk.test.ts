import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { settings } from '../../../src/config/declarations';
import { byteSize as parseByteSize } from '../../../src/config/values';

const parsePercent = settings.companionDiskMinFreePercent.format;
import {
  formatBytes,
  formatShare,
  groupByDevice,
  judgeVolume,
  minFreeBytesFor,
  minFreeInodesFor,
  volumeProblem,
  type VolumeFigures,
} from '../../../src/companion/disk';
import { DiskMonitor, diskMetricOptions } from '../../../src/companion/disk-monitor';
import type { Logger } from '../../../src/logging/types';
import { DisabledProvider } from '../../../src/metrics/disabled/provider';
import type { MetricOptions, MetricsProvider } from '../../../src/metrics/types';

const GiB = 2 ** 30;
const MiB = 2 ** 20;
const defaults = { minFreePercent: 10, minFreeBytes: GiB };

function figures(sizeBytes: number, freeBytes: number, inodes = 1000, freeInodes = 900): VolumeFigures {
  return { sizeBytes, freeBytes, inodes, freeInodes };
}

describe('thresholds: the larger of the share and the floor', () => {
  test.each([
    // size, percent, floor, threshold
    [100 * GiB, 10, GiB, 10 * GiB],
    [5 * GiB, 10, GiB, GiB],
    [100 * GiB, 0, GiB, GiB],
    [100 * GiB, 10, 0, 10 * GiB],
    [100 * GiB, 0, 0, 0],
    // 10% of 8 GiB is not a whole number of bytes: rounded up.
    [8 * GiB + 1, 10, 0, Math.ceil((8 * GiB + 1) / 10)],
  ])('a %d-byte volume at %d%% with a %d-byte floor: %d bytes', (size, minFreePercent, minFreeBytes, threshold) => {
    expect(minFreeBytesFor(size, { minFreePercent, minFreeBytes })).toBe(threshold);
  });

  test('inodes: the share only; none where the file system counts none', () => {
    expect(minFreeInodesFor(1000, defaults)).toBe(100);
    expect(minFreeInodesFor(1001, defaults)).toBe(101);
    expect(minFreeInodesFor(0, defaults)).toBe(0);
    expect(minFreeInodesFor(1000, { minFreePercent: 0, minFreeBytes: GiB })).toBe(0);
  });

  test('exactly the threshold is enough; one byte or inode fewer is low', () => {
    expect(judgeVolume(figures(100 * GiB, 10 * GiB), defaults)).toMatchObject({ ok: true, bytesLow: false, inodesLow: false, minFreeBytes: 10 * GiB });
    expect(judgeVolume(figures(100 * GiB, 10 * GiB - 1), defaults)).toMatchObject({ ok: false, bytesLow: true, inodesLow: false });
    expect(judgeVolume(figures(100 * GiB, 50 * GiB, 1000, 100), defaults)).toMatchObject({ ok: true, minFreeInodes: 100 });
    expect(judgeVolume(figures(100 * GiB, 50 * GiB, 1000, 99), defaults)).toMatchObject({ ok: false, bytesLow: false, inodesLow: true });
  });

  test('the floor fails a small volume whatever its share: 900 MiB free of 2 GiB (44%) is under 1 GiB', () => {
    expect(judgeVolume(figures(2 * GiB, 900 * MiB), defaults)).toMatchObject({ ok: false, bytesLow: true, minFreeBytes: GiB });
  });

  test('a file system without inode counts never fails on inodes', () => {
    expect(judgeVolume(figures(100 * GiB, 50 * GiB, 0, 0), defaults)).toMatchObject({ ok: true, inodesLow: false, minFreeInodes: 0 });
  });

  test('both thresholds 0: nothing is low, not even a full volume', () => {
    expect(judgeVolume(figures(100 * GiB, 0, 1000, 0), { minFreePercent: 0, minFreeBytes: 0 }).ok).toBe(true);
  });
});

describe('the reason names folder, key, free bytes and threshold', () => {
  const volume = { folder: { key: 'peer.fileSystemPath', path: '/var/hyperledger/production' }, alsoHolds: [] };

  test('bytes under the share', () => {
    expect(volumeProblem({ ...volume, figures: figures(8 * GiB, 512 * MiB) }, { minFreePercent: 10, minFreeBytes: 100 * MiB })).toBe(
      'peer.fileSystemPath /var/hyperledger/production: 536870912 bytes free (512.0 MiB, 6.3% of 8.0 GiB), under the threshold of 858993460 bytes (819.2 MiB: the larger of 10% of the volume and the 100.0 MiB floor)',
    );
  });

  test('bytes under the floor alone, and the other folders of the volume named', () => {
    const shared = { ...volume, alsoHolds: [{ key: 'ledger.snapshots.rootDir', path: '/var/hyperledger/production/snapshots' }] };
    expect(volumeProblem({ ...shared, figures: figures(2 * GiB, 900 * MiB) }, { minFreePercent: 0, minFreeBytes: GiB })).toBe(
      'peer.fileSystemPath /var/hyperledger/production (also holding ledger.snapshots.rootDir): 943718400 bytes free (900.0 MiB, 43.9% of 2.0 GiB), under the threshold of 1073741824 bytes (1.0 GiB: the 1.0 GiB floor)',
    );
  });

  test('inodes, and bytes and inodes together', () => {
    expect(volumeProblem({ ...volume, figures: figures(8 * GiB, 4 * GiB, 1000, 50) }, defaults)).toBe(
      "peer.fileSystemPath /var/hyperledger/production: 50 inodes free (5.0% of 1000), under the threshold of 100 inodes (10% of the volume's)",
    );
    expect(volumeProblem({ ...volume, figures: figures(8 * GiB, 512, 1000, 50) }, { minFreePercent: 10, minFreeBytes: 0 })).toBe(
      'peer.fileSystemPath /var/hyperledger/production: 512 bytes free (512 B, 0.0% of 8.0 GiB), under the threshold of 858993460 bytes (819.2 MiB: 10% of the volume); ' +
        "50 inodes free (5.0% of 1000), under the threshold of 100 inodes (10% of the volume's)",
    );
  });

  test('nothing when it does not fail', () => {
    expect(volumeProblem({ ...volume, figures: figures(8 * GiB, 4 * GiB) }, defaults)).toBe('');
  });

  test('sizes and shares as people read them', () => {
    expect([0, 1023, 1024, 1536, 5 * GiB, 3 * 2 ** 40].map(formatBytes)).toEqual(['0 B', '1023 B', '1.0 KiB', '1.5 KiB', '5.0 GiB', '3.0 TiB']);
    expect([formatShare(1, 3), formatShare(0, 10), formatShare(5, 0)]).toEqual(['33.3%', '0.0%', '0.0%']);
  });
});

describe('volumes: the data folders deduplicated by device', () => {
  test('folders on one device are one volume, named by the first in configuration order', () => {
    const a = figures(100, 50);
    const b = figures(200, 20);
    const volumes = groupByDevice([
      { folder: { key: 'FileLedger.Location', path: '/data/ledger' }, device: '2049', figures: a },
      { folder: { key: 'Consensus.WALDir', path: '/wal' }, device: '2050', figures: b },
      { folder: { key: 'Consensus.SnapDir', path: '/data/ledger/etcdraft/snapshot' }, device: '2049', figures: a },
    ]);
    expect(volumes).toEqual([
      {
        device: '2049',
        folder: { key: 'FileLedger.Location', path: '/data/ledger' },
        alsoHolds: [{ key: 'Consensus.SnapDir', path: '/data/ledger/etcdraft/snapshot' }],
        figures: a,
      },
      { device: '2050', folder: { key: 'Consensus.WALDir', path: '/wal' }, alsoHolds: [], figures: b },
    ]);
  });
});

describe('configuration values', () => {
  test('percent: whole numbers from 0 to 99', () => {
    expect(parsePercent(' 10 ')).toEqual({ ok: true, value: 10 });
    expect(parsePercent('0')).toEqual({ ok: true, value: 0 });
    for (const bad of ['100', '-1', '7.5', '10%', ''])
      expect(parsePercent(bad)).toEqual({ ok: false, problem: `must be a whole number of percent from 0 to 99; got "${bad}"` });
  });

  test('sizes: bytes with binary units, any case, with or without a space', () => {
    expect(['0', '1048576', '1GiB', '512 MiB', '3kib', '2TiB', '7B'].map((text) => parseByteSize(text))).toEqual(
      [0, 1048576, GiB, 512 * MiB, 3072, 2 * 2 ** 40, 7].map((value) => ({ ok: true, value })),
    );
  });

  test('sizes: decimal-looking units are refused with the binary spelling; garbage names itself', () => {
    expect(parseByteSize('1GB')).toEqual({
      ok: false,
      problem: 'must be a whole number of bytes with an optional unit B, KiB, MiB, GiB or TiB (write GiB: the units are powers of 1024); got "1GB"',
    });
    expect(parseByteSize('5 m')).toMatchObject({ ok: false, problem: expect.stringContaining('(write MiB: the units are powers of 1024)') as string });
    for (const bad of ['1.5GiB', '-1', 'lots', '1 constructor', '99999999999 TiB']) {
      expect(parseByteSize(bad)).toEqual({ ok: false, problem: expect.stringMatching(/^must be a whole number of bytes .*; got "/) as string });
    }
  });
});

describe('DiskMonitor', () => {
  const lines: Array<[string, string]> = [];
  const logger: Logger = {
    name: 'companion.disk',
    payload: () => undefined,
    debug: () => undefined,
    info: (msg) => lines.push(['info', msg]),
    warn: (msg) => lines.push(['warn', msg]),
    error: (msg) => lines.push(['error', msg]),
    isEnabled: () => true,
  };
  let dir: string;
  beforeEach(async () => {
    lines.length = 0;
    dir = await mkdtemp(path.join(os.tmpdir(), 'disk-monitor-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  test('creates exactly the gauges declared in diskMetricOptions (what make docs lists)', () => {
    const created: Array<[string, MetricOptions]> = [];
    const inner = new DisabledProvider();
    const spy: MetricsProvider = {
      newCounter: (options) => (created.push(['counter', options]), inner.newCounter(options)),
      newGauge: (options) => (created.push(['gauge', options]), inner.newGauge(options)),
      newHistogram: (options) => (created.push(['histogram', options]), inner.newHistogram(options)),
    };
    new DiskMonitor({ folders: [], thresholds: defaults, recheckIntervalMs: 1000, logger, metrics: spy });
    expect(created).toEqual(Object.values(diskMetricOptions).map((options) => ['gauge', options]));
  });

  test('a missing folder, a file where a folder should be: told once each, unmeasured, the checker passes', async () => {
    const file = path.join(dir, 'a-file');
    await writeFile(file, '');
    const monitor = new DiskMonitor({
      folders: [
        { key: 'FileLedger.Location', path: path.join(dir, 'ledger') },
        { key: 'Consensus.WALDir', path: file },
      ],
      thresholds: defaults,
      recheckIntervalMs: 60_000,
      logger,
      metrics: new DisabledProvider(),
    });
    await monitor.refresh();
    await monitor.refresh();
    expect(await monitor.check()).toEqual({ ok: true });
    expect(monitor.report.volumes).toEqual([]);
    expect(monitor.report.unmeasured).toEqual([
      { key: 'FileLedger.Location', path: path.join(dir, 'ledger'), missing: true, problem: 'does not exist (yet)' },
      { key: 'Consensus.WALDir', path: file, missing: false, problem: 'is not a folder' },
    ]);
    expect(lines).toEqual([
      ['warn', expect.stringContaining(`node data folder FileLedger.Location ${path.join(dir, 'ledger')} does not exist (yet)`) as string],
      ['warn', `node data folder Consensus.WALDir ${file} cannot be measured: is not a folder`],
    ]);

    await mkdir(path.join(dir, 'ledger'));
    await monitor.refresh();
    expect(monitor.report.volumes.map((volume) => volume.folder.key)).toEqual(['FileLedger.Location']);
    expect(lines[2]).toEqual([
      'info',
      expect.stringContaining(`node data folder FileLedger.Location ${path.join(dir, 'ledger')} can be measured now`) as string,
    ]);
    monitor.stop();
  });
});
