/**
 * Companion mode, the node's disk (issue 29, item 2; docs/companion.md "Disk"): a peer's core.yaml
 * (Fabric's recorded 2.5.12 sample, with Fabric's CORE_* overrides) whose peer.fileSystemPath is on
 * a small tmpfs this test mounts and fills. The gauges are compared with what df(1) says of the
 * volume; filling it turns the `disk` checker and, on a real Prometheus loading
 * deploy/prometheus/companion-alert-rules.yaml, the FabricOpsNodeDiskLow alert on, and deleting
 * the file turns both off. The snapshots folder (ledger.snapshots.rootDir) does not exist at first
 * (a new node), then shares the volume, then gets a volume of its own.
 *
 * Needs root and mount(8): without them the test fails naming why (never skips).
 */
import { execFile, type ChildProcess } from 'node:child_process';
import { copyFile, mkdir, mkdtemp, rm, rmdir, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { stringify } from 'yaml';
import { startOperationsSystem, type OperationsSystem } from '../../../src/system';
import { releaseDir } from '../../support/fabric-double';
import { request } from '../../support/http';
import { LogCapture } from '../../support/log-capture';
import { requireCommand } from '../../support/prerequisites';
import { spawnPrometheus } from '../../support/prometheus-server';
import { waitFor } from '../../support/wait';

const execFileAsync = promisify(execFile);
const MiB = 1024 * 1024;
const rulesDir = path.resolve(__dirname, '..', '..', '..', 'deploy', 'prometheus');

let dir: string;
/** The tmpfs holding peer.fileSystemPath: 8 MiB, 64 inodes. */
let volume: string;
let dataFolder: string;
let snapshotsFolder: string;
const mounts: string[] = [];
let system: OperationsSystem;
let logs: LogCapture;

async function mountTmpfs(at: string, options: string): Promise<void> {
  await mkdir(at, { recursive: true });
  try {
    await execFileAsync('mount', ['-t', 'tmpfs', '-o', options, 'tmpfs', at]);
  } catch (error) {
    const detail = (error as { stderr?: string }).stderr?.trim() || (error as Error).message;
    throw new Error(
      `DISK TEST CANNOT RUN: \`mount -t tmpfs -o ${options} tmpfs ${at}\` failed (${detail}); this test makes a small file system to fill and needs root (uid ${process.getuid?.() ?? '?'}) and mount(8)`,
      { cause: error },
    );
  }
  mounts.push(at);
}

/** What df(1) says of the volume holding `folder`: bytes as its Size and Avail columns, inodes as Inodes and IFree. */
async function df(folder: string): Promise<{ size: number; avail: number; itotal: number; iavail: number }> {
  const { stdout } = await execFileAsync('df', ['-B1', '--output=size,avail,itotal,iavail', folder]);
  const figures = (stdout.trim().split('\n')[1] ?? '').trim().split(/\s+/).map(Number);
  const [size, avail, itotal, iavail] = figures;
  if (
    figures.length !== 4 ||
    figures.some((n) => !Number.isFinite(n)) ||
    size === undefined ||
    avail === undefined ||
    itotal === undefined ||
    iavail === undefined
  )
    throw new Error(`df of ${folder} said: ${stdout}`);
  return { size, avail, itotal, iavail };
}

interface Series {
  labels: Record<string, string>;
  value: number;
}

/** The series of one metric in the companion's Prometheus exposition. */
async function series(name: string): Promise<Series[]> {
  const answer = await request(`${system.url}/metrics`);
  if (answer.status !== 200) throw new Error(`GET /metrics: ${answer.status} ${answer.body}`);
  const found: Series[] = [];
  for (const line of answer.body.split('\n')) {
    const match = new RegExp(`^${name}\\{(.*)\\} (\\S+)$`).exec(line);
    if (!match) continue;
    const labels: Record<string, string> = {};
    for (const pair of (match[1] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) labels[pair[1] ?? ''] = JSON.parse(`"${pair[2] ?? ''}"`) as string;
    found.push({ labels, value: Number(match[2]) });
  }
  return found;
}

/** The `disk` entry of the companion's /healthz (undefined while it passes). The node checker fails throughout: nothing listens on its port 1. */
async function diskFailure(): Promise<string | undefined> {
  const answer = await request(`${system.url}/healthz`);
  const body = answer.json as { status: string; failed_checks?: Array<{ component: string; reason: string }> };
  if (answer.status !== 503 || !body.failed_checks?.some((check) => check.component === 'node'))
    throw new Error(`GET /healthz: expected a 503 with the node's failure, got ${answer.status} ${answer.body}`);
  return body.failed_checks.find((check) => check.component === 'disk')?.reason;
}

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'companion-disk-'));
  volume = path.join(dir, 'volume');
  await mountTmpfs(volume, 'size=8m,nr_inodes=64');
  dataFolder = path.join(volume, 'production');
  snapshotsFolder = path.join(dataFolder, 'snapshots');
  await mkdir(dataFolder);
  await copyFile(path.join(releaseDir('2.5.12'), 'sampleconfig', 'core.yaml'), path.join(dir, 'core.yaml'));
  logs = new LogCapture();
  system = await startOperationsSystem({
    configFile: path.join(dir, 'core.yaml'),
    logStream: logs,
    env: {
      CORE_OPERATIONS_COMPANION_ENABLED: 'true',
      CORE_OPERATIONS_COMPANION_LISTENADDRESS: '127.0.0.1:0',
      CORE_OPERATIONS_HEALTHCHECK_CONTAINERRUNTIME_TYPE: 'none',
      CORE_OPERATIONS_LISTENADDRESS: '127.0.0.1:1',
      CORE_PEER_MSPCONFIGPATH: path.join(releaseDir('2.5.12'), 'crypto', 'peerOrganizations', 'org1', 'peers', 'peer0.org1', 'msp'),
      CORE_PEER_FILESYSTEMPATH: dataFolder,
      CORE_LEDGER_SNAPSHOTS_ROOTDIR: snapshotsFolder,
      // 25% of 8 MiB is 2 MiB, over the 1 MiB floor: the threshold is 2 MiB and 16 inodes.
      CORE_OPERATIONS_COMPANION_DISK_MINFREEPERCENT: '25',
      CORE_OPERATIONS_COMPANION_DISK_MINFREEBYTES: '1MiB',
      CORE_OPERATIONS_COMPANION_DISK_RECHECKINTERVAL: '200ms',
    },
  });
}, 30_000);

afterAll(async () => {
  await system?.stop(0);
  for (const at of mounts.reverse()) await execFileAsync('umount', [at]);
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe("companion mode: the node's data volumes", () => {
  test("reads the keys as Fabric's sample core.yaml and the CORE_* overrides name them", () => {
    expect(system.config.companion?.dataFolders).toEqual([
      { key: 'peer.fileSystemPath', path: dataFolder },
      { key: 'ledger.snapshots.rootDir', path: snapshotsFolder },
    ]);
    expect(system.config.companion?.disk).toEqual({ minFreePercent: 25, minFreeBytes: MiB, recheckIntervalMs: 200 });
  });

  test("the gauges are df's figures of the volume, with the threshold the checker uses", async () => {
    const figures = await df(dataFolder);
    expect(figures.size).toBe(8 * MiB);
    const labels = { folder: dataFolder, key: 'peer.fileSystemPath' };
    expect(await series('companion_disk_size_bytes')).toEqual([{ labels, value: figures.size }]);
    expect(await series('companion_disk_free_bytes')).toEqual([{ labels, value: figures.avail }]);
    expect(await series('companion_disk_inodes')).toEqual([{ labels, value: figures.itotal }]);
    expect(await series('companion_disk_free_inodes')).toEqual([{ labels, value: figures.iavail }]);
    expect(await series('companion_disk_min_free_bytes')).toEqual([{ labels, value: 2 * MiB }]);
    expect(await series('companion_disk_min_free_inodes')).toEqual([{ labels, value: Math.ceil(figures.itotal / 4) }]);
  });

  test('a data folder that does not exist yet is reported once and fails nothing; created, it is measured, on the volume it shares', async () => {
    expect(await diskFailure()).toBeUndefined();
    expect(await diskFailure()).toBeUndefined();
    const missing = logs.matching(/node data folder ledger\.snapshots\.rootDir .* does not exist \(yet\)/);
    expect(missing).toHaveLength(1);
    expect(missing[0]).toContain(snapshotsFolder);

    await mkdir(snapshotsFolder);
    try {
      expect(await diskFailure()).toBeUndefined();
      expect(logs.matching(/node data folder ledger\.snapshots\.rootDir .* can be measured now/)).toEqual([
        expect.stringContaining(
          `node data folder ledger.snapshots.rootDir ${snapshotsFolder} can be measured now: on the volume of peer.fileSystemPath ${dataFolder} (also holding ledger.snapshots.rootDir)`,
        ),
      ]);
      // One volume, one series: named by the first of its folders.
      expect((await series('companion_disk_free_bytes')).map((s) => s.labels)).toEqual([{ folder: dataFolder, key: 'peer.fileSystemPath' }]);
    } finally {
      await rmdir(snapshotsFolder);
    }
  });

  test('filled under its threshold the disk checker fails, naming folder, key, free bytes and threshold; the file deleted, it passes', async () => {
    const filler = path.join(dataFolder, 'blocks-filler');
    await writeFile(filler, Buffer.alloc(6.5 * MiB, 1));
    try {
      const reason = await diskFailure();
      const { avail } = await df(dataFolder);
      expect(avail).toBeLessThan(2 * MiB);
      expect(avail).toBeGreaterThanOrEqual(MiB);
      expect(reason).toBe(
        `peer.fileSystemPath ${dataFolder}: ${avail} bytes free (${(avail / MiB).toFixed(1)} MiB, ${((avail / (8 * MiB)) * 100).toFixed(1)}% of 8.0 MiB), ` +
          'under the threshold of 2097152 bytes (2.0 MiB: the larger of 25% of the volume and the 1.0 MiB floor)',
      );
      expect(logs.matching(/node data volume low: peer\.fileSystemPath/)).toHaveLength(1);
    } finally {
      await rm(filler);
    }
    expect(await diskFailure()).toBeUndefined();
    expect(logs.matching(/node data volume of peer\.fileSystemPath .*above its thresholds again/)).toHaveLength(1);
  });

  test('the gauges follow the volume every recheckInterval, without a /healthz call', async () => {
    const filler = path.join(dataFolder, 'slow-filler');
    await writeFile(filler, Buffer.alloc(3 * MiB, 1));
    try {
      const { avail } = await df(dataFolder);
      const seen = await waitFor('companion_disk_free_bytes to show the 3 MiB written', async () => {
        const [free] = await series('companion_disk_free_bytes');
        return free?.value === avail ? free.value : undefined;
      });
      expect(seen).toBe(avail);
    } finally {
      await rm(filler);
    }
  });

  test('out of inodes (under 25% of 64 free) the checker fails on inodes, whatever bytes are free; the files deleted, it passes', async () => {
    const folder = path.join(dataFolder, 'many-files');
    await mkdir(folder);
    const { itotal } = await df(dataFolder);
    // Leave 10 free: fewer than the 16 (25% of 64) the threshold asks for.
    let made = 0;
    while ((await df(dataFolder)).iavail > 10) await writeFile(path.join(folder, `f${made++}`), '');
    try {
      const { iavail, avail } = await df(dataFolder);
      expect(await diskFailure()).toBe(
        `peer.fileSystemPath ${dataFolder}: ${iavail} inodes free (${((iavail / itotal) * 100).toFixed(1)}% of ${itotal}), under the threshold of ${Math.ceil(itotal / 4)} inodes (25% of the volume's)`,
      );
      expect(avail).toBeGreaterThan(2 * MiB);
    } finally {
      await rm(folder, { recursive: true });
    }
    expect(await diskFailure()).toBeUndefined();
  });

  test('a snapshots folder on a volume of its own has its own series, and fails on its own', async () => {
    await mountTmpfs(snapshotsFolder, 'size=4m');
    try {
      expect(await diskFailure()).toBeUndefined();
      const sizes = (await series('companion_disk_size_bytes')).map((s) => [s.labels.key, s.labels.folder, s.value]);
      expect(sizes).toHaveLength(2);
      expect(sizes).toEqual(
        expect.arrayContaining([
          ['peer.fileSystemPath', dataFolder, 8 * MiB],
          ['ledger.snapshots.rootDir', snapshotsFolder, 4 * MiB],
        ]),
      );
      await writeFile(path.join(snapshotsFolder, 'snapshot-filler'), Buffer.alloc(3.5 * MiB, 1));
      const { avail } = await df(snapshotsFolder);
      expect(avail).toBeLessThan(MiB);
      expect(avail).toBeGreaterThanOrEqual(1024);
      expect(await diskFailure()).toBe(
        `ledger.snapshots.rootDir ${snapshotsFolder}: ${avail} bytes free (${(avail / 1024).toFixed(1)} KiB, ${((avail / (4 * MiB)) * 100).toFixed(1)}% of 4.0 MiB), ` +
          'under the threshold of 1048576 bytes (1.0 MiB: the larger of 25% of the volume and the 1.0 MiB floor)',
      );
    } finally {
      await execFileAsync('umount', [snapshotsFolder]);
      mounts.splice(mounts.indexOf(snapshotsFolder), 1);
      await rmdir(snapshotsFolder);
    }
    expect(await diskFailure()).toBeUndefined();
    expect((await series('companion_disk_size_bytes')).map((s) => s.labels.key)).toEqual(['peer.fileSystemPath']);
  });
});

describe('the FabricOpsNodeDiskLow alert on a real Prometheus', () => {
  let prometheus: ChildProcess | null = null;
  let output = '';
  let api: string;

  beforeAll(async () => {
    requireCommand('prometheus');
    await copyFile(path.join(rulesDir, 'companion-alert-rules.yaml'), path.join(dir, 'companion-alert-rules.yaml'));
    const config = {
      global: { scrape_interval: '1s', scrape_timeout: '1s', evaluation_interval: '1s' },
      rule_files: ['companion-alert-rules.yaml'],
      scrape_configs: [{ job_name: 'fabric-ops-companion', static_configs: [{ targets: [new URL(system.url).host] }] }],
    };
    await writeFile(path.join(dir, 'prometheus.yml'), stringify(config));
    const run = spawnPrometheus([`--config.file=${path.join(dir, 'prometheus.yml')}`, `--storage.tsdb.path=${path.join(dir, 'tsdb')}`], (chunk) => {
      output = (output + chunk).slice(-8192);
    });
    prometheus = run.child;
    api = await run.api;
  }, 40_000);

  afterAll(async () => {
    const child = prometheus;
    if (child && child.exitCode === null) {
      await new Promise<void>((done) => {
        child.once('exit', () => done());
        child.kill('SIGTERM');
      });
    }
  });

  async function alerts(): Promise<Array<{ labels: Record<string, string>; state: string }>> {
    const answer = await request(`${api}/api/v1/alerts`);
    if (answer.status !== 200) throw new Error(`Prometheus /api/v1/alerts: ${answer.status} ${answer.body}`);
    return (answer.json as { data: { alerts: Array<{ labels: Record<string, string>; state: string }> } }).data.alerts;
  }

  async function diskAlerts(): Promise<Array<{ labels: Record<string, string>; state: string }>> {
    return (await alerts()).filter((alert) => alert.labels.alertname?.startsWith('FabricOpsNodeDisk'));
  }

  const giveUpIf = (): string | undefined => (prometheus?.exitCode !== null ? `prometheus exited: ${output}` : undefined);

  test('filled, the volume raises FabricOpsNodeDiskLow, and at that rate FabricOpsNodeDiskFullWithin24h (pending: their `for` is minutes); the file deleted, FabricOpsNodeDiskLow is gone', async () => {
    // Scraped and evaluated before the fill: nothing.
    await waitFor(
      'a scrape of the companion',
      async () => {
        const answer = await request(`${api}/api/v1/query?query=${encodeURIComponent('companion_disk_free_bytes')}`);
        return answer.status === 200 && (answer.json as { data: { result: unknown[] } }).data.result.length > 0;
      },
      { timeoutMs: 30_000, everyMs: 250, giveUpIf },
    );
    expect(await diskAlerts()).toEqual([]);

    const filler = path.join(dataFolder, 'alert-filler');
    await writeFile(filler, Buffer.alloc(6.5 * MiB, 1));
    const labels = { job: 'fabric-ops-companion', instance: new URL(system.url).host, folder: dataFolder, key: 'peer.fileSystemPath', state: 'pending' };
    try {
      // 6.5 MiB written in a moment: the last 6 hours' rate (predict_linear) fills the volume within 24 hours too.
      const pending = await waitFor(
        'both disk alerts to go pending',
        async () => {
          const found = await diskAlerts();
          return found.length === 2 ? found : undefined;
        },
        { timeoutMs: 30_000, everyMs: 250, giveUpIf },
      );
      const byName = [...pending].sort((a, b) => String(a.labels.alertname).localeCompare(String(b.labels.alertname)));
      expect(byName.map((alert) => ({ ...alert.labels, state: alert.state }))).toEqual([
        { alertname: 'FabricOpsNodeDiskFullWithin24h', severity: 'warning', ...labels },
        { alertname: 'FabricOpsNodeDiskLow', severity: 'critical', ...labels },
      ]);
    } finally {
      await rm(filler);
    }
    // The prediction still remembers the burst (its window is 6 hours); the threshold alert goes at once.
    await waitFor('FabricOpsNodeDiskLow to be gone', async () => !(await diskAlerts()).some((alert) => alert.labels.alertname === 'FabricOpsNodeDiskLow'), {
      timeoutMs: 30_000,
      everyMs: 250,
      giveUpIf,
    });
  });

  test('the node the companion cannot reach raises FabricOpsCompanionNodeFailing (pending) once a /healthz run has found it unreachable', async () => {
    expect(await diskFailure()).toBeUndefined();
    const pending = await waitFor(
      'FabricOpsCompanionNodeFailing to go pending',
      async () => (await alerts()).find((alert) => alert.labels.alertname === 'FabricOpsCompanionNodeFailing'),
      { timeoutMs: 30_000, everyMs: 250, giveUpIf },
    );
    expect({ ...pending.labels, state: pending.state }).toEqual({
      alertname: 'FabricOpsCompanionNodeFailing',
      severity: 'critical',
      component: 'node',
      job: 'fabric-ops-companion',
      instance: new URL(system.url).host,
      state: 'pending',
    });
  });
});
