/**
 * The library as a user gets it (issue 21 item 12): this checkout built and packed (`npm run build`,
 * `npm pack` in a temporary copy), the tarball installed into fresh TypeScript projects, one per
 * module resolution (node16, nodenext, bundler, node) with and without esModuleInterop, and every
 * TypeScript snippet of README.md and docs/ (each marked `<!-- ts-check {...} -->`) compiled there with the
 * repository's TypeScript. The published types must not pull zod's declarations into the
 * program. `attw --pack` (Are the Types Wrong?) must find no problem.
 *
 * Installing: the tarball is unpacked as node_modules/fabric-ops of a folder whose node_modules
 * also links the package's dependencies (and the optional peer dependencies fabric-shim and
 * fabric-contract-api) to this checkout's; nothing is downloaded. @kubernetes/client-node is not
 * one of them (issue 30 item 13): the Kubernetes integration runs on the package's bundled copy.
 */
import { execFile } from 'node:child_process';
import { cp, mkdir, mkdtemp, readFile, readdir, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { FakeApiServer } from '../support/fake-apiserver';
import { createTestPki } from '../support/pki';
import { repoRoot } from './image-build';

const tsc = join(repoRoot, 'node_modules', 'typescript', 'bin', 'tsc');
const attw = join(repoRoot, 'node_modules', '.bin', 'attw');
const sharedModules = join(repoRoot, 'node_modules');

/**
 * What `moduleResolution: node` (node10, which ignores `exports`) needs to find
 * `fabric-ops/chaincode`'s types. package.json belongs to the release engineer; until it has this,
 * the temporary copy gets it, and the test "package.json declares typesVersions" fails.
 */
const typesVersions = { '*': { chaincode: ['dist/chaincode/index.d.ts'] } };

interface PackageJson {
  name: string;
  dependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  typesVersions?: unknown;
}

/** A snippet of the docs and how to compile it, from its marker. */
interface Snippet {
  /** The page (README.md, or a page of docs/) and the line of the opening fence in it. */
  file: string;
  line: number;
  code: string;
  /** esm: top-level await (an ES module); cjs: a CommonJS module (a chaincode's main module). */
  module: 'esm' | 'cjs';
  /** Declarations of what the snippet takes from the reader's own code, put before it. */
  prelude?: string;
  /** Modules of the reader's own that the snippet imports (name without extension -> source). */
  files?: Record<string, string>;
}

const markerPattern = /<!-- ts-check (\{.*?\}) -->\n```ts\n([\s\S]*?)```/g;

function readmeSnippets(file: string, readme: string): Snippet[] {
  const snippets: Snippet[] = [];
  for (const match of readme.matchAll(markerPattern)) {
    const options = JSON.parse(match[1] ?? '{}') as Omit<Snippet, 'file' | 'line' | 'code'>;
    const line = readme.slice(0, match.index).split('\n').length + 1;
    snippets.push({ ...options, file, line, code: match[2] ?? '' });
  }
  return snippets;
}

/** README.md and every page of docs/ (relative to the repository), with their text; not docs/reference/api.md, whose blocks are the declarations themselves (scripts/api-report.ts), not snippets. */
async function documentationPages(): Promise<Array<{ file: string; text: string }>> {
  const files = ['README.md'];
  const walk = async (dir: string): Promise<void> => {
    for (const entry of (await readdir(join(repoRoot, dir), { withFileTypes: true })).sort((a, b) => a.name.localeCompare(b.name))) {
      if (entry.isDirectory()) await walk(`${dir}/${entry.name}`);
      else if (entry.name.endsWith('.md') && `${dir}/${entry.name}` !== 'docs/reference/api.md') files.push(`${dir}/${entry.name}`);
    }
  };
  await walk('docs');
  return Promise.all(files.map(async (file) => ({ file, text: await readFile(join(repoRoot, file), 'utf8') })));
}

interface Resolution {
  name: string;
  module: string;
  moduleResolution: string;
  /** node16/nodenext: .mts files are ES modules, .ts files CommonJS (the project has no "type"). */
  nodeModules: boolean;
}

const resolutions: Resolution[] = [
  { name: 'node16', module: 'node16', moduleResolution: 'node16', nodeModules: true },
  { name: 'nodenext', module: 'nodenext', moduleResolution: 'nodenext', nodeModules: true },
  { name: 'bundler', module: 'esnext', moduleResolution: 'bundler', nodeModules: false },
  // node10: deprecated in TypeScript 6 (ignoreDeprecations), still what many projects have.
  { name: 'node', module: 'esnext', moduleResolution: 'node', nodeModules: false },
];

interface Ran {
  code: number;
  stdout: string;
  output: string;
}

/** Runs a command to completion in `cwd`; never rejects on a non-zero exit. */
function exec(command: string, args: string[], cwd: string): Promise<Ran> {
  return new Promise((done, fail) => {
    execFile(command, args, { cwd, maxBuffer: 64 * 1024 * 1024, timeout: 5 * 60_000 }, (error, stdout, stderr) => {
      // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- an ExecFileException is an Error (@types/node declares it with Omit<>, which hides that)
      if (error && typeof error.code !== 'number') return fail(error);
      done({ code: error ? Number(error.code) : 0, stdout, output: `${stdout}${stderr}` });
    });
  });
}

/** Runs a command that must succeed; rejects with its output. */
async function must(command: string, args: string[], cwd: string): Promise<Ran> {
  const ran = await exec(command, args, cwd);
  if (ran.code !== 0) throw new Error(`${command} ${args.join(' ')} in ${cwd} failed (${ran.code}):\n${ran.output.slice(-4000)}`);
  return ran;
}

let work: string;
let packageDir: string;
let tarball: string;
let installed: string;
let realPackage: PackageJson;
let snippets: Snippet[];

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'fabric-ops-consumer-'));
  packageDir = join(work, 'package-copy');
  await mkdir(packageDir);
  for (const entry of ['package.json', 'tsconfig.json', 'tsconfig.build.json', 'README.md', 'src', 'scripts']) {
    await cp(join(repoRoot, entry), join(packageDir, entry), { recursive: true });
  }
  await cp(join(repoRoot, 'LICENSE'), join(packageDir, 'LICENSE')).catch(() => undefined);
  await symlink(sharedModules, join(packageDir, 'node_modules'));
  realPackage = JSON.parse(await readFile(join(repoRoot, 'package.json'), 'utf8')) as PackageJson;
  if (realPackage.typesVersions === undefined) {
    await writeFile(join(packageDir, 'package.json'), `${JSON.stringify({ ...realPackage, typesVersions }, null, 2)}\n`);
  }
  await must('npm', ['run', '--silent', 'build'], packageDir);
  const packed = await must('npm', ['pack', '--silent', '--pack-destination', work], packageDir);
  tarball = join(work, packed.stdout.trim().split('\n').pop() ?? '');

  // The installed package and its dependencies, as npm would lay them out.
  installed = join(work, 'installed', 'node_modules');
  await mkdir(join(installed, 'fabric-ops'), { recursive: true });
  await must('tar', ['-xzf', tarball, '-C', join(installed, 'fabric-ops'), '--strip-components=1'], work);
  const installedPackage = JSON.parse(await readFile(join(installed, 'fabric-ops', 'package.json'), 'utf8')) as PackageJson;
  for (const name of [...Object.keys(installedPackage.dependencies ?? {}), ...Object.keys(installedPackage.peerDependencies ?? {}), '@types/node']) {
    await mkdir(join(installed, name, '..'), { recursive: true });
    await symlink(join(sharedModules, name), join(installed, name));
  }
  snippets = (await documentationPages()).flatMap(({ file, text }) => readmeSnippets(file, text));
}, 10 * 60_000);

afterAll(async () => {
  if (work) await rm(work, { recursive: true, force: true });
});

test('package.json declares typesVersions, so that moduleResolution node finds fabric-ops/chaincode', () => {
  expect(realPackage.typesVersions).toEqual(typesVersions);
});

test('every TypeScript block of README.md and docs/ carries a ts-check marker', async () => {
  const pages = await documentationPages();
  const blocks = pages.flatMap(({ text }) => text.match(/^```ts$/gm) ?? []);
  expect(blocks.length).toBeGreaterThanOrEqual(3);
  expect(snippets).toHaveLength(blocks.length);
  expect(snippets.filter((snippet) => snippet.file === 'README.md').length).toBeGreaterThanOrEqual(2);
  expect(snippets.some((snippet) => snippet.code.includes("from 'fabric-ops/chaincode'"))).toBe(true);
});

test('the tarball holds the compiled entry points and their types', async () => {
  const files = (await must('tar', ['-tzf', tarball], work)).stdout.split('\n');
  for (const file of ['package/dist/index.js', 'package/dist/index.d.ts', 'package/dist/chaincode/index.js', 'package/dist/chaincode/index.d.ts']) {
    expect(files).toContain(file);
  }
});

describe.each(resolutions)('a TypeScript project with moduleResolution $name', (resolution) => {
  test.each([true, false])(
    'esModuleInterop %s: every README snippet compiles, and no zod declaration is read',
    async (esModuleInterop) => {
      const project = join(work, `consumer-${resolution.name}-${String(esModuleInterop)}`);
      await mkdir(join(project, 'node_modules', '@types'), { recursive: true });
      await writeFile(join(project, 'package.json'), '{ "name": "consumer", "private": true }\n');
      for (const name of ['fabric-ops', 'fabric-shim', 'fabric-contract-api']) await symlink(join(installed, name), join(project, 'node_modules', name));
      await symlink(join(installed, '@types', 'node'), join(project, 'node_modules', '@types', 'node'));

      const files: string[] = [];
      for (const [index, snippet] of snippets.entries()) {
        const extension = resolution.nodeModules && snippet.module === 'esm' ? 'mts' : 'ts';
        const dir = join(project, `snippet${index}`);
        await mkdir(dir);
        const file = `snippet${index}/${basename(snippet.file, '.md')}-line-${snippet.line}.${extension}`;
        await writeFile(join(project, file), `${snippet.prelude ?? ''}\n${snippet.code}\nexport {};\n`);
        for (const [name, source] of Object.entries(snippet.files ?? {})) await writeFile(join(dir, `${name}.ts`), source);
        files.push(file);
      }
      const compilerOptions: Record<string, unknown> = {
        target: 'ES2022',
        lib: ['ES2023'],
        module: resolution.module,
        moduleResolution: resolution.moduleResolution,
        esModuleInterop,
        allowSyntheticDefaultImports: esModuleInterop,
        strict: true,
        skipLibCheck: false,
        noEmit: true,
        types: ['node'],
      };
      if (resolution.moduleResolution === 'node' || !esModuleInterop) compilerOptions.ignoreDeprecations = '6.0';
      await writeFile(join(project, 'tsconfig.json'), JSON.stringify({ compilerOptions, files }, null, 2));

      const compiled = await exec(process.execPath, [tsc, '-p', '.', '--listFiles'], project);
      const errors = compiled.output.split('\n').filter((line) => /error TS\d+/.test(line));
      expect({ project: resolution.name, esModuleInterop, errors }).toEqual({ project: resolution.name, esModuleInterop, errors: [] });
      const programFiles = compiled.output.split('\n').filter((line) => line.startsWith('/'));
      expect(programFiles.some((file) => file.includes('/fabric-ops/dist/index.d.ts'))).toBe(true);
      expect(programFiles.filter((file) => /\/node_modules\/zod\//.test(file))).toEqual([]);
    },
    5 * 60_000,
  );
});

test(
  'attw --pack finds no problem in the package',
  async () => {
    const result = await exec(attw, ['--pack', packageDir, '--format', 'json'], work);
    const json = result.stdout.slice(result.stdout.indexOf('{'));
    // attw's JSON report: `problems` maps each problem kind to where it occurs; {} when there are none.
    const report = JSON.parse(json) as { problems: Record<string, unknown[]> | unknown[] };
    const problems = Array.isArray(report.problems) ? report.problems : Object.entries(report.problems);
    expect(problems).toEqual([]);
    expect(result.code).toBe(0);
    // The packed copy was removed again by attw.
    expect((await readdir(packageDir)).filter((name) => name.endsWith('.tgz'))).toEqual([]);
  },
  5 * 60_000,
);

test(
  'the Kubernetes integration runs from the installed library with no @kubernetes/client-node installed (the copy bundled in the package)',
  async () => {
    const installedPackage = JSON.parse(await readFile(join(installed, 'fabric-ops', 'package.json'), 'utf8')) as PackageJson;
    expect(Object.keys(installedPackage.dependencies ?? {})).not.toContain('@kubernetes/client-node');
    const pki = await createTestPki();
    const api = new FakeApiServer({ cert: pki.server.certPem, key: pki.server.keyPem }, 'consumer-token');
    await api.start();
    try {
      api.setConfigMap('fabric', 'peer0-logspec', { logspec: 'gossip=debug:info' });
      const kubeconfig = join(work, 'consumer-kubeconfig.json');
      await writeFile(
        kubeconfig,
        JSON.stringify({
          apiVersion: 'v1',
          kind: 'Config',
          clusters: [{ name: 'fake', cluster: { server: api.url, 'certificate-authority-data': Buffer.from(pki.serverCA.certPem).toString('base64') } }],
          users: [{ name: 'operator', user: { token: 'consumer-token' } }],
          contexts: [{ name: 'fake', context: { cluster: 'fake', user: 'operator', namespace: 'fabric' } }],
          'current-context': 'fake',
        }),
      );
      // A process of the user's: the library from node_modules, the logspec ConfigMap on. It runs
      // outside jest, with fabric-ops alone installed: it waits for the spec with a loop of its own.
      const script = join(work, 'installed', 'kubernetes-consumer.cjs');
      await writeFile(
        script,
        `const { startOperationsSystem, startKubernetesIntegration } = require('fabric-ops');
let clientNode = 'not installed';
try { clientNode = require.resolve('@kubernetes/client-node', { paths: [require.resolve('fabric-ops')] }); } catch {}
(async () => {
  const ops = await startOperationsSystem({});
  const integration = await startKubernetesIntegration(ops);
  const deadline = Date.now() + 20000;
  while (ops.getLogSpec() !== 'gossip=debug:info' && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
  console.log(JSON.stringify({ clientNode, spec: ops.getLogSpec() }));
  await integration.stop(0);
  await ops.stop(0);
})().catch((error) => { console.error(error); process.exit(1); });
`,
      );
      const env = {
        PATH: process.env.PATH ?? '',
        HOME: work,
        KUBECONFIG: kubeconfig,
        POD_NAME: 'peer0-0',
        POD_NAMESPACE: 'fabric',
        CORE_OPERATIONS_LISTENADDRESS: '127.0.0.1:0',
        CORE_OPERATIONS_KUBERNETES_LOGSPECCONFIGMAP_NAME: 'peer0-logspec',
      };
      const ran = await new Promise<Ran>((done) =>
        execFile(process.execPath, [script], { cwd: work, env, timeout: 60_000 }, (error, stdout, stderr) =>
          done({ code: error ? Number(error.code ?? 1) : 0, stdout, output: `${stdout}${stderr}` }),
        ),
      );
      expect(ran.output).not.toMatch(/Cannot find (module|package)/);
      expect(ran.code).toBe(0);
      expect(JSON.parse(ran.stdout.trim().split('\n').pop() ?? '{}')).toEqual({ clientNode: 'not installed', spec: 'gossip=debug:info' });
      // It read the ConfigMap with the kubeconfig's token.
      expect(api.requests.some((request) => /\/configmaps(\/|$)/.test(request.path) && request.authorization === 'Bearer consumer-token')).toBe(true);
    } finally {
      await api.close();
      await pki.cleanup();
    }
  },
  2 * 60_000,
);
