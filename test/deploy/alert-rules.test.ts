/**
 * deploy/prometheus/alert-rules.yaml: valid for promtool, every alert shaped for operators
 * (for, severity, summary and description with $labels), and its unit tests
 * (alert-rules.test.yaml) pass and cover every alert firing and not firing; weakening an
 * alert makes them fail.
 */
import { copyFile, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse, stringify } from 'yaml';
import { readRules, rulesFile, rulesTestFile, run, type RulesFile } from './deploy-files';

const rules = readRules();
const alerts = rules.groups.flatMap((group) => group.rules);

interface RuleUnitTests {
  rule_files: string[];
  tests: { name: string; alert_rule_test: { alertname: string; exp_alerts: unknown[] }[] }[];
}

describe('the alert rules', () => {
  test('pass `promtool check rules`', async () => {
    const result = await run('promtool', ['check', 'rules', rulesFile]);
    expect(result.output).toContain(`SUCCESS: ${alerts.length} rules found`);
    expect(result.code).toBe(0);
  });

  test('are the alerts of the issue: a checker failing, target down, 401s on /metrics', () => {
    expect(alerts.map((rule) => rule.alert).sort()).toEqual([
      'FabricOpsCertificateExpiringSoon',
      'FabricOpsHealthCheckFailing',
      'FabricOpsMetricsUnauthorized',
      'FabricOpsTargetDown',
    ]);
  });

  test.each(alerts.map((rule) => [rule.alert, rule] as const))('%s has for, a severity, and annotations naming $labels', (_name, rule) => {
    expect(rule.for).toMatch(/^\d+[smh]$/);
    expect(['critical', 'warning']).toContain(rule.labels?.severity);
    expect(rule.annotations?.summary).toMatch(/\$labels\.instance/);
    expect(rule.annotations?.description).toMatch(/\$labels\./);
    expect(rule.annotations?.description).toContain('Run:');
  });

  test('pass their unit tests (`promtool test rules`)', async () => {
    const result = await run('promtool', ['test', 'rules', rulesTestFile]);
    expect(result.output).toContain('SUCCESS');
    expect(result.code).toBe(0);
  });

  test('every alert is unit-tested both firing and not firing', async () => {
    const unitTests = parse(await readFile(rulesTestFile, 'utf8')) as RuleUnitTests;
    expect(unitTests.rule_files).toEqual(['alert-rules.yaml']);
    const cases = unitTests.tests.flatMap((t) => t.alert_rule_test);
    for (const rule of alerts) {
      const mine = cases.filter((c) => c.alertname === rule.alert);
      expect({ alert: rule.alert, firing: mine.some((c) => c.exp_alerts.length > 0) }).toEqual({ alert: rule.alert, firing: true });
      expect({ alert: rule.alert, silent: mine.some((c) => c.exp_alerts.length === 0) }).toEqual({ alert: rule.alert, silent: true });
    }
  });

  describe('the unit tests fail when an alert is weakened', () => {
    let dir: string;
    beforeAll(async () => {
      dir = await mkdtemp(join(tmpdir(), 'fabric-ops-rules-'));
      await copyFile(rulesTestFile, join(dir, 'alert-rules.test.yaml'));
    });
    afterAll(async () => {
      if (dir) await rm(dir, { recursive: true, force: true });
    });

    async function testWith(change: (rule: { expr: string; for?: string }) => void, alert: string): Promise<string> {
      const mutated = structuredClone<RulesFile>(rules);
      const rule = mutated.groups.flatMap((group) => group.rules).find((r) => r.alert === alert);
      if (!rule) throw new Error(`no alert ${alert}`);
      change(rule);
      await writeFile(join(dir, 'alert-rules.yaml'), stringify(mutated));
      const result = await run('promtool', ['test', 'rules', 'alert-rules.test.yaml'], dir);
      expect(result.code).not.toBe(0);
      return result.output;
    }

    test.each(alerts.map((rule) => rule.alert))('%s without its `for:` fires too early', async (alert) => {
      const output = await testWith((rule) => delete rule.for, alert);
      expect(output).toContain(`alertname: ${alert}`);
    });

    test.each(alerts.map((rule) => rule.alert))('%s that never fires is caught', async (alert) => {
      const output = await testWith((rule) => (rule.expr = 'vector(1) == 0'), alert);
      expect(output).toContain(`alertname: ${alert}`);
    });
  });
});
