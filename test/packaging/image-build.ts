import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { requireCommand } from '../support/prerequisites';
import { waitFor } from '../support/wait';

const execFileAsync = promisify(execFile);
export const repoRoot = resolve(__dirname, '..', '..');
/**
 * The tag the packaging suites build and run (never the user's fabric-ops:latest), one per checkout:
 * checkouts that share a Docker daemon do not run each other's builds.
 */
export const testImage = `fabric-ops:packaging-test-${createHash('sha256').update(repoRoot).digest('hex').slice(0, 12)}`;
export const localBase = 'fabric-ops/node-base:24';

/** Runs a command in the repository; rejects with its output when it fails. */
export async function run(command: string, args: string[], env: NodeJS.ProcessEnv = process.env, timeoutMs = 10 * 60_000): Promise<string> {
  try {
    const { stdout } = await execFileAsync(command, args, { cwd: repoRoot, env, maxBuffer: 64 * 1024 * 1024, timeout: timeoutMs });
    return stdout;
  } catch (error) {
    const { stderr = '', stdout = '' } = error as { stderr?: string; stdout?: string };
    const output = `${stdout}\n${stderr}`.trim().split('\n').slice(-40).join('\n');
    throw new Error(`${command} ${args.join(' ')} failed:\n${output || String(error)}`, { cause: error });
  }
}

export async function packageVersion(): Promise<string> {
  const pkg = JSON.parse(await readFile(join(repoRoot, 'package.json'), 'utf8')) as { version: string };
  return pkg.version;
}

/** The commit the suites bake in: HEAD when the tree is a git checkout (as `make image` does). */
export async function headCommit(): Promise<string> {
  return (await run('git', ['rev-parse', 'HEAD'])).trim();
}

const lockDir = join(tmpdir(), 'fabric-ops-packaging-image.lock');

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * Both packaging suites need the image; jest may run them in parallel workers. One build at a
 * time (a lock directory with the holder's pid): the second build then finds every layer cached.
 */
async function withBuildLock<T>(work: () => Promise<T>): Promise<T> {
  /** Set when taking the lock failed for another reason than its being held: no use trying again. */
  let unusable: string | undefined;
  await waitFor(
    `the image build lock ${lockDir}`,
    async () => {
      try {
        await mkdir(lockDir);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') {
          unusable = (error as Error).message;
          return false;
        }
        const holder = Number(await readFile(join(lockDir, 'pid'), 'utf8').catch(() => '0'));
        const age = Date.now() - (await stat(lockDir).catch(() => ({ mtimeMs: Date.now() }))).mtimeMs;
        // A holder that is gone (or never wrote its pid) leaves the lock: removed, taken on the next try.
        if ((holder > 0 && !isAlive(holder)) || (holder === 0 && age > 10_000)) await rm(lockDir, { recursive: true, force: true });
        throw new Error(`held by pid ${holder}`, { cause: error });
      }
      await writeFile(join(lockDir, 'pid'), String(process.pid));
      return true;
    },
    { timeoutMs: 20 * 60_000, everyMs: 500, giveUpIf: () => unusable },
  );
  try {
    return await work();
  } finally {
    await rm(lockDir, { recursive: true, force: true });
  }
}

/** `make image` on the local base (no pulls; npm reaches the registry through the host network). */
export async function buildTestImage(commit: string): Promise<void> {
  requireCommand('docker', 'run scripts/test-prereqs.sh (Debian: apt-get install docker.io)');
  requireCommand('make');
  await withBuildLock(() => run('make', ['-s', 'image', `IMAGE=${testImage}`, `NODE_IMAGE=${localBase}`, `GIT_COMMIT=${commit}`], process.env, 20 * 60_000));
}
