import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { copyFile, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { parse, stringify } from 'yaml';
import { requireCommand } from '../support/prerequisites';

/** The files of deploy/ as the tests read them, and a runner for promtool. */

export const deployDir = resolve(__dirname, '..', '..', 'deploy');
export const dashboardFile = join(deployDir, 'grafana', 'fabric-ops-dashboard.json');
export const rulesFile = join(deployDir, 'prometheus', 'alert-rules.yaml');
export const rulesTestFile = join(deployDir, 'prometheus', 'alert-rules.test.yaml');
export const fleetRulesFile = join(deployDir, 'prometheus', 'fleet-alert-rules.yaml');
export const fleetChannelRulesFile = join(deployDir, 'prometheus', 'fleet-channel-alert-rules.yaml');
export const companionRulesFile = join(deployDir, 'prometheus', 'companion-alert-rules.yaml');
export const companionRulesTestFile = join(deployDir, 'prometheus', 'companion-alert-rules.test.yaml');
export const prometheusConfigFile = join(deployDir, 'prometheus', 'prometheus.yml');

export interface DataSourceRef {
  type?: string;
  uid?: string;
}

export interface DashboardTarget {
  refId: string;
  expr: string;
  legendFormat?: string;
  datasource?: DataSourceRef;
}

export interface DashboardPanel {
  id: number;
  type: string;
  title: string;
  datasource?: DataSourceRef;
  gridPos: { h: number; w: number; x: number; y: number };
  targets?: DashboardTarget[];
  panels?: DashboardPanel[];
}

export interface DashboardVariable {
  name: string;
  type: string;
  query: unknown;
  definition?: string;
  datasource?: DataSourceRef;
  allValue?: string;
}

export interface Dashboard {
  title: string;
  uid: string;
  schemaVersion: number;
  templating: { list: DashboardVariable[] };
  panels: DashboardPanel[];
}

export function readDashboard(): Dashboard {
  return JSON.parse(readFileSync(dashboardFile, 'utf8')) as Dashboard;
}

/** Every panel, rows' collapsed children included. */
export function allPanels(dashboard: Dashboard): DashboardPanel[] {
  return dashboard.panels.flatMap((panel) => [panel, ...(panel.panels ?? [])]);
}

export interface DashboardQuery {
  panel: string;
  refId: string;
  expr: string;
}

export function dashboardQueries(dashboard: Dashboard): DashboardQuery[] {
  return allPanels(dashboard).flatMap((panel) =>
    (panel.targets ?? []).map((target) => ({ panel: `${panel.id} ${panel.title}`, refId: target.refId, expr: target.expr })),
  );
}

export interface AlertRule {
  alert: string;
  expr: string;
  for?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

export interface RulesFile {
  groups: { name: string; rules: AlertRule[] }[];
}

export function readRules(): RulesFile {
  return parse(readFileSync(rulesFile, 'utf8')) as RulesFile;
}

export function readFleetRules(): RulesFile {
  return parse(readFileSync(fleetRulesFile, 'utf8')) as RulesFile;
}

export function readCompanionRules(): RulesFile {
  return parse(readFileSync(companionRulesFile, 'utf8')) as RulesFile;
}

export interface RunResult {
  code: number;
  output: string;
}

/** Runs a command to completion; stdout and stderr together in `output`, never throws on a non-zero exit. */
export function run(command: string, args: string[], cwd?: string): Promise<RunResult> {
  requireCommand(command);
  return new Promise((done, reject) => {
    execFile(command, args, { cwd, maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) => {
      const output = `${stdout}${stderr}`;
      // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- an ExecFileException is an Error (@types/node declares it with Omit<>, which hides that)
      if (error && typeof error.code !== 'number') return reject(error);
      done({ code: error ? Number(error.code) : 0, output });
    });
  });
}

interface RuleUnitTests {
  rule_files: string[];
  tests: { name: string; alert_rule_test: { alertname: string; exp_alerts: unknown[] }[] }[];
}

/** Runs the promtool unit tests with one alert of the rules changed; resolves with promtool's output, and fails when they still pass. */
export type Weaken = (change: (rule: { expr: string; for?: string }) => void, alert: string) => Promise<string>;

/**
 * The promtool unit tests of a rules file (`<name>.test.yaml` beside it): they pass, cover every
 * alert firing and not firing, and fail when an alert loses its `for:` or never fires; `more` adds
 * weakened cases of the file's own. `rules` is read lazily (a file may load it in beforeAll).
 */
export function describePromtoolUnitTests(rules: () => RulesFile, ruleFile: string, testFile: string, more?: (weaken: Weaken) => void): void {
  const alertNames = (): string[] => rules().groups.flatMap((group) => group.rules.map((rule) => rule.alert));
  const ruleName = basename(ruleFile);
  const testName = basename(testFile);

  test('pass their unit tests (`promtool test rules`)', async () => {
    const result = await run('promtool', ['test', 'rules', testFile]);
    expect(result.output).toContain('SUCCESS');
    expect(result.code).toBe(0);
  });

  test('every alert is unit-tested both firing and not firing', async () => {
    const unitTests = parse(await readFile(testFile, 'utf8')) as RuleUnitTests;
    expect(unitTests.rule_files).toEqual([ruleName]);
    const cases = unitTests.tests.flatMap((t) => t.alert_rule_test);
    for (const alert of alertNames()) {
      const mine = cases.filter((c) => c.alertname === alert);
      expect({ alert, firing: mine.some((c) => c.exp_alerts.length > 0) }).toEqual({ alert, firing: true });
      expect({ alert, silent: mine.some((c) => c.exp_alerts.length === 0) }).toEqual({ alert, silent: true });
    }
  });

  describe('the unit tests fail when an alert is weakened', () => {
    let dir: string;
    beforeAll(async () => {
      dir = await mkdtemp(join(tmpdir(), 'fabric-ops-rules-'));
      await copyFile(testFile, join(dir, testName));
    });
    afterAll(async () => {
      if (dir) await rm(dir, { recursive: true, force: true });
    });

    const weaken: Weaken = async (change, alert) => {
      const mutated = structuredClone<RulesFile>(rules());
      const rule = mutated.groups.flatMap((group) => group.rules).find((r) => r.alert === alert);
      if (!rule) throw new Error(`no alert ${alert} in ${ruleName}`);
      change(rule);
      await writeFile(join(dir, ruleName), stringify(mutated));
      const result = await run('promtool', ['test', 'rules', testName], dir);
      expect(result.code).not.toBe(0);
      return result.output;
    };

    // The names are read from the file when the tests are collected.
    const names = parse(readFileSync(ruleFile, 'utf8')) as RulesFile;
    const collected = names.groups.flatMap((group) => group.rules.map((rule) => rule.alert));

    test.each(collected)('%s without its `for:` fires too early', async (alert) => {
      expect(await weaken((rule) => delete rule.for, alert)).toContain(`alertname: ${alert}`);
    });

    test.each(collected)('%s that never fires is caught', async (alert) => {
      expect(await weaken((rule) => (rule.expr = 'vector(1) == 0'), alert)).toContain(`alertname: ${alert}`);
    });

    more?.(weaken);
  });
}
