/**
 * Issue 21, items 1 and 17: the package as `npm pack` makes it from a clean clone of this
 * checkout's HEAD (no dist/: the prepack script builds it), used the way a consumer would: the
 * tarball unpacked into a fresh project's node_modules, `require('fabric-ops')`, and the bin run
 * by its shebang, serving /healthz and /version. The clone shares this checkout's node_modules
 * (a symlink; nothing is installed); committed files only.
 */
import { execFile, spawn } from 'node:child_process';
import { chmod, mkdir, mkdtemp, readFile, readdir, realpath, rename, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { request } from '../support/http';
import { requireCommand } from '../support/prerequisites';
import { waitFor } from '../support/wait';
import { headCommit, repoRoot, run } from './image-build';

const execFileAsync = promisify(execFile);
/** npm and the scripts it starts run under this Node (the one running the suite). */
const env = { ...process.env, PATH: `${dirname(process.execPath)}:${process.env.PATH ?? ''}` };

interface PackedFile {
  path: string;
  mode: number;
}

let tmp: string;
let commit: string;
let files: PackedFile[];
let installed: string;

beforeAll(async () => {
  requireCommand('git');
  requireCommand('npm');
  requireCommand('tar');
  tmp = await mkdtemp(join(tmpdir(), 'fabric-ops-pack-'));
  commit = await headCommit();
  const clone = join(tmp, 'clone');
  await run('git', ['clone', '-q', '--no-checkout', repoRoot, clone]);
  await run('git', ['-C', clone, 'checkout', '-q', '--detach', commit]);
  const modules = await realpath(join(repoRoot, 'node_modules'));
  await symlink(modules, join(clone, 'node_modules'));
  const { stdout } = await execFileAsync('npm', ['pack', '--json', '--pack-destination', tmp], { cwd: clone, env, maxBuffer: 64 << 20, timeout: 5 * 60_000 });
  const [packed] = JSON.parse(stdout.slice(stdout.indexOf('['))) as { filename: string; files: PackedFile[] }[];
  if (!packed) throw new Error(`npm pack printed no package: ${stdout}`);
  files = packed.files;
  // A consumer project: the tarball unpacked as node_modules/fabric-ops, its dependencies linked.
  const consumer = join(tmp, 'consumer');
  await mkdir(join(consumer, 'node_modules'), { recursive: true });
  await writeFile(join(consumer, 'package.json'), JSON.stringify({ name: 'consumer', private: true }));
  await run('tar', ['-xzf', join(tmp, packed.filename), '-C', join(consumer, 'node_modules')]);
  installed = join(consumer, 'node_modules', 'fabric-ops');
  await rename(join(consumer, 'node_modules', 'package'), installed);
  for (const entry of await readdir(modules)) {
    if (entry.startsWith('.') || entry === 'fabric-ops') continue;
    await symlink(join(modules, entry), join(consumer, 'node_modules', entry));
  }
}, 6 * 60_000);

afterAll(async () => {
  if (tmp) await rm(tmp, { recursive: true, force: true });
});

describe('npm pack from a clean clone', () => {
  it('holds the build, the proto where the code reads it, the licence and the sources its maps name', async () => {
    const paths = files.map((file) => file.path);
    expect(paths).toEqual(
      expect.arrayContaining([
        'package.json',
        'README.md',
        'LICENSE',
        'dist/index.js',
        'dist/index.d.ts',
        'dist/cli.js',
        'dist/health/cri.proto',
        'dist/build-info.json',
      ]),
    );
    expect(paths).not.toContain('src/health/cri.proto');
    expect(paths).not.toContain('dist/.tsbuildinfo');
    expect(paths.filter((path) => path.startsWith('config/'))).toEqual([]);
    expect((await readFile(join(installed, 'LICENSE'), 'utf8')).slice(0, 200)).toMatch(/Apache License\s+Version 2\.0, January 2004/);
    // Every source map names files that are in the package; the bundle's map (dist/cli.js.map)
    // also names the packages bundled into it, whose text it carries (sourcesContent).
    const maps = paths.filter((path) => path.endsWith('.map'));
    expect(maps.length).toBeGreaterThan(10);
    expect(maps).toContain('dist/cli.js.map');
    const missing: string[] = [];
    for (const map of maps) {
      const { sources, sourcesContent } = JSON.parse(await readFile(join(installed, map), 'utf8')) as { sources: string[]; sourcesContent?: (string | null)[] };
      for (const [index, source] of sources.entries()) {
        const file = resolve(dirname(join(installed, map)), source);
        if (await stat(file).catch(() => null)) continue;
        // A bundled package's file, or one of esbuild's virtual modules (scripts/bundle.js: `absent:`,
        // `deferred:`, `debug-when-asked:`, `assert-on-failure:`).
        const bundled = file.startsWith(join(installed, 'node_modules') + '/') || /^(absent|deferred|debug-when-asked|assert-on-failure):/.test(source);
        const carried = typeof sourcesContent?.[index] === 'string' && bundled;
        if (!carried) missing.push(`${map} -> ${source}`);
      }
    }
    expect(missing).toEqual([]);
    expect(JSON.parse(await readFile(join(installed, 'dist', 'build-info.json'), 'utf8'))).toEqual({ commit });
  });

  it("require('fabric-ops') loads the library", async () => {
    const { stdout } = await execFileAsync(
      process.execPath,
      ['-e', "const ops = require('fabric-ops'); console.log(typeof ops.OperationsSystem, typeof ops.parseLogSpec)"],
      {
        cwd: join(tmp, 'consumer'),
        env,
      },
    );
    expect(stdout.trim()).toBe('function function');
  });

  it('the bin (executable as npm links it) serves /healthz and /version', async () => {
    const bin = join(installed, 'dist', 'cli.js');
    await chmod(bin, 0o755); // what npm does to a bin when it installs the package
    const child = spawn(bin, [], {
      env: { PATH: env.PATH, CORE_OPERATIONS_LISTENADDRESS: '127.0.0.1:0', CORE_OPERATIONS_HEALTHCHECK_CONTAINERRUNTIME_TYPE: 'none' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const exited = new Promise<number | null>((done) => child.on('exit', (code) => done(code)));
    try {
      const url = await waitFor('the bin to log its URL', () => /listening on (http:\/\/[\d.:]+)/.exec(output)?.[1], {
        timeoutMs: 15_000,
        giveUpIf: () => (child.exitCode !== null ? `it exited ${child.exitCode}` : undefined),
      }).catch((error: Error) => {
        throw new Error(`the bin did not start: ${error.message}: ${output}`, { cause: error });
      });
      expect((await request(`${url}/healthz`)).status).toBe(200);
      const version = await request(`${url}/version`);
      expect(version.json).toEqual({
        CommitSHA: commit,
        Version: (JSON.parse(await readFile(join(installed, 'package.json'), 'utf8')) as { version: string }).version,
      });
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
    } finally {
      child.kill('SIGKILL');
    }
  });
});
