import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, symlinkSync } from 'node:fs';
import * as path from 'node:path';
import { repoRoot } from './values-schema';

/** `make chart` in a copy of what it reads (shared by test/chart/ and the opt-in test/real/chart/). */

/** A copy of what `make chart` reads, under `dir/name/project`. */
export function chartProject(dir: string, name: string): string {
  const root = path.join(dir, name, 'project');
  for (const entry of ['Makefile', 'package.json', 'scripts', 'charts', 'deploy'])
    cpSync(path.join(repoRoot, entry), path.join(root, entry), { recursive: true });
  symlinkSync(path.join(repoRoot, 'node_modules'), path.join(root, 'node_modules'));
  // scripts/node24.sh finds Node 24 there (the Makefile runs it even when NODE is given).
  symlinkSync(path.join(repoRoot, '.tools'), path.join(root, '.tools'));
  return root;
}

/** PATH without any folder holding a helm, plus `extra` first. */
export function pathWithoutHelm(extra: string[] = []): string {
  return [...extra, ...(process.env.PATH ?? '').split(':').filter((entry) => entry !== '' && !existsSync(path.join(entry, 'helm')))].join(':');
}

/** `make chart` in `root` with this PATH and no HELM. */
export function makeChart(root: string, searchPath: string): { status: number | null; stdout: string; stderr: string } {
  const env: NodeJS.ProcessEnv = { ...process.env, PATH: searchPath };
  delete env.HELM;
  const run = spawnSync('make', ['--no-print-directory', '-C', root, 'chart', `NODE=${process.execPath}`], { encoding: 'utf8', env });
  return { status: run.status, stdout: run.stdout, stderr: run.stderr };
}
