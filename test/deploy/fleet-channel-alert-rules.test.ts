/**
 * deploy/prometheus/fleet-channel-alert-rules.yaml (the chains a fleet watches, docs/fleet-channels.md):
 * valid for promtool, every alert shaped for operators, its unit tests
 * (fleet-channel-alert-rules.test.yaml) pass and cover every alert firing and not firing,
 * weakening an alert makes them fail, and its expressions use the metrics the fleet declares
 * (channelMetricOptions) with the threshold it exports. The dashboard's channel row shows them.
 * The rules and the row run on a real Prometheus in prometheus-live.test.ts.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parse } from 'yaml';
import { channelMetricOptions } from '../../src/fleet/channels-metrics';
import { allPanels, deployDir, describePromtoolUnitTests, fleetChannelRulesFile as rulesFile, readDashboard, run, type RulesFile } from './deploy-files';

const rulesTestFile = join(deployDir, 'prometheus', 'fleet-channel-alert-rules.test.yaml');

let rules: RulesFile;
beforeAll(async () => {
  rules = parse(await readFile(rulesFile, 'utf8')) as RulesFile;
});
const alerts = () => rules.groups.flatMap((group) => group.rules);
const fqName = (options: { namespace: string; name: string }): string => `${options.namespace}_${options.name}`;

describe('the fleet channel alert rules', () => {
  test('pass `promtool check rules`', async () => {
    const result = await run('promtool', ['check', 'rules', rulesFile]);
    expect(result.output).toContain(`SUCCESS: ${alerts().length} rules found`);
    expect(result.code).toBe(0);
  });

  test("are the issue's: a node behind for N minutes, stalled, not read; and, in a group of its own (optional), a channel whose highest height does not move", () => {
    expect(rules.groups.map((group) => [group.name, group.rules.map((rule) => [rule.alert, rule.labels?.severity, rule.for])])).toEqual([
      [
        'fabric-ops-fleet-channels',
        [
          ['FabricOpsFleetChannelNodeBehind', 'warning', '10m'],
          ['FabricOpsFleetChannelNodeStalled', 'critical', '5m'],
          ['FabricOpsFleetNodeChannelsUnreadable', 'warning', '10m'],
        ],
      ],
      ['fabric-ops-fleet-channel-traffic', [['FabricOpsFleetChannelNotMoving', 'warning', '5m']]],
    ]);
  });

  test('select the metrics the fleet declares, behind compared with the threshold the fleet exports (channels.behindBlocks)', () => {
    const exprs = alerts()
      .map((rule) => rule.expr)
      .join('\n');
    // fleet_node_up: the health round's (src/fleet/metrics.ts), which fleet-alert-rules.yaml uses too.
    const declared = [...Object.values(channelMetricOptions).map(fqName), 'fleet_node_up'];
    const used = [...new Set([...exprs.matchAll(/\b(fleet_[a-z_]+)/g)].map((match) => match[1] ?? ''))];
    expect(used.filter((name) => !declared.includes(name))).toEqual([]);
    expect(alerts().find((rule) => rule.alert === 'FabricOpsFleetChannelNodeBehind')?.expr).toBe(
      `${fqName(channelMetricOptions.lag)} > on (job, instance) group_left () ${fqName(channelMetricOptions.behindBlocks)} unless on (job, instance, node) ${fqName(channelMetricOptions.read)} == 0`,
    );
  });

  test.each([
    ['FabricOpsFleetChannelNodeBehind'],
    ['FabricOpsFleetChannelNodeStalled'],
    ['FabricOpsFleetNodeChannelsUnreadable'],
    ['FabricOpsFleetChannelNotMoving'],
  ])('%s has for, a severity, and annotations naming $labels and what to run', (name) => {
    const rule = alerts().find((candidate) => candidate.alert === name);
    expect(rule?.for).toMatch(/^\d+[smh]$/);
    expect(['critical', 'warning', 'info']).toContain(rule?.labels?.severity);
    expect(rule?.annotations?.summary).toMatch(/\$labels\.instance/);
    expect(rule?.annotations?.description).toMatch(/\$labels\./);
    expect(rule?.annotations?.description).toContain('Run: fabric-ops fleet');
  });

  describePromtoolUnitTests(
    () => rules,
    rulesFile,
    rulesTestFile,
    (weaken) => {
      test.each([
        ['FabricOpsFleetChannelNodeBehind', ' unless on (job, instance, node) fleet_node_channels_read == 0', '', 'a node not read'],
        ['FabricOpsFleetChannelNodeBehind', 'fleet_channel_lag > on', 'fleet_channel_lag >= on', 'a node at the threshold'],
        ['FabricOpsFleetChannelNodeStalled', ' and on (job, instance, channel) changes(fleet_channel_highest_height[5m]) > 0', '', 'an idle channel'],
        ['FabricOpsFleetNodeChannelsUnreadable', ' and on (job, instance, node) fleet_node_up == 1', '', 'a node down'],
        ['FabricOpsFleetChannelNotMoving', ' and fleet_channel_highest_height offset 30m', '', 'a channel seen for less than 30 minutes'],
      ])('%s without `%s` fires for %s: caught', async (alert, from, to) => {
        expect(await weaken((rule) => (rule.expr = rule.expr.replace(from, to)), alert)).toContain(`alertname: ${alert}`);
      });
    },
  );
});

describe("the dashboard's channel row", () => {
  const dashboard = readDashboard();
  const panels = allPanels(dashboard);

  test('a row of its own after the others: lag per node with the behind threshold, the highest height, the heights by node, the nodes not read', () => {
    const row = panels.find((panel) => panel.type === 'row' && panel.title.startsWith('Fleet channels'));
    expect(row).toBeDefined();
    const mine = panels.filter((panel) => panel.targets?.some((target) => /fleet_(channel|node_channels)_/.test(target.expr)));
    expect(mine.map((panel) => [panel.type, panel.title, panel.targets?.map((target) => target.expr)])).toEqual([
      [
        'timeseries',
        'Fleet channel lag per node (blocks)',
        [
          'max by (channel, node, dialect) (fleet_channel_lag{job=~"$job", instance=~"$instance"})',
          'max by (instance) (fleet_channel_behind_threshold_blocks{job=~"$job", instance=~"$instance"})',
        ],
      ],
      ['timeseries', 'Fleet channel highest height', ['max by (channel) (fleet_channel_highest_height{job=~"$job", instance=~"$instance"})']],
      ['table', 'Fleet channel heights by node', ['max by (channel, node, dialect) (fleet_channel_height{job=~"$job", instance=~"$instance"})']],
      ['stat', 'Fleet nodes whose heights cannot be read', ['sum by (instance) (1 - fleet_node_channels_read{job=~"$job", instance=~"$instance"})']],
    ]);
    expect(mine.every((panel) => panel.gridPos.y > (row?.gridPos.y ?? Infinity))).toBe(true);
    // The last row: below every other panel.
    expect(panels.filter((panel) => !mine.includes(panel) && panel !== row).every((panel) => panel.gridPos.y + panel.gridPos.h <= (row?.gridPos.y ?? 0))).toBe(
      true,
    );
  });
});
