/**
 * The command's own V8 code cache (src/cli.ts, issue 20): made once the start is over, so that it
 * holds the functions the start ran (Node's compile cache holds only top-level code). Real runs of
 * the built command with NODE_COMPILE_CACHE in a directory of the test's own.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, readdir, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { request } from '../support/http';
import { cliPath, requireBuiltCli, runCli } from '../support/cli';

const bundle = path.join(path.dirname(cliPath), 'cli-command.js');

let tmp: string;
beforeAll(async () => {
  requireBuiltCli();
  tmp = await mkdtemp(path.join(os.tmpdir(), 'fabric-ops-code-cache-'));
});
afterAll(async () => {
  await rm(tmp, { recursive: true, force: true });
});

/** Starts the command, checks /healthz, leaves it running `aliveMs` (the cache is written 1 s after the start), stops it. */
async function serve(cacheRoot: string, aliveMs: number, env: NodeJS.ProcessEnv = {}, args: string[] = []): Promise<void> {
  const run = runCli(args, { NODE_COMPILE_CACHE: cacheRoot, CORE_OPERATIONS_LISTENADDRESS: '127.0.0.1:0', ...env });
  try {
    const url = await run.listening();
    expect((await request(`${url}/healthz`)).status).toBe(200);
    await sleep(aliveMs);
  } finally {
    run.child.kill('SIGTERM');
  }
  expect((await run.exited).code).toBe(0);
}

/** The command's cache files under a NODE_COMPILE_CACHE root (Node puts them in its per-version directory). */
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
  for (let tries = 0; tries < 100; tries += 1) {
    const files = await cacheFiles(cacheRoot);
    if (files.length > 0) return files[0] ?? '';
    await sleep(50);
  }
  throw new Error(`no cache file under ${cacheRoot}`);
}

const sourceHash = (): Buffer => createHash('sha1').update(readFileSync(bundle, 'utf8')).digest();

describe("the command's code cache", () => {
  it('is written once after the start, headed by the SHA-1 of the bundle, and a later start takes it as it is', async () => {
    const root = path.join(tmp, 'reuse');
    await serve(root, 1500);
    const files = await cacheFiles(root);
    expect(files).toHaveLength(1);
    const file = files[0] ?? '';
    expect(path.basename(file)).toMatch(/^[0-9a-f]{16}-service$/);
    const data = readFileSync(file);
    expect(data.subarray(0, 20).equals(sourceHash())).toBe(true);
    expect(data.length).toBeGreaterThan(100_000);
    const before = await stat(file);
    // Accepted by V8, so not written again.
    await serve(root, 1500);
    const after = await stat(file);
    expect(after.mtimeMs).toBe(before.mtimeMs);
    expect(after.ino).toBe(before.ino);
  });

  it('a cache V8 refuses (damaged) is replaced after the start; the start is not affected', async () => {
    const root = path.join(tmp, 'damaged');
    await serve(root, 1500);
    const file = await waitForCacheFile(root);
    await writeFile(file, Buffer.concat([sourceHash(), Buffer.alloc(50_000, 7)]));
    await serve(root, 1500);
    const data = readFileSync(file);
    expect(data.subarray(0, 20).equals(sourceHash())).toBe(true);
    expect(data.subarray(20, 1020).equals(Buffer.alloc(1000, 7))).toBe(false);
  });

  it('a cache made from another build of the bundle is not used, and is replaced', async () => {
    const root = path.join(tmp, 'other-build');
    await serve(root, 1500);
    const file = await waitForCacheFile(root);
    const otherBuild = Buffer.alloc(20, 1);
    await writeFile(file, Buffer.concat([otherBuild, readFileSync(file).subarray(20)]));
    await serve(root, 1500);
    expect(readFileSync(file).subarray(0, 20).equals(sourceHash())).toBe(true);
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
