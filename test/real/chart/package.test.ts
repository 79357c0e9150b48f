import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { parse } from 'yaml';
import { chartProject, makeChart, pathWithoutHelm } from '../../chart/make-chart';
import { requireHelm } from '../../support/real-binaries';
import { chartDir, helm, helmBinary, repoRoot } from './helm';

/**
 * helm package, and `make chart` with helm (the parts of the chart's packaging that need no helm
 * are checked in test/chart/package.test.ts).
 */

// The opt-in suite: without helm every test fails, saying so (test/support/real-binaries.ts).
beforeAll(() => {
  requireHelm();
});

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
      'fabric-ops/files/fleet-channel-alert-rules.yaml',
      'fabric-ops/files/healthz-check.js',
      'fabric-ops/templates/NOTES.txt',
      'fabric-ops/templates/tests/test-healthz.yaml',
    ]),
  );
});

describe('make chart', () => {
  test('with helm on the PATH: packages the chart; says "updated" only when the alert rules (or the fleet rules) changed', () => {
    const root = chartProject(dir, 'path-helm');
    const bin = path.join(dir, 'path-helm', 'bin');
    mkdirSync(bin);
    symlinkSync(helmBinary(), path.join(bin, 'helm'));
    const first = makeChart(root, pathWithoutHelm([bin]));
    expect(first.stderr).toBe('');
    expect(first.status).toBe(0);
    expect(first.stdout).not.toContain('updated');
    expect(readdirSync(path.join(root, '.tmp', 'chart'))).toEqual([`fabric-ops-${packageVersion}.tgz`]);

    const rules = path.join(root, 'deploy', 'prometheus', 'alert-rules.yaml');
    writeFileSync(rules, `${readFileSync(rules, 'utf8')}# edited\n`);
    const second = makeChart(root, pathWithoutHelm([bin]));
    expect(second.status).toBe(0);
    expect(second.stdout).toContain('charts/fabric-ops/files/alert-rules.yaml updated from deploy/prometheus/alert-rules.yaml');
    expect(readFileSync(path.join(root, 'charts', 'fabric-ops', 'files', 'alert-rules.yaml'), 'utf8')).toBe(readFileSync(rules, 'utf8'));
    expect(second.stdout).not.toContain('fleet-alert-rules.yaml');

    const fleetRules = path.join(root, 'deploy', 'prometheus', 'fleet-alert-rules.yaml');
    writeFileSync(fleetRules, `${readFileSync(fleetRules, 'utf8')}# edited\n`);
    const third = makeChart(root, pathWithoutHelm([bin]));
    expect(third.status).toBe(0);
    expect(third.stdout).toContain('charts/fabric-ops/files/fleet-alert-rules.yaml updated from deploy/prometheus/fleet-alert-rules.yaml');
    expect(third.stdout).not.toContain('files/alert-rules.yaml updated');
    expect(readFileSync(path.join(root, 'charts', 'fabric-ops', 'files', 'fleet-alert-rules.yaml'), 'utf8')).toBe(readFileSync(fleetRules, 'utf8'));
  });
});
