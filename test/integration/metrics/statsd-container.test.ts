/**
 * The operations service pushing to a StatsD daemon in a container: an image built here
 * from the npm package on the local Node base (nothing pulled), run with host networking.
 */
import { execFile } from 'node:child_process';
import { cp, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { PassThrough } from 'node:stream';
import { promisify } from 'node:util';
import type { StartedTestContainer } from 'testcontainers';
import { startOperationsSystem, type OperationsSystem } from '../../../src';
import { request } from '../../support/http';
import { requireCommand } from '../../support/prerequisites';
import { testConfig } from '../../support/config';
import { daemonConfig, readReceived, waitForReceived, waitUntilListening, type StatsdNetwork } from '../../support/statsd-daemon';
import { freeTcpPort, freeUdpPort } from '../../support/ports';

// Before testcontainers is loaded (it is imported in beforeAll): never look for a gateway
// by pulling an image, never start the reaper.
process.env.TESTCONTAINERS_HOST_OVERRIDE = 'localhost';
process.env.TESTCONTAINERS_RYUK_DISABLED = 'true';

const execFileAsync = promisify(execFile);
const repoRoot = resolve(__dirname, '..', '..', '..');
const image = 'fabric-ops/statsd-test:latest';
const baseImage = 'fabric-ops/node-base:24';

async function run(command: string, args: string[], env: NodeJS.ProcessEnv = process.env): Promise<void> {
  try {
    await execFileAsync(command, args, { cwd: repoRoot, env, maxBuffer: 16 * 1024 * 1024 });
  } catch (error) {
    const { stderr = '', stdout = '' } = error as { stderr?: string; stdout?: string };
    throw new Error(`${command} ${args.join(' ')} failed: ${stderr.trim() || stdout.trim() || String(error)}`, { cause: error });
  }
}

/** The image, built from a small context: the daemon's package, its dependency, the backend and the shim. */
async function buildImage(): Promise<void> {
  await run(join(repoRoot, 'scripts', 'build-node-base.sh'), [baseImage]);
  const context = await mkdtemp(join(tmpdir(), 'fabric-ops-statsd-image-'));
  try {
    await mkdir(join(context, 'node_modules'));
    await cp(join(repoRoot, 'node_modules', 'statsd'), join(context, 'node_modules', 'statsd'), { recursive: true });
    await cp(join(repoRoot, 'node_modules', 'generic-pool'), join(context, 'node_modules', 'generic-pool'), { recursive: true });
    for (const file of ['Dockerfile', 'flush-file-backend.js', 'util-log-shim.js']) {
      await cp(join(repoRoot, 'test', 'docker', 'statsd', file), join(context, file));
    }
    await run('docker', ['build', '--network', 'host', '--build-arg', `BASE_IMAGE=${baseImage}`, '-t', image, context], {
      ...process.env,
      DOCKER_BUILDKIT: '0',
    });
  } finally {
    await rm(context, { recursive: true, force: true });
  }
}

describe('StatsD daemon in a container (testcontainers)', () => {
  let container: StartedTestContainer | undefined;
  let dataDir: string;
  const ports: Record<StatsdNetwork, number> = { udp: 0, tcp: 0 };
  const flushFile = (): string => join(dataDir, 'flushes.jsonl');

  beforeAll(async () => {
    requireCommand('docker');
    await buildImage();
    dataDir = await mkdtemp(join(tmpdir(), 'fabric-ops-statsd-data-'));
    // Probed, not port 0: statsd 0.9 reads port 0 as unset (`config.port || 8125`,
    // `config.mgmt_port || 8126`) and logs no bound port.
    ports.udp = await freeUdpPort();
    ports.tcp = await freeTcpPort();
    await writeFile(
      join(dataDir, 'config.js'),
      daemonConfig({
        servers: [
          { network: 'udp', port: ports.udp },
          { network: 'tcp', port: ports.tcp },
        ],
        mgmtPort: await freeTcpPort(),
        flushFile: '/data/flushes.jsonl',
        backend: '/app/flush-file-backend.js',
        generation: 1,
        flushIntervalMs: 100,
      }),
    );
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded after the environment above is set (an import would be hoisted above it)
    const { GenericContainer } = require('testcontainers') as typeof import('testcontainers');
    container = await new GenericContainer(image)
      .withNetworkMode('host')
      .withBindMounts([{ source: dataDir, target: '/data', mode: 'rw' }])
      .withCommand(['/data/config.js'])
      .start();
    const started = container;
    const failure = (): string | null => null;
    for (const network of ['udp', 'tcp'] as const) {
      await waitUntilListening(network, ports[network], flushFile(), 1, failure, 30_000).catch(async (error: Error) => {
        const logs = await started.logs();
        const text = await new Promise<string>((done) => {
          let out = '';
          logs.on('data', (chunk: Buffer | string) => (out += chunk.toString()));
          setTimeout(() => done(out), 500);
        });
        throw new Error(`${error.message}; container output:\n${text}`);
      });
    }
  }, 180_000);

  afterAll(async () => {
    await container?.stop();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  describe.each(['udp', 'tcp'] as const)('the service over %s', (network) => {
    let system: OperationsSystem;

    beforeAll(async () => {
      system = await startOperationsSystem({
        config: testConfig({
          metrics: {
            provider: 'statsd',
            statsd: { network, address: { host: '127.0.0.1', port: ports[network] }, writeIntervalMs: 200, prefix: `${network}peer.` },
          },
        }),
        logStream: new PassThrough().resume(),
      });
    });

    afterAll(async () => {
      await system?.stop();
    });

    test('pushes its own metrics and the embedding code’s, which arrive in the daemon', async () => {
      const prefix = `${network}peer.`;
      for (let i = 0; i < 3; i += 1) expect((await request(`${system.url}/healthz`)).status).toBe(200);
      system.setLogSpec('debug');
      const deliveries = system.metrics.newCounter({
        namespace: 'app',
        name: 'deliveries',
        help: 'h',
        labelNames: ['channel'],
        statsdFormat: '%{#fqname}.%{channel}',
      });
      deliveries.with({ channel: 'mychannel' }).add(11);
      system.metrics.newHistogram({ namespace: 'app', name: 'commit_seconds', help: 'h' }).observe(0.042);

      const version = system.version.Version.replace(/[.|:\s]/g, '_');
      const received = await waitForReceived(
        () => readReceived(flushFile(), 1),
        (r) =>
          r.counters[`${prefix}operations.requests.healthz.200`] === 3 &&
          r.counters[`${prefix}app.deliveries.mychannel`] === 11 &&
          r.timers[`${prefix}app.commit_seconds`] !== undefined &&
          r.gauges[`${prefix}fabric_version.${version}`] !== undefined
            ? r
            : undefined,
        `${network} values from the service`,
      );
      expect(received.gauges[`${prefix}fabric_version.${version}`]).toBe(1);
      expect(received.counters[`${prefix}logging.spec_changes`]).toBe(1);
      expect(received.timers[`${prefix}app.commit_seconds`]).toEqual([42]);
      expect(received.counters[`${prefix}logging.entries_checked.info`]).toBeGreaterThan(0);
      expect(received.badLines).toBe(0);
    });
  });
});
