import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { parse } from 'yaml';
import { chartDir, helm, helmBinary, repoRoot } from './helm';

/** helm package, the alert rules copied from deploy/, and the generated values documentation. */

const packageVersion = (JSON.parse(readFileSync(path.join(repoRoot, 'package.json'), 'utf8')) as { version: string }).version;

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'fabric-ops-chart-package-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

test("helm package produces fabric-ops-<package.json version>.tgz whose version and appVersion are package.json's", () => {
  const out = path.join(dir, 'package');
  const run = helm(['package', chartDir, '--destination', out]);
  expect(run.stderr).toBe('');
  expect(run.status).toBe(0);
  expect(readdirSync(out)).toEqual([`fabric-ops-${packageVersion}.tgz`]);
  const extract = spawnSync('tar', ['--touch', '-xzf', path.join(out, `fabric-ops-${packageVersion}.tgz`), '-C', out], { encoding: 'utf8' });
  expect(extract.stderr).toBe('');
  const chart = parse(readFileSync(path.join(out, 'fabric-ops', 'Chart.yaml'), 'utf8')) as { apiVersion: string; version: string; appVersion: string };
  expect(chart).toMatchObject({ apiVersion: 'v2', version: packageVersion, appVersion: packageVersion });
  const files = spawnSync('tar', ['-tzf', path.join(out, `fabric-ops-${packageVersion}.tgz`)], { encoding: 'utf8' }).stdout.split('\n');
  expect(files).toEqual(
    expect.arrayContaining([
      'fabric-ops/values.schema.json',
      'fabric-ops/README.md',
      'fabric-ops/files/alert-rules.yaml',
      'fabric-ops/files/fleet-alert-rules.yaml',
      'fabric-ops/files/healthz-check.js',
      'fabric-ops/templates/NOTES.txt',
      'fabric-ops/templates/tests/test-healthz.yaml',
    ]),
  );
});

test.each(['alert-rules.yaml', 'fleet-alert-rules.yaml'])("the chart's %s is deploy/prometheus's, byte for byte (scripts/chart-sync-rules.sh)", (file) => {
  const deployed = readFileSync(path.join(repoRoot, 'deploy', 'prometheus', file), 'utf8');
  const shipped = readFileSync(path.join(chartDir, 'files', file), 'utf8');
  expect(shipped).toBe(deployed);
  expect((parse(deployed) as { groups: unknown[] }).groups.length).toBeGreaterThan(0);
});

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

describe('make chart', () => {
  /** A copy of what `make chart` reads, in a folder with no ../shared/tools beside it. */
  const project = (name: string): string => {
    const root = path.join(dir, name, 'project');
    for (const entry of ['Makefile', 'package.json', 'scripts', 'charts', 'deploy'])
      cpSync(path.join(repoRoot, entry), path.join(root, entry), { recursive: true });
    symlinkSync(path.join(repoRoot, 'node_modules'), path.join(root, 'node_modules'));
    // scripts/node24.sh finds Node 24 there (the Makefile runs it even when NODE is given).
    symlinkSync(path.join(repoRoot, '.tools'), path.join(root, '.tools'));
    return root;
  };
  /** PATH without any folder holding a helm, plus `extra` first. */
  const pathWithoutHelm = (extra: string[] = []): string =>
    [...extra, ...(process.env.PATH ?? '').split(':').filter((entry) => entry !== '' && !existsSync(path.join(entry, 'helm')))].join(':');
  const make = (root: string, searchPath: string): { status: number | null; stdout: string; stderr: string } => {
    const env: NodeJS.ProcessEnv = { ...process.env, PATH: searchPath };
    delete env.HELM;
    const run = spawnSync('make', ['--no-print-directory', '-C', root, 'chart', `NODE=${process.execPath}`], { encoding: 'utf8', env });
    return { status: run.status, stdout: run.stdout, stderr: run.stderr };
  };

  test('without helm anywhere: stops before doing anything, saying where it looked and how to get one', () => {
    const root = project('no-helm');
    const run = make(root, pathWithoutHelm());
    expect(run.status).not.toBe(0);
    expect(run.stderr).toContain('make chart: no helm: not on the PATH, not at ../shared/tools/helm');
    expect(run.stderr).toContain('https://helm.sh/docs/intro/install/');
    expect(run.stderr).toContain('make chart HELM=/path/to/helm');
    expect(run.stdout).not.toContain('alert-rules.yaml');
  });

  test('with helm on the PATH: packages the chart; says "updated" only when the alert rules (or the fleet rules) changed', () => {
    const root = project('path-helm');
    const bin = path.join(dir, 'path-helm', 'bin');
    mkdirSync(bin);
    symlinkSync(helmBinary(), path.join(bin, 'helm'));
    const first = make(root, pathWithoutHelm([bin]));
    expect(first.stderr).toBe('');
    expect(first.status).toBe(0);
    expect(first.stdout).not.toContain('updated');
    expect(readdirSync(path.join(root, '.tmp', 'chart'))).toEqual([`fabric-ops-${packageVersion}.tgz`]);

    const rules = path.join(root, 'deploy', 'prometheus', 'alert-rules.yaml');
    writeFileSync(rules, `${readFileSync(rules, 'utf8')}# edited\n`);
    const second = make(root, pathWithoutHelm([bin]));
    expect(second.status).toBe(0);
    expect(second.stdout).toContain('charts/fabric-ops/files/alert-rules.yaml updated from deploy/prometheus/alert-rules.yaml');
    expect(readFileSync(path.join(root, 'charts', 'fabric-ops', 'files', 'alert-rules.yaml'), 'utf8')).toBe(readFileSync(rules, 'utf8'));
    expect(second.stdout).not.toContain('fleet-alert-rules.yaml');

    const fleetRules = path.join(root, 'deploy', 'prometheus', 'fleet-alert-rules.yaml');
    writeFileSync(fleetRules, `${readFileSync(fleetRules, 'utf8')}# edited\n`);
    const third = make(root, pathWithoutHelm([bin]));
    expect(third.status).toBe(0);
    expect(third.stdout).toContain('charts/fabric-ops/files/fleet-alert-rules.yaml updated from deploy/prometheus/fleet-alert-rules.yaml');
    expect(third.stdout).not.toContain('files/alert-rules.yaml updated');
    expect(readFileSync(path.join(root, 'charts', 'fabric-ops', 'files', 'fleet-alert-rules.yaml'), 'utf8')).toBe(readFileSync(fleetRules, 'utf8'));
  });
});
