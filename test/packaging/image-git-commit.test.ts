/**
 * Issue 20, item 3: a plain `docker build .` (no build arguments but the base image, which this
 * machine has only locally) on a git checkout bakes HEAD's commit into /version; before, it
 * answered "unknown" unless GIT_COMMIT was passed. The checkout is a fresh clone of HEAD, with a
 * real .git directory; the build reuses the cached dependency layers of `make image`.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { requireCommand } from '../support/prerequisites';
import { headCommit, localBase, packageVersion, repoRoot, run } from './image-build';

const tag = `fabric-ops:git-commit-test-${process.pid}`;
let tmp: string;

beforeAll(async () => {
  requireCommand('docker', 'run scripts/test-prereqs.sh (Debian: apt-get install docker.io)');
  requireCommand('git');
  tmp = await mkdtemp(join(tmpdir(), 'fabric-ops-git-build-'));
});

afterAll(async () => {
  await run('docker', ['rmi', '-f', tag]).catch(() => undefined);
  if (tmp) await rm(tmp, { recursive: true, force: true });
});

it(
  'docker build . on a git checkout answers /version with its HEAD commit, without a GIT_COMMIT argument',
  async () => {
    const commit = await headCommit();
    const clone = join(tmp, 'checkout');
    await run('git', ['clone', '-q', '--no-checkout', repoRoot, clone]);
    await run('git', ['-C', clone, 'checkout', '-q', '-B', 'build-test', commit]);
    // The same registry argument as `make image`, so that its npm layers are reused.
    const registry = (await run('npm', ['config', 'get', 'registry']).catch(() => 'https://registry.npmjs.org/')).trim();
    await run(
      'docker',
      ['build', '--network', 'host', '--build-arg', `NODE_IMAGE=${localBase}`, '--build-arg', `NPM_CONFIG_REGISTRY=${registry}`, '-t', tag, clone],
      {
        ...process.env,
        DOCKER_BUILDKIT: '0',
      },
      20 * 60_000,
    );
    const printed = await run('docker', ['run', '--rm', '--network', 'none', tag, '--version']);
    expect(printed.trim()).toBe(`fabric-ops ${await packageVersion()} (commit ${commit})`);
  },
  25 * 60_000,
);
