/**
 * The container image (Dockerfile), built here with `make image` on the local base and run the way
 * an operator would: read-only root filesystem, host network, a config mounted at
 * /etc/hyperledger/fabric, stopped with `docker stop`.
 */
import { chmod, mkdtemp, readFile, readdir, readlink, rm, writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { request } from '../support/http';
import { listeningPorts } from '../support/listening-ports';
import { freeTcpPort } from '../support/ports';
import { delay, waitFor } from '../support/wait';
import { buildTestImage, headCommit, packageVersion, repoRoot, run, testImage } from './image-build';

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
    // Only the mounted file names port 0 (the image's default is 127.0.0.1:9443): the bound port,
    // read back from the "listening on" line, answering shows the file was read.
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
    let stopped: string | undefined;
    try {
      port = await waitFor(
        'the container to log a 127.0.0.1 port and answer /healthz there',
        async () => {
          const bound = /listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(await containerLogs(containerId).catch(() => ''))?.[1];
          const answer = bound ? await request(`http://127.0.0.1:${bound}/healthz`, { timeoutMs: 1000 }).catch(() => null) : null;
          if (answer?.status === 200) return Number(bound);
          if (!(await inspect(containerId)).State.Running) stopped = 'the container stopped';
          return undefined;
        },
        { timeoutMs: 30_000, everyMs: 200, giveUpIf: () => stopped },
      );
    } catch (error) {
      const logs = await containerLogs(containerId).catch((failure: Error) => failure.message);
      throw new Error(`${(error as Error).message}; its output:\n${logs}`, { cause: error });
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
    expect(modules).toEqual(expect.arrayContaining(['@grpc', 'hot-shots', 'zod']));
    for (const absent of [
      'express',
      'bunyan',
      'convict',
      'yaml',
      '@kubernetes',
      'prom-client',
      'typescript',
      'jest',
      'ts-jest',
      'testcontainers',
      'statsd',
      'esbuild',
    ])
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
      // An inspector would bind within a few ms of the signal: none does meanwhile.
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

/** The addresses (`127.0.0.1:9443`, `[::]:9443`) this process listens on, from its namespace's tables and its own socket inodes. */
async function listeningAddresses(pid: number): Promise<string[]> {
  const inodes = new Set<string>();
  for (const fd of await readdir(`/proc/${pid}/fd`)) {
    const match = /^socket:\[(\d+)\]$/.exec(await readlink(`/proc/${pid}/fd/${fd}`).catch(() => ''));
    if (match?.[1]) inodes.add(match[1]);
  }
  const addresses: string[] = [];
  for (const table of ['tcp', 'tcp6']) {
    for (const row of (await readFile(`/proc/${pid}/net/${table}`, 'utf8')).trim().split('\n').slice(1)) {
      const [, local = '', , state, , , , , , inode = ''] = row.trim().split(/\s+/);
      if (state !== '0A' || !inodes.has(inode)) continue;
      const [hex = '', portHex = ''] = local.split(':');
      // The kernel prints each 32-bit word of the address in host (little-endian) order.
      const bytes = (hex.match(/.{8}/g) ?? []).flatMap((word) => (word.match(/../g) ?? []).reverse().map((byte) => parseInt(byte, 16)));
      const port = parseInt(portHex, 16);
      if (bytes.length === 4) addresses.push(`${bytes.join('.')}:${port}`);
      else addresses.push(`[${bytes.every((byte) => byte === 0) ? '::' : Buffer.from(bytes).toString('hex')}]:${port}`);
    }
  }
  return addresses.sort();
}

/** Whether a TCP connection to host:port is accepted (true) or refused (false); anything else throws. */
function accepts(host: string, port: number): Promise<boolean> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host, port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', (error: NodeJS.ErrnoException) => (error.code === 'ECONNREFUSED' ? resolve(false) : reject(error)));
  });
}

/** docs/container.md (the README's until the docs moved to docs/), "Container image": the first `docker run` of its first sh block, in words (continuations joined, the comment dropped). */
async function readmeFirstDockerRun(): Promise<string[]> {
  const readme = await readFile(join(repoRoot, 'docs', 'container.md'), 'utf8');
  const section = readme.split(/^## /m).find((part) => part.startsWith('Container image\n'));
  if (section === undefined) throw new Error('docs/container.md has no "## Container image" section');
  const block = /```sh\n([\s\S]*?)```/.exec(section)?.[1];
  if (block === undefined) throw new Error('docs/container.md, "Container image": no sh block');
  const line = block
    .replace(/\\\n\s*/g, ' ')
    .split('\n')
    .find((text) => text.startsWith('docker run '));
  if (line === undefined) throw new Error('docs/container.md, "Container image": no docker run line in its first sh block');
  const words = line
    .replace(/\s+#\s.*$/, '')
    .trim()
    .split(/\s+/);
  // Plain words only: a quote would need a shell, and the test would not run it as written.
  expect(words.filter((word) => /['"$`\\]/.test(word))).toEqual([]);
  return words;
}

/**
 * Issue 30 item 16: the image's built-in configuration served PUT /logspec over plain HTTP on every
 * interface, and the README's first `docker run` published it. The first `docker run` of the
 * README, run as written (the image is this suite's tag, and it runs detached under a name): the
 * service binds 127.0.0.1:9443 only, answers there (PUT /logspec included: the host's own
 * operator), and a connection to another address of the host is refused. Fabric's behaviour is one
 * variable away: with CORE_OPERATIONS_LISTENADDRESS=0.0.0.0:<port> the same connection is accepted
 * (which also shows the refusal above is not this machine's doing).
 */
describe("the image's default configuration, through the README's first docker run", () => {
  const name = `fabric-ops-image-readme-${process.pid}`;
  const everywhere = `fabric-ops-image-everywhere-${process.pid}`;
  let words: string[];
  let containerId = '';

  const hostPid = async (id: string): Promise<number> => JSON.parse(await run('docker', ['inspect', '--format', '{{json .State.Pid}}', id])) as number;

  beforeAll(async () => {
    words = await readmeFirstDockerRun();
    await buildTestImage(await headCommit());
    // The command binds the host's 127.0.0.1:9443 (host network): nothing else may hold it.
    const holder = await accepts('127.0.0.1', 9443);
    if (holder)
      throw new Error("127.0.0.1:9443 is taken on this host: the README's first docker run (which binds it) cannot run here; stop what listens there");
    expect(words.slice(0, 2)).toEqual(['docker', 'run']);
    expect(words.at(-1)).toBe('fabric-ops');
    const args = ['run', '-d', '--name', name, ...words.slice(2, -1), testImage];
    containerId = (await run('docker', args)).trim();
    await waitFor(
      `the README's first docker run (docker ${args.join(' ')}) answering /healthz on 127.0.0.1:9443`,
      async () => (await request('http://127.0.0.1:9443/healthz', { timeoutMs: 1000 })).status === 200,
      { timeoutMs: 30_000, everyMs: 200 },
    ).catch(async (error: Error) => {
      const logs = await containerLogs(containerId).catch((logError: Error) => logError.message);
      throw new Error(`${error.message}; the container's output:\n${logs}`);
    });
  }, 25 * 60_000);

  afterAll(async () => {
    await run('docker', ['rm', '-f', name]).catch(() => undefined);
    await run('docker', ['rm', '-f', everywhere]).catch(() => undefined);
  });

  it('is the image with its built-in configuration: no config mounted, no address set, host network', () => {
    expect(words).not.toContain('-v');
    expect(words).not.toContain('-e');
    expect(words.join(' ')).toMatch(/--network host/);
  });

  it('listens on 127.0.0.1:9443 over plain HTTP and nowhere else, and says so', async () => {
    expect(await listeningAddresses(await hostPid(containerId))).toEqual(['127.0.0.1:9443']);
    const logs = await containerLogs(containerId);
    expect(logs).toContain('core.yaml at /etc/hyperledger/fabric/core.yaml (peer dialect)');
    expect(logs).toContain('listening on http://127.0.0.1:9443');
  });

  it("answers the host's own operator on 127.0.0.1: /healthz, /version, /metrics, and PUT /logspec", async () => {
    expect((await request('http://127.0.0.1:9443/healthz')).json).toMatchObject({ status: 'OK' });
    expect((await request('http://127.0.0.1:9443/version')).status).toBe(200);
    expect((await request('http://127.0.0.1:9443/metrics')).status).toBe(200);
    const put = await request('http://127.0.0.1:9443/logspec', { method: 'PUT', body: JSON.stringify({ spec: 'gossip=debug:info' }) });
    expect(put.status).toBe(204);
    expect((await request('http://127.0.0.1:9443/logspec')).json).toEqual({ spec: 'gossip=debug:info' });
  });

  it('refuses a connection to another address of the host (127.0.0.2:9443): PUT /logspec is not reachable there', async () => {
    expect(await accepts('127.0.0.2', 9443)).toBe(false);
    await expect(request('http://127.0.0.2:9443/logspec', { method: 'PUT', body: JSON.stringify({ spec: 'debug' }) })).rejects.toThrow(/ECONNREFUSED/);
    expect((await request('http://127.0.0.1:9443/logspec')).json).toEqual({ spec: 'gossip=debug:info' });
  });

  it("keeps Fabric's behaviour by configuration: CORE_OPERATIONS_LISTENADDRESS=0.0.0.0:<port> accepts the same connection", async () => {
    const port = await freeTcpPort();
    const id = (
      await run('docker', [
        'run',
        '-d',
        '--name',
        everywhere,
        '--read-only',
        '--network',
        'host',
        '-e',
        `CORE_OPERATIONS_LISTENADDRESS=0.0.0.0:${port}`,
        testImage,
      ])
    ).trim();
    await waitFor(
      `the image with 0.0.0.0:${port} answering on 127.0.0.2`,
      async () => (await request(`http://127.0.0.2:${port}/healthz`, { timeoutMs: 1000 })).status === 200,
      {
        timeoutMs: 30_000,
        everyMs: 200,
      },
    );
    expect(await listeningAddresses(await hostPid(id))).toEqual([`0.0.0.0:${port}`]);
    expect(await accepts('127.0.0.2', port)).toBe(true);
    const put = await request(`http://127.0.0.2:${port}/logspec`, { method: 'PUT', body: JSON.stringify({ spec: 'debug' }) });
    expect(put.status).toBe(204);
    expect(await containerLogs(id)).toContain(`listening on http://0.0.0.0:${port}`);
  });
});
