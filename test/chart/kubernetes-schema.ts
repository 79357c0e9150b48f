import { spawnSync } from 'node:child_process';
import * as path from 'node:path';

/**
 * Kubernetes objects validated against their schemas by scripts/chart-validate.mjs, in a child
 * process (kubernetes-models is ESM only, which jest's module system cannot load): the models'
 * schemas and the unknown-field check of `kubectl apply --validate=strict`. Needs no cluster and
 * no helm.
 */

const repoRoot = path.resolve(__dirname, '../..');

export interface ValidationResult {
  index: number;
  apiVersion: string;
  kind: string;
  name: string | null;
  errors: string[];
}

/** One result per object, in order. */
export function validateObjects(objects: readonly object[]): ValidationResult[] {
  const input = objects.map((object) => `---\n${JSON.stringify(object)}\n`).join('');
  const run = spawnSync(process.execPath, [path.join(repoRoot, 'scripts', 'chart-validate.mjs')], {
    cwd: repoRoot,
    input,
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  if (run.status !== 0 && run.status !== 1) throw new Error(`chart-validate.mjs failed (${run.status}): ${run.stderr}`);
  return JSON.parse(run.stdout) as ValidationResult[];
}
