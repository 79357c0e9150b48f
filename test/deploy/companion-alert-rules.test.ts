/**
 * deploy/prometheus/companion-alert-rules.yaml (companion mode, docs/companion.md): valid for
 * promtool, every alert shaped for operators, its unit tests (companion-alert-rules.test.yaml)
 * pass and cover every alert firing and not firing, and weakening an alert makes them fail. The
 * rules select only the companion's own series and the `node` checker, which alert-rules.yaml's
 * FabricOpsHealthCheckFailing leaves to them. They run on a real Prometheus in
 * test/integration/companion/disk.test.ts (the disk and node alerts) and prometheus-live.test.ts.
 */
import { certificateMetricOptions } from '../../src/companion/certificate-monitor';
import { diskMetricOptions } from '../../src/companion/disk-monitor';
import { companionRulesFile, companionRulesTestFile, describePromtoolUnitTests, readCompanionRules, readRules, run } from './deploy-files';

const rules = readCompanionRules();
const alerts = rules.groups.flatMap((group) => group.rules);

function fqName(options: { namespace: string; subsystem: string; name: string }): string {
  return `${options.namespace}_${options.subsystem}_${options.name}`;
}

describe('the companion alert rules', () => {
  test('pass `promtool check rules`', async () => {
    const result = await run('promtool', ['check', 'rules', companionRulesFile]);
    expect(result.output).toContain(`SUCCESS: ${alerts.length} rules found`);
    expect(result.code).toBe(0);
  });

  test("are the issue's: a certificate expired, within 7 days, within 30 days, a certificate file problem, disk under threshold (bytes, inodes, full within 24h), the node failing", () => {
    expect(alerts.map((rule) => [rule.alert, rule.labels?.severity])).toEqual([
      ['FabricOpsNodeCertificateExpired', 'critical'],
      ['FabricOpsNodeCertificateExpiresWithin7Days', 'warning'],
      ['FabricOpsNodeCertificateExpiresWithin30Days', 'info'],
      ['FabricOpsNodeCertificateFileProblem', 'warning'],
      ['FabricOpsNodeDiskLow', 'critical'],
      ['FabricOpsNodeDiskInodesLow', 'critical'],
      ['FabricOpsNodeDiskFullWithin24h', 'warning'],
      ['FabricOpsCompanionNodeFailing', 'critical'],
    ]);
  });

  test("select the companion's metrics as the code names them (certificateMetricOptions, diskMetricOptions), and the disk alerts its exported thresholds", () => {
    const exprs = alerts.map((rule) => rule.expr).join('\n');
    expect(exprs).toContain(fqName(certificateMetricOptions.expiry));
    expect(exprs).toContain(fqName(certificateMetricOptions.problems));
    expect(alerts.find((rule) => rule.alert === 'FabricOpsNodeDiskLow')?.expr).toBe(
      `${fqName(diskMetricOptions.freeBytes)} < ${fqName(diskMetricOptions.minFreeBytes)}`,
    );
    expect(alerts.find((rule) => rule.alert === 'FabricOpsNodeDiskInodesLow')?.expr).toBe(
      `${fqName(diskMetricOptions.freeInodes)} < ${fqName(diskMetricOptions.minFreeInodes)}`,
    );
    const names = [...exprs.matchAll(/\b(companion_[a-z_]+)/g)].map((match) => match[1]);
    const declared = [...Object.values(certificateMetricOptions), ...Object.values(diskMetricOptions)].map(fqName);
    expect(names.filter((name) => !declared.includes(name ?? ''))).toEqual([]);
  });

  test("the generic FabricOpsHealthCheckFailing leaves the companion's node and disk checkers to these rules", () => {
    const generic = readRules()
      .groups.flatMap((group) => group.rules)
      .find((rule) => rule.alert === 'FabricOpsHealthCheckFailing');
    expect(generic?.expr).toBe('health_check_status{component!~"node|disk"} == 0');
    expect(alerts.find((rule) => rule.alert === 'FabricOpsCompanionNodeFailing')?.expr).toBe('health_check_status{component="node"} == 0');
  });

  test.each(alerts.map((rule) => [rule.alert, rule] as const))('%s has for, a severity, and annotations naming $labels', (_name, rule) => {
    expect(rule.for).toMatch(/^\d+[smh]$/);
    expect(['critical', 'warning', 'info']).toContain(rule.labels?.severity);
    expect(rule.annotations?.summary).toMatch(/\$labels\.instance/);
    expect(rule.annotations?.description).toMatch(/\$labels\./);
    expect(rule.annotations?.description).toContain('Run:');
  });

  describePromtoolUnitTests(
    () => rules,
    companionRulesFile,
    companionRulesTestFile,
    (weaken) => {
      test.each([
        ['FabricOpsNodeCertificateExpiresWithin7Days', '7 * 86400', '8 * 86400'],
        ['FabricOpsNodeCertificateExpiresWithin30Days', '30 * 86400', '31 * 86400'],
        ['FabricOpsNodeCertificateExpired', '<= 0', '<= 86400'],
      ])('%s with a wider window (%s made %s) is caught', async (alert, from, to) => {
        const output = await weaken((rule) => (rule.expr = rule.expr.replace(from, to)), alert);
        expect(output).toContain(`alertname: ${alert}`);
      });
    },
  );
});
