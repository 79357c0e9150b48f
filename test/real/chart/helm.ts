import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as os from 'node:os';
import { parse, parseAllDocuments } from 'yaml';
import { requireHelm } from '../../support/real-binaries';

/**
 * Test support for the chart's opt-in suite: the real helm binary, rendering, and validation of
 * the rendered objects. (The values schema is checked without helm in test/chart/.)
 */

export const repoRoot = path.resolve(__dirname, '../../..');
export const chartDir = path.join(repoRoot, 'charts', 'fabric-ops');

/**
 * `$HELM`, else `helm` on the PATH (test/support/real-binaries.ts). Without one every test that
 * calls it fails with "OPT-IN SUITE CANNOT RUN: ..."; it is never a reason to skip.
 */
export function helmBinary(): string {
  return requireHelm();
}

export interface HelmRun {
  status: number;
  stdout: string;
  stderr: string;
}

export function helm(args: string[], cwd = repoRoot): HelmRun {
  const run = spawnSync(helmBinary(), args, { cwd, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  if (run.error) throw run.error;
  return { status: run.status ?? -1, stdout: run.stdout, stderr: run.stderr };
}

/** A rendered Kubernetes object, loosely typed: tests read fields by path. */
export interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  spec?: Record<string, unknown>;
  data?: Record<string, string>;
  [key: string]: unknown;
}

export interface RenderOptions {
  set?: Record<string, string | number | boolean | null>;
  /** Values as JSON (helm --set-json), for lists and maps. */
  setJson?: Record<string, unknown>;
  apiVersions?: string[];
  namespace?: string;
  release?: string;
  chart?: string;
  /** Extra helm arguments, e.g. --show-only. */
  extra?: string[];
}

export const defaultRelease = 'peer0';
export const defaultNamespace = 'org1';

export function templateArgs(options: RenderOptions = {}): string[] {
  const args = ['template', options.release ?? defaultRelease, options.chart ?? chartDir, '--namespace', options.namespace ?? defaultNamespace];
  for (const [key, value] of Object.entries(options.set ?? {})) args.push('--set', `${key}=${value === null ? 'null' : String(value)}`);
  for (const [key, value] of Object.entries(options.setJson ?? {})) args.push('--set-json', `${key}=${JSON.stringify(value)}`);
  for (const apiVersion of options.apiVersions ?? []) args.push('--api-versions', apiVersion);
  args.push(...(options.extra ?? []));
  return args;
}

export function parseObjects(stream: string): K8sObject[] {
  return parseAllDocuments(stream)
    .map((document) => {
      if (document.errors.length > 0) throw new Error(`rendered YAML does not parse: ${document.errors[0]?.message}`);
      return document.toJS() as K8sObject | null;
    })
    .filter((object): object is K8sObject => object !== null && object !== undefined);
}

/** helm template; throws with helm's stderr when it fails. */
export function render(options: RenderOptions = {}): { yaml: string; objects: K8sObject[] } {
  const run = helm(templateArgs(options));
  if (run.status !== 0) throw new Error(`helm ${templateArgs(options).join(' ')} failed (${run.status}): ${run.stderr}`);
  return { yaml: run.stdout, objects: parseObjects(run.stdout) };
}

/** helm template that must fail: returns helm's error text. */
export function renderFailure(options: RenderOptions): string {
  const run = helm(templateArgs(options));
  if (run.status === 0) throw new Error(`helm ${templateArgs(options).join(' ')} rendered, but a failure was expected`);
  return run.stderr;
}

// Schema validation needs no helm: it lives with the helm-free chart tests, and is re-exported here.
export { validateObjects, type ValidationResult } from '../../chart/kubernetes-schema';

export function find(objects: K8sObject[], kind: string, name?: string): K8sObject {
  const found = objects.filter((object) => object.kind === kind && (name === undefined || object.metadata.name === name));
  if (found.length !== 1) {
    throw new Error(
      `expected one ${kind}${name ? ` ${name}` : ''}, found ${found.length} among ${objects.map((o) => `${o.kind}/${o.metadata.name}`).join(', ')}`,
    );
  }
  return found[0] as K8sObject;
}

export function kinds(objects: K8sObject[]): string[] {
  return objects.map((object) => `${object.kind}/${object.metadata.name}`).sort();
}

/** Reads a nested field: at(obj, 'spec', 'template', 'spec'). */
export function at<T = unknown>(value: unknown, ...keys: (string | number)[]): T {
  let current: unknown = value;
  for (const key of keys) {
    if (current === null || typeof current !== 'object') throw new Error(`no field ${keys.join('.')} (stopped at ${String(key)})`);
    current = (current as Record<string | number, unknown>)[key];
  }
  return current as T;
}

/**
 * NOTES.txt rendered: helm template skips NOTES, so a copy of the chart renders it through tpl
 * (in `dir`, else a temporary folder removed afterwards).
 */
export function renderNotes(options: RenderOptions = {}, dir?: string): string {
  const base = dir ?? fs.mkdtempSync(path.join(os.tmpdir(), 'fabric-ops-notes-'));
  try {
    const copy = path.join(base, 'notes-chart');
    fs.rmSync(copy, { recursive: true, force: true });
    fs.cpSync(chartDir, copy, { recursive: true });
    fs.cpSync(path.join(copy, 'templates', 'NOTES.txt'), path.join(copy, 'files', 'notes.tpl'));
    fs.writeFileSync(path.join(copy, 'templates', 'zz-notes.yaml'), 'notes: {{ tpl (.Files.Get "files/notes.tpl") . | toJson }}\n');
    const run = helm(templateArgs({ ...options, chart: copy, extra: ['--show-only', 'templates/zz-notes.yaml'] }));
    if (run.status !== 0) throw new Error(`rendering NOTES.txt failed: ${run.stderr}`);
    return (parse(run.stdout) as { notes: string }).notes;
  } finally {
    if (dir === undefined) fs.rmSync(base, { recursive: true, force: true });
  }
}
