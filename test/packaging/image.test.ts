/**
 * The container image (Dockerfile), built here with `make image` on the local base and run the way
 * an operator would: read-only root filesystem, host network, a config mounted at
 * /etc/hyperledger/fabric, stopped with `docker stop`.
 */
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { request } from '../support/http';
import { listeningPorts } from '../support/listening-ports';
import { buildTestImage, delay, headCommit, packageVersion, run, testImage } from './image-build';

const execFileAsync = promisify(execFile);

interface ContainerState {
  Running: boolean;
  ExitCode: number;
  OOMKilled: boolean;
}
interface Inspected {
  Id: string;
  Config: { User: string; Labels: Record<string, string>; Env: string[]; Entrypoint: string[] };
  HostConfig: { ReadonlyRootfs: boolean; NetworkMode: string };
  State: ContainerState;
}

/** The container's output: the service logs to stderr, which `docker logs` replays on its own stderr. */
async function containerLogs(id: string): Promise<string> {
  return run('sh', ['-c', 'docker logs "$1" 2>&1', 'sh', id]);
}

async function inspect(id: string): Promise<Inspected> {
  const [first] = JSON.parse(await run('docker', ['inspect', id])) as Inspected[];
  if (!first) throw new Error(`docker inspect ${id}: nothing`);
  return first;
}

describe('the fabric-ops image', () => {
  const name = `fabric-ops-image-test-${process.pid}`;
  let commit: string;
  let version: string;
  let configDir: string;
  let port: number;
  let containerId = '';

  beforeAll(async () => {
    commit = await headCommit();
    version = await packageVersion();
    await buildTestImage(commit);
    configDir = await mkdtemp(join(tmpdir(), 'fabric-ops-image-config-'));
    await chmod(configDir, 0o755); // readable by the image's UID 10001
    // Only the mounted file names 127.0.0.1 and port 0 (the image's default is 0.0.0.0:9443): the
    // bound port, read back from the "listening on" line, answering shows the file was read.
    await writeFile(
      join(configDir, 'core.yaml'),
      [
        'operations:',
        '  listenAddress: 127.0.0.1:0',
        '  healthCheck:',
        '    containerRuntime:',
        '      type: none',
        'metrics:',
        '  provider: prometheus',
        '',
      ].join('\n'),
      { mode: 0o644 },
    );
    containerId = (
      await run('docker', ['run', '-d', '--name', name, '--read-only', '--network', 'host', '-v', `${configDir}:/etc/hyperledger/fabric:ro`, testImage])
    ).trim();
    const deadline = Date.now() + 30_000;
    for (;;) {
      const bound = /listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(await containerLogs(containerId).catch(() => ''))?.[1];
      const answer = bound ? await request(`http://127.0.0.1:${bound}/healthz`, { timeoutMs: 1000 }).catch(() => null) : null;
      if (answer?.status === 200) {
        port = Number(bound);
        break;
      }
      if (Date.now() > deadline || !(await inspect(containerId)).State.Running) {
        const logs = await containerLogs(containerId).catch((error: Error) => error.message);
        throw new Error(`the container did not log a 127.0.0.1 port and answer /healthz there; its output:\n${logs}`);
      }
      await delay(200);
    }
  }, 25 * 60_000);

  afterAll(async () => {
    await run('docker', ['rm', '-f', name]).catch(() => undefined);
    if (configDir) await rm(configDir, { recursive: true, force: true });
  });

  it('answers /healthz and /version with the baked commit and the package version', async () => {
    const health = await request(`http://127.0.0.1:${port}/healthz`);
    expect(health.status).toBe(200);
    expect(health.json).toMatchObject({ status: 'OK' });
    const answer = await request(`http://127.0.0.1:${port}/version`);
    expect(answer.status).toBe(200);
    expect(answer.json).toEqual({ CommitSHA: commit, Version: version });
  });

  it('read the configuration mounted at /etc/hyperledger/fabric (FABRIC_CFG_PATH)', async () => {
    const logs = await containerLogs(containerId);
    expect(logs).toContain('core.yaml at /etc/hyperledger/fabric/core.yaml (peer dialect)');
    expect(logs).toContain(`listening on http://127.0.0.1:${port}`);
    const metrics = await request(`http://127.0.0.1:${port}/metrics`);
    expect(metrics.status).toBe(200); // provider prometheus, from the mounted file
    const details = await inspect(containerId);
    expect(details.Config.Env).toContain('FABRIC_CFG_PATH=/etc/hyperledger/fabric');
  });

  it('runs as the fixed non-root UID:GID 10001:10001 on a read-only root filesystem, node as PID 1', async () => {
    const details = await inspect(containerId);
    expect(details.Config.User).toBe('10001:10001');
    expect(details.HostConfig.ReadonlyRootfs).toBe(true);
    const top = (await run('docker', ['top', containerId, '-o', 'pid,uid,gid,args'])).trim().split('\n').slice(1);
    expect(top).toHaveLength(1);
    expect(top[0]?.trim().split(/\s+/).slice(1, 4)).toEqual(['10001', '10001', 'node']);
    const pid1 = await run('docker', ['exec', containerId, 'cat', '/proc/1/cmdline']);
    expect(pid1.split('\0').filter(Boolean)).toEqual(['node', '--disable-sigusr1', '/opt/fabric-ops/dist/cli.js']);
    await expect(run('docker', ['exec', containerId, 'sh', '-c', 'echo x > /opt/fabric-ops/written'])).rejects.toThrow(/Read-only file system/);
  });

  it('carries the OCI labels, and production dependencies only', async () => {
    const labels = (await inspect(testImage)).Config.Labels;
    expect(labels).toMatchObject({
      'org.opencontainers.image.title': 'fabric-ops',
      'org.opencontainers.image.version': version,
      'org.opencontainers.image.revision': commit,
      'org.opencontainers.image.licenses': 'Apache-2.0',
    });
    expect(labels['org.opencontainers.image.source']).toBeDefined();
    // `make image` also tags fabric-ops:<version>, the Helm chart's default image; with IMAGE=x, x only.
    const tags = async (args: string[]): Promise<string[]> =>
      [...(await run('make', ['-n', 'image', ...args])).matchAll(/-t (\S+)/g)].map((match) => match[1] ?? '');
    expect(await tags([])).toEqual(['fabric-ops:latest', `fabric-ops:${version}`]);
    expect(await tags([`IMAGE=${testImage}`])).toEqual([testImage]);
    expect(Date.parse(labels['org.opencontainers.image.created'] ?? '')).not.toBeNaN();
    const modules = (await run('docker', ['run', '--rm', '--network', 'none', '--entrypoint', 'ls', testImage, '/opt/fabric-ops/node_modules'])).split('\n');
    // The packages the bundle leaves outside (scripts/bundle.js), nothing bundled, no dev dependency.
    expect(modules).toEqual(expect.arrayContaining(['@grpc', 'hot-shots', 'yaml', 'zod']));
    for (const absent of ['express', 'bunyan', 'convict', '@kubernetes', 'prom-client', 'typescript', 'jest', 'ts-jest', 'testcontainers', 'statsd', 'esbuild'])
      expect(modules).not.toContain(absent);
    const files = (
      await run('docker', [
        'run',
        '--rm',
        '--network',
        'none',
        '--entrypoint',
        'node',
        testImage,
        '-e',
        "const fs = require('fs'), path = require('path'); const walk = (d) => fs.readdirSync(d, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? walk(path.join(d, e.name)) : [path.join(d, e.name)])); console.log(walk('/opt/fabric-ops').join('\\n'))",
      ])
    ).split('\n');
    expect(files.filter((file) => /\.(d\.[cm]?ts|map)$/.test(file))).toEqual([]);
    expect(files.filter((file) => file.startsWith('/opt/fabric-ops/dist/')).sort()).toEqual([
      '/opt/fabric-ops/dist/build-info.json',
      '/opt/fabric-ops/dist/cli-command.js',
      '/opt/fabric-ops/dist/cli-command.js.LEGAL.txt',
      '/opt/fabric-ops/dist/cli.js',
      '/opt/fabric-ops/dist/health/cri.proto',
      '/opt/fabric-ops/dist/kubernetes-client.mjs',
      '/opt/fabric-ops/dist/kubernetes-client.mjs.LEGAL.txt',
    ]);
    expect(files).toContain('/opt/fabric-ops/LICENSE');
    // Every licence file a bundle names beside itself ships with it.
    const bundleNotices = await run('docker', [
      'run',
      '--rm',
      '--network',
      'none',
      '--entrypoint',
      'node',
      testImage,
      '-e',
      "process.stdout.write(require('fs').readFileSync('/opt/fabric-ops/dist/cli-command.js', 'utf8').slice(-200))",
    ]);
    expect(bundleNotices).toMatch(/see cli-command\.js\.LEGAL\.txt/);
  });

  it('ignores SIGUSR1 (no V8 inspector opens) and keeps serving; refuses an inspector NODE_OPTIONS would open', async () => {
    const hostPid = JSON.parse(await run('docker', ['inspect', '--format', '{{json .State.Pid}}', containerId])) as number;
    expect(await listeningPorts(hostPid)).toEqual([port]);
    for (let i = 0; i < 3; i++) {
      await run('docker', ['kill', '--signal', 'SIGUSR1', containerId]);
      await delay(300);
    }
    expect(await listeningPorts(hostPid)).toEqual([port]);
    expect((await inspect(containerId)).State.Running).toBe(true);
    expect(await containerLogs(containerId)).not.toMatch(/Debugger listening|Starting inspector/);
    expect((await request(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);
    const refused = await execFileAsync('docker', ['run', '--rm', '--network', 'none', '-e', 'NODE_OPTIONS=--inspect=127.0.0.1:0', testImage]).then(
      () => ({ code: 0, stderr: '' }),
      (error: { code: number; stderr: string }) => error,
    );
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/a V8 inspector is listening at ws:\/\/127\.0\.0\.1:\d+\/\S+ \(NODE_OPTIONS contains --inspect\)/);
  });

  it('stops on SIGTERM with exit status 0 within docker stop -t 2 (no SIGKILL)', async () => {
    const started = Date.now();
    await run('docker', ['stop', '-t', '2', containerId]);
    const tookMs = Date.now() - started;
    const state = (await inspect(containerId)).State;
    expect(state.Running).toBe(false);
    // 137 would mean docker had to SIGKILL it after the 2 s grace period.
    expect(state.ExitCode).toBe(0);
    expect(await containerLogs(containerId)).toContain('received SIGTERM; stopping');
    console.info(`docker stop -t 2 returned after ${tookMs} ms, exit status ${state.ExitCode}`);
  });
});
