/**
 * deploy/prometheus/alert-rules.yaml: valid for promtool, every alert shaped for operators
 * (for, severity, summary and description with $labels), and its unit tests
 * (alert-rules.test.yaml) pass and cover every alert firing and not firing; weakening an
 * alert makes them fail.
 */
import { describePromtoolUnitTests, readRules, rulesFile, rulesTestFile, run } from './deploy-files';

const rules = readRules();
const alerts = rules.groups.flatMap((group) => group.rules);

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

  describePromtoolUnitTests(() => rules, rulesFile, rulesTestFile);
});
