import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { parse } from 'yaml';
import { chartProject, makeChart, pathWithoutHelm } from './make-chart';
import { chartDir, repoRoot } from './values-schema';

/**
 * The chart's files that need no helm: Chart.yaml's versions, the alert rules copied from deploy/,
 * the generated values documentation, `make chart` without helm, and the README. (helm package
 * and lint are the opt-in suite's, test/real/chart/package.test.ts.)
 */

const packageVersion = (JSON.parse(readFileSync(path.join(repoRoot, 'package.json'), 'utf8')) as { version: string }).version;

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'fabric-ops-chart-files-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

test("Chart.yaml: version and appVersion are package.json's (helm package names the archive after it)", () => {
  const chart = parse(readFileSync(path.join(chartDir, 'Chart.yaml'), 'utf8')) as { apiVersion: string; name: string; version: string; appVersion: string };
  expect(chart).toMatchObject({ apiVersion: 'v2', name: 'fabric-ops', version: packageVersion, appVersion: packageVersion });
});

test.each(['alert-rules.yaml', 'fleet-alert-rules.yaml', 'fleet-channel-alert-rules.yaml', 'companion-alert-rules.yaml'])(
  "the chart's %s is deploy/prometheus's, byte for byte (scripts/chart-sync-rules.sh)",
  (file) => {
    const deployed = readFileSync(path.join(repoRoot, 'deploy', 'prometheus', file), 'utf8');
    const shipped = readFileSync(path.join(chartDir, 'files', file), 'utf8');
    expect(shipped).toBe(deployed);
    expect((parse(deployed) as { groups: unknown[] }).groups.length).toBeGreaterThan(0);
  },
);

describe('values documentation (scripts/chart-docs.js)', () => {
  const script = path.join(repoRoot, 'scripts', 'chart-docs.js');
  const check = (chart: string): { status: number | null; stderr: string } => {
    const run = spawnSync(process.execPath, [script, '--check', chart], { encoding: 'utf8' });
    return { status: run.status, stderr: run.stderr };
  };
  const copy = (name: string): string => {
    const target = path.join(dir, name);
    cpSync(chartDir, target, { recursive: true });
    return target;
  };
  const edit = (file: string, from: string, to: string): void => {
    const text = readFileSync(file, 'utf8');
    expect(text).toContain(from);
    writeFileSync(file, text.replace(from, to));
  };

  test('the committed README table and schema descriptions match values.yaml', () => {
    expect(check(chartDir)).toEqual({ status: 0, stderr: '' });
    const readme = readFileSync(path.join(chartDir, 'README.md'), 'utf8');
    expect(readme).toContain('| `tls.provider` | "certManager" \\| "existingSecrets" \\| "none" | `"certManager"` |');
    expect(readme).toContain('| `runtimeSocket.enabled` | boolean | `false` |');
  });

  test('a changed comment makes the check fail, and --write repairs it', () => {
    const chart = copy('comment');
    edit(path.join(chart, 'values.yaml'), '# -- Image pull policy.', '# -- How the image is pulled.');
    const failed = check(chart);
    expect(failed.status).toBe(1);
    expect(failed.stderr).toContain('README.md is out of date with values.yaml');
    expect(failed.stderr).toContain('values.schema.json is out of date with values.yaml');
    expect(spawnSync(process.execPath, [script, '--write', chart]).status).toBe(0);
    expect(check(chart)).toEqual({ status: 0, stderr: '' });
    expect(readFileSync(path.join(chart, 'README.md'), 'utf8')).toContain('How the image is pulled.');
  });

  test('a changed default makes the check fail', () => {
    const chart = copy('default');
    edit(path.join(chart, 'values.yaml'), 'replicaCount: 1', 'replicaCount: 2');
    expect(check(chart).stderr).toContain('README.md is out of date');
  });

  test('a key without a comment, or missing from the schema, is reported', () => {
    const chart = copy('keys');
    edit(path.join(chart, 'values.yaml'), '# -- Number of pods.\nreplicaCount: 1', 'replicaCount: 1\n# -- Undeclared.\nextraKey: 1');
    const failed = check(chart);
    expect(failed.status).toBe(1);
    expect(failed.stderr).toContain('replicaCount: no "# -- description" comment above it in values.yaml');
    expect(failed.stderr).toContain('extraKey: in values.yaml but not in values.schema.json');
  });
});

test('make chart without helm: stops before doing anything, saying how to get one', () => {
  const root = chartProject(dir, 'no-helm');
  const run = makeChart(root, pathWithoutHelm());
  expect(run.status).not.toBe(0);
  expect(run.stderr).toContain('make chart: no helm');
  expect(run.stderr).toContain('https://helm.sh/docs/intro/install/');
  expect(run.stderr).toContain('make chart HELM=/path/to/helm');
  expect(run.stdout).not.toContain('alert-rules.yaml');
});

test("the chart's README states Pod Security beside the runtime socket", () => {
  const readme = readFileSync(path.join(chartDir, 'README.md'), 'utf8');
  expect(readme).toMatch(/Runtime socket[\s\S]*hostPath[\s\S]*pod-security\.kubernetes\.io\/enforce=privileged/);
});
