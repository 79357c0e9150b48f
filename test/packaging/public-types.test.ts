/**
 * The published API's type tests (test/types/*.ts, as pino's test-types): the declarations are
 * emitted as `npm run build` emits them (tsconfig.build.json, so @internal members are stripped)
 * into a temporary folder, and test/types is compiled against them with `fabric-ops` mapped
 * there. A `@ts-expect-error` line that compiles (a misuse that became possible) fails it, as
 * does any use of the API that no longer type-checks. No build of dist/ is needed.
 */
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';

const repoRoot = resolve(__dirname, '../..');
const tsc = join(repoRoot, 'node_modules', 'typescript', 'bin', 'tsc');

function run(args: string[]): Promise<{ code: number; output: string }> {
  return new Promise((done) => {
    execFile(process.execPath, [tsc, ...args], { cwd: repoRoot, maxBuffer: 16 * 1024 * 1024, timeout: 5 * 60_000 }, (error, stdout, stderr) => {
      done({ code: error ? Number(error.code ?? 1) : 0, output: stdout + stderr });
    });
  });
}

let dir: string;
beforeAll(async () => {
  // Inside the checkout, so that the declarations find the dependencies' types in node_modules.
  await mkdir(join(repoRoot, '.tmp'), { recursive: true });
  dir = await mkdtemp(join(repoRoot, '.tmp', 'types-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

test('test/types compiles against the published declarations, every @ts-expect-error line still an error', async () => {
  const declarations = join(dir, 'dist');
  const emitted = await run([
    '-p',
    'tsconfig.build.json',
    '--emitDeclarationOnly',
    '--declarationMap',
    'false',
    '--sourceMap',
    'false',
    '--outDir',
    declarations,
  ]);
  expect(emitted).toEqual({ code: 0, output: '' });

  const project = join(dir, 'tsconfig.json');
  await writeFile(
    project,
    JSON.stringify({
      extends: join(repoRoot, 'test/types/tsconfig.json'),
      compilerOptions: { rootDir: repoRoot, paths: { 'fabric-ops': [join(declarations, 'index.d.ts')] } },
      include: [join(repoRoot, 'test/types/*.ts')],
    }),
  );
  expect(await run(['-p', project])).toEqual({ code: 0, output: '' });
}, 300_000);
