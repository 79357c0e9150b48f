/**
 * The chaincode example's image (examples/chaincode-as-a-service/Dockerfile), built the way its
 * Dockerfile says (fabric-ops from `npm pack` of this repository) on the local Node base, run with
 * the host network, and stopped with `docker stop`: node is PID 1 there, which ignores SIGTERM
 * unless the process handles it (issue 21 item 2).
 */
import { cp, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { requireBuiltCli } from '../support/cli';
import { request } from '../support/http';
import { freeTcpPort } from '../support/ports';
import { requireCommand } from '../support/prerequisites';
import { waitFor } from '../support/wait';
import { localBase, repoRoot, run } from './image-build';

const image = 'kv-chaincode:packaging-test';

interface Inspected {
  State: { Running: boolean; ExitCode: number };
}

async function inspect(id: string): Promise<Inspected> {
  const [first] = JSON.parse(await run('docker', ['inspect', id])) as Inspected[];
  if (!first) throw new Error(`docker inspect ${id}: nothing`);
  return first;
}

async function containerLogs(id: string): Promise<string> {
  return run('sh', ['-c', 'docker logs "$1" 2>&1', 'sh', id]);
}

describe('the chaincode example image', () => {
  const name = `kv-chaincode-image-test-${process.pid}`;
  let context: string;
  let containerId = '';

  beforeAll(async () => {
    requireCommand('docker', 'run scripts/test-prereqs.sh (Debian: apt-get install docker.io)');
    context = await mkdtemp(join(tmpdir(), 'fabric-ops-cc-image-'));
    await cp(join(repoRoot, 'examples/chaincode-as-a-service'), context, { recursive: true });
    // As the Dockerfile's header says: build, then pack into the build context. The build is the
    // one `make test` made (requireBuiltCli): building again here would rewrite dist/ under the
    // tests running beside this one (a command reading its bundle mid-write), so the pack skips
    // its prepack build.
    requireBuiltCli();
    await run('npm', ['pack', '--silent', '--ignore-scripts', '--pack-destination', context]);
    expect((await readdir(context)).filter((file) => /^fabric-ops-.*\.tgz$/.test(file))).toHaveLength(1);
    await run(join(repoRoot, 'scripts/build-node-base.sh'), [localBase]);
    const registry = (await run('npm', ['config', 'get', 'registry']).catch(() => 'https://registry.npmjs.org/')).trim();
    await run(
      'docker',
      ['build', '--network', 'host', '--build-arg', `NODE_IMAGE=${localBase}`, '--build-arg', `NPM_CONFIG_REGISTRY=${registry}`, '-t', image, context],
      { ...process.env, DOCKER_BUILDKIT: '0' },
      20 * 60_000,
    );
    // The chaincode server's port stays probed: it logs the address it was given, not the one
    // bound, so with port 0 a peer (and this test) could not learn it. The operations server
    // binds port 0 and its "listening on" line says where.
    const ccPort = await freeTcpPort();
    containerId = (
      await run('docker', [
        'run',
        '-d',
        '--name',
        name,
        '--network',
        'host',
        '-e',
        'CHAINCODE_ID=kv_1.0:0000',
        '-e',
        `CHAINCODE_SERVER_ADDRESS=127.0.0.1:${ccPort}`,
        '-e',
        'CORE_OPERATIONS_LISTENADDRESS=127.0.0.1:0',
        image,
      ])
    ).trim();
    let stopped: string | undefined;
    try {
      await waitFor(
        'the chaincode container to serve /version and its chaincode server',
        async () => {
          const logs = await containerLogs(containerId).catch(() => '');
          const bound = /operations server listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(logs)?.[1];
          const answer = bound ? await request(`http://127.0.0.1:${bound}/version`, { timeoutMs: 1000 }).catch(() => null) : null;
          if (answer?.status === 200 && logs.includes('chaincode server listening')) return true;
          if (!(await inspect(containerId)).State.Running) stopped = 'the container stopped';
          return false;
        },
        { timeoutMs: 60_000, everyMs: 300, giveUpIf: () => stopped },
      );
    } catch (error) {
      const logs = await containerLogs(containerId).catch((failure: Error) => failure.message);
      throw new Error(`the chaincode container did not start: ${(error as Error).message}; its output:\n${logs}`, { cause: error });
    }
  }, 25 * 60_000);

  afterAll(async () => {
    await run('docker', ['rm', '-f', name]).catch(() => undefined);
    if (context) await rm(context, { recursive: true, force: true });
  });

  it('stops on SIGTERM by itself, exit status 0, within docker stop -t 5 (no SIGKILL)', async () => {
    const started = Date.now();
    await run('docker', ['stop', '-t', '5', containerId]);
    const tookMs = Date.now() - started;
    const state = (await inspect(containerId)).State;
    expect(state.Running).toBe(false);
    // 137 would mean docker had to SIGKILL it after the 5 s grace period.
    expect(state.ExitCode).toBe(0);
    const logs = await containerLogs(containerId);
    expect(logs).toMatch(/received SIGTERM; stopping the chaincode server and the operations server/);
    expect(logs).toMatch(/\bstopped\b/);
    console.info(`docker stop -t 5 of the chaincode example returned after ${tookMs} ms, exit status ${state.ExitCode}`);
  });
});
