/**
 * The command's own V8 code cache (src/cli.ts, issue 20): made once the start is over, so that it
 * holds the functions the start ran (Node's compile cache holds only top-level code). Issue 28:
 * both caches live in a folder only the user running the command can write (by default
 * `$XDG_CACHE_HOME/fabric-ops` or `~/.cache/fabric-ops`, no longer the shared temporary
 * directory), an unsafe one is refused with one line, the cache's own bytes are checked before V8
 * sees them (a damaged cache crashed every start), and the cache is written through a new file that
 * follows no symbolic link. Real runs of the built command, as root (folders of another user are
 * made with chown to 65534).
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { chmod, chown, lstat, mkdir, mkdtemp, readdir, readlink, rm, stat, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { request } from '../../support/http';
import { cliPath, requireBuiltCli, runCli } from '../../support/cli';
import { delay, waitFor } from '../../support/wait';

const bundle = path.join(path.dirname(cliPath), 'cli-command.js');
const nobody = 65534;

let tmp: string;
beforeAll(async () => {
  requireBuiltCli();
  tmp = await mkdtemp(path.join(os.tmpdir(), 'fabric-ops-code-cache-'));
});
afterAll(async () => {
  await rm(tmp, { recursive: true, force: true });
});

/**
 * Starts the command with exactly `env` (plus PATH), checks /healthz, leaves it running `aliveMs`
 * (the cache is written 1 s after the start), stops it; its stderr. `started` runs as soon as the
 * process is spawned, with its pid.
 */
async function serveWith(env: NodeJS.ProcessEnv, aliveMs: number, started?: (pid: number) => Promise<void>): Promise<string> {
  const run = runCli([], { CORE_OPERATIONS_LISTENADDRESS: '127.0.0.1:0', ...env });
  try {
    await started?.(run.child.pid ?? 0);
    const url = await run.listening();
    expect((await request(`${url}/healthz`)).status).toBe(200);
    // Running past the write at 1 s: the tests then look at what was written, or that nothing was.
    await delay(aliveMs);
  } finally {
    run.child.kill('SIGTERM');
  }
  const exited = await run.exited;
  expect({ ...exited, stderr: run.stderr() }).toEqual({ code: 0, signal: null, stderr: run.stderr() });
  return run.stderr();
}

/** serveWith, the caches under a NODE_COMPILE_CACHE root of the test's own. */
async function serve(cacheRoot: string, aliveMs: number, env: NodeJS.ProcessEnv = {}): Promise<string> {
  return serveWith({ NODE_COMPILE_CACHE: cacheRoot, ...env }, aliveMs);
}

/** The command's cache files under a cache root (Node puts them in its per-version directory, the command in `fabric-ops/` there). */
async function cacheFiles(cacheRoot: string): Promise<string[]> {
  if (!existsSync(cacheRoot)) return [];
  const found: string[] = [];
  for (const versioned of await readdir(cacheRoot)) {
    const dir = path.join(cacheRoot, versioned, 'fabric-ops');
    if (existsSync(dir)) for (const name of await readdir(dir)) found.push(path.join(dir, name));
  }
  return found;
}

async function waitForCacheFile(cacheRoot: string): Promise<string> {
  const files = await waitFor(`a cache file under ${cacheRoot}`, async () => {
    const list = await cacheFiles(cacheRoot);
    return list.length > 0 && list;
  });
  return files[0] ?? '';
}

const sha256 = (bytes: Buffer | string): Buffer => createHash('sha256').update(bytes).digest();
const bundleHash = (): Buffer => sha256(readFileSync(bundle));
const magic = Buffer.from('FOPSCC1\n', 'latin1');
const headerLength = magic.length + 64;

/** A cache file's parts: its magic, the bundle's SHA-256, the payload's SHA-256 as written, and the payload. */
function parse(data: Buffer): { magic: Buffer; bundle: Buffer; payloadHash: Buffer; payload: Buffer } {
  return { magic: data.subarray(0, 8), bundle: data.subarray(8, 40), payloadHash: data.subarray(40, 72), payload: data.subarray(72) };
}

/** A cache file as src/cli.ts writes it: magic, the bundle's SHA-256, the payload's, the payload. */
function cacheOf(payload: Buffer, bundleSha = bundleHash()): Buffer {
  return Buffer.concat([magic, bundleSha, sha256(payload), payload]);
}

/** Checks a cache file is whole: this build's, with a payload whose SHA-256 is the one in its header. */
function expectWhole(data: Buffer): void {
  const parts = parse(data);
  expect(parts.magic.equals(magic)).toBe(true);
  expect(parts.bundle.toString('hex')).toBe(bundleHash().toString('hex'));
  expect(parts.payloadHash.toString('hex')).toBe(sha256(parts.payload).toString('hex'));
  expect(parts.payload.length).toBeGreaterThan(100_000);
}

describe("the command's code cache", () => {
  it('is written once after the start, headed by the SHA-256 of the bundle and of its payload, and a later start takes it as it is', async () => {
    const root = path.join(tmp, 'reuse');
    await serve(root, 1500);
    const files = await cacheFiles(root);
    expect(files).toHaveLength(1);
    const file = files[0] ?? '';
    expect(path.basename(file)).toMatch(/^[0-9a-f]{16}-service$/);
    expectWhole(readFileSync(file));
    // This user's only: the file 0600, its folder 0700.
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect((await stat(path.dirname(file))).mode & 0o777).toBe(0o700);
    const before = await stat(file);
    // Accepted by V8, so not written again.
    await serve(root, 1500);
    const after = await stat(file);
    expect(after.mtimeMs).toBe(before.mtimeMs);
    expect(after.ino).toBe(before.ino);
  });

  it('a damaged cache (bytes changed in its payload) is not handed to V8: the command starts and serves, and the cache is written again', async () => {
    const root = path.join(tmp, 'damaged');
    await serve(root, 1500);
    const file = await waitForCacheFile(root);
    const good = readFileSync(file);
    // Before issue 28 V8 took such bytes and the process died at every start (exit 133 or SIGSEGV).
    for (const at of [0.3, 0.7]) {
      const damaged = Buffer.from(good);
      const offset = headerLength + Math.floor((damaged.length - headerLength) * at);
      for (let index = offset; index < offset + 16; index += 1) damaged[index] = (damaged[index] ?? 0) ^ 0xff;
      await writeFile(file, damaged);
      await serve(root, 1500);
      const rewritten = readFileSync(file);
      expectWhole(rewritten);
      expect(rewritten.equals(damaged)).toBe(false);
    }
  });

  it('a whole cache V8 refuses (not a code cache of its) is replaced after the start; the start is not affected', async () => {
    const root = path.join(tmp, 'refused');
    await serve(root, 1500);
    const file = await waitForCacheFile(root);
    await writeFile(file, cacheOf(Buffer.alloc(50_000, 7)));
    await serve(root, 1500);
    const data = readFileSync(file);
    expectWhole(data);
    expect(parse(data).payload.subarray(0, 1000).equals(Buffer.alloc(1000, 7))).toBe(false);
  });

  it('a cache made from another build of the bundle, or in the format before issue 28, is not used, and is replaced', async () => {
    const root = path.join(tmp, 'other-build');
    await serve(root, 1500);
    const file = await waitForCacheFile(root);
    await writeFile(file, cacheOf(parse(readFileSync(file)).payload, Buffer.alloc(32, 1)));
    await serve(root, 1500);
    expectWhole(readFileSync(file));
    // The format before: the bundle's SHA-1, then V8's bytes.
    const payload = parse(readFileSync(file)).payload;
    await writeFile(file, Buffer.concat([createHash('sha1').update(readFileSync(bundle)).digest(), payload]));
    await serve(root, 1500);
    expectWhole(readFileSync(file));
  });

  it('is written through a new file that follows no symbolic link: links at its name and at the name its temporary file had before issue 28 leave their target alone', async () => {
    const root = path.join(tmp, 'links');
    await serve(root, 1500);
    const file = await waitForCacheFile(root);
    await rm(file);
    const victim = path.join(tmp, 'victim');
    await writeFile(victim, 'precious\n');
    await serveWith({ NODE_COMPILE_CACHE: root }, 1500, async (pid) => {
      // Before issue 28 the command wrote `<cache>.<pid>` with writeFileSync, which follows a link there.
      await symlink(victim, `${file}.${pid}`);
      await symlink(victim, file);
    });
    const target = readFileSync(victim);
    expect(target.toString('latin1') === 'precious\n' ? 'untouched' : `overwritten: ${target.length} bytes`).toBe('untouched');
    expect((await lstat(file)).isFile()).toBe(true);
    expectWhole(readFileSync(file));
    // The links the test made are left as they were (the command removes nothing it did not write, but the link at its own name).
    const left = (await readdir(path.dirname(file))).filter((name) => name !== path.basename(file));
    expect(left).toHaveLength(1);
    expect(await readlink(path.join(path.dirname(file), left[0] ?? ''))).toBe(victim);
  });

  it('nothing is written with NODE_DISABLE_COMPILE_CACHE=1, with --enable-source-maps, under V8 coverage (NODE_V8_COVERAGE), or by a run that ends at once', async () => {
    const disabled = path.join(tmp, 'disabled');
    await serve(disabled, 1500, { NODE_DISABLE_COMPILE_CACHE: '1' });
    expect(await cacheFiles(disabled)).toEqual([]);
    const sourceMaps = path.join(tmp, 'source-maps');
    await serve(sourceMaps, 1500, { NODE_OPTIONS: '--enable-source-maps' });
    expect(await cacheFiles(sourceMaps)).toEqual([]);
    // Under V8's coverage the code carries its counters: a cache of it would slow every later start.
    const coverage = path.join(tmp, 'coverage');
    const coverageOut = path.join(tmp, 'coverage-out');
    await serve(coverage, 1500, { NODE_V8_COVERAGE: coverageOut });
    expect(await cacheFiles(coverage)).toEqual([]);
    // The run was covered all the same, the bundle included.
    const reports = await readdir(coverageOut);
    expect(reports.some((name) => readFileSync(path.join(coverageOut, name), 'utf8').includes('cli-command.js'))).toBe(true);
    const help = path.join(tmp, 'help');
    const run = runCli(['--help'], { NODE_COMPILE_CACHE: help });
    expect((await run.exited).code).toBe(0);
    expect(await cacheFiles(help)).toEqual([]);
  });
});

describe('where the caches live (issue 28)', () => {
  /** A folder of its own for one test, and `name` in it. */
  async function place(test: string, ...names: string[]): Promise<string> {
    const dir = path.join(tmp, test, ...names);
    await mkdir(dir, { recursive: true });
    return dir;
  }

  it('by default in ~/.cache/fabric-ops, made 0700: a folder another user planted in the shared temporary directory (TMPDIR/node-compile-cache) is left alone', async () => {
    const shared = await place('default', 'shared-tmp');
    await chmod(shared, 0o1777);
    // What another local user makes first after a reboot: the folder Node.js uses by default, open to all.
    const planted = path.join(shared, 'node-compile-cache');
    await mkdir(planted);
    await chown(planted, nobody, nobody);
    await chmod(planted, 0o777);
    const home = await place('default', 'home');
    const stderr = await serveWith({ TMPDIR: shared, HOME: home }, 1500);
    expect(await readdir(planted)).toEqual([]);
    const root = path.join(home, '.cache', 'fabric-ops');
    expect((await stat(root)).mode & 0o7777).toBe(0o700);
    const file = await waitForCacheFile(root);
    expectWhole(readFileSync(file));
    // Node's own entries go to the same per-version folder, made without group or other permissions
    // (whether Node writes any depends on what the start loads through require(): with this
    // configuration nothing outside the bundle, whose cache is the command's own).
    expect((await stat(path.dirname(path.dirname(file)))).mode & 0o077).toBe(0);
    expect(stderr).not.toMatch(/compile cache/);
    // XDG_CACHE_HOME, when set, comes first.
    const xdg = await place('default', 'xdg');
    await serveWith({ TMPDIR: shared, HOME: home, XDG_CACHE_HOME: xdg }, 1500);
    expectWhole(readFileSync(await waitForCacheFile(path.join(xdg, 'fabric-ops'))));
  });

  it.each([
    ['belongs to another user', 'fabric-ops', 'belongs to uid 65534, and the command runs as uid 0'],
    ['is writable by other users', 'fabric-ops', 'is writable by other users (mode 0777)'],
    ['is in a folder other users can write (not sticky)', '', 'is writable by other users (mode 0777)'],
  ])('a cache folder that %s is not used: one line names it and says why, nothing is written there, and the command serves', async (what, named, why) => {
    const test = `unsafe-${what.replace(/\W+/g, '-')}`;
    const xdg = await place(test, 'xdg');
    const cache = path.join(xdg, 'fabric-ops');
    await mkdir(cache, { mode: 0o700 });
    if (what.startsWith('belongs')) await chown(cache, nobody, nobody);
    if (what.startsWith('is writable')) await chmod(cache, 0o777);
    if (what.startsWith('is in a folder')) await chmod(xdg, 0o777);
    const stderr = await serveWith({ XDG_CACHE_HOME: xdg, HOME: await place(test, 'home') }, 1500);
    const folder = named === '' ? xdg : cache;
    expect(stderr.match(/compile cache/g)).toHaveLength(1);
    expect(stderr).toContain(`fabric-ops: compile cache: not using ${cache} (${folder} ${why}); starting without a cache of compiled code\n`);
    expect(await readdir(cache)).toEqual([]);
  });

  it('NODE_COMPILE_CACHE naming a folder of another user: one line says so (Node.js itself has used it already) and the command keeps no cache of its own there', async () => {
    const planted = await place('node-compile-cache', 'planted');
    await chown(planted, nobody, nobody);
    await chmod(planted, 0o777);
    const stderr = await serveWith({ NODE_COMPILE_CACHE: planted, HOME: await place('node-compile-cache', 'home') }, 1500);
    expect(stderr.match(/compile cache/g)).toHaveLength(1);
    expect(stderr).toContain(
      `fabric-ops: compile cache: NODE_COMPILE_CACHE names an unsafe folder (${planted} belongs to uid 65534, and the command runs as uid 0)`,
    );
    expect(await cacheFiles(planted)).toEqual([]);
  });

  it('a home where the folder cannot be made: no cache, and not a word about it', async () => {
    // /proc/self is nobody's to make folders in (as for a HOME of / on a read-only root filesystem).
    const stderr = await serveWith({ HOME: '/proc/self' }, 1500);
    expect(stderr).not.toMatch(/compile cache|fabric-ops:/);
  });
});
