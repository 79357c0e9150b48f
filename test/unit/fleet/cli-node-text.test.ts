/**
 * A node's Version and CommitSHA are bounded and escaped on the server, in the answer and in the
 * metric labels (issue 28 item 5); `logspec set` without a selector needs --all, and a debug level
 * gets a TTL by default (issue 30 item 1); the TTL bounds are said in one way (issue 30 item 5).
 */
import { describeSelector, raisesToDebug } from '../../../src/fleet/cli';
import type { CallOutcome } from '../../../src/fleet/client';
import { minTtlMs, ttlProblem } from '../../../src/fleet/logspec';
import { FleetMetrics } from '../../../src/fleet/metrics';
import type { FleetNode } from '../../../src/fleet/types';
import { boundVersionText, groupVersions, maxVersionTextLength } from '../../../src/fleet/versions';
import { PrometheusProvider } from '../../../src/metrics/prometheus/provider';
import { logUnsafeCharacter } from '../../../src/text';

const node = (name: string): FleetNode => ({ name, url: 'https://127.0.0.1:1', dialect: 'peer', labels: {}, group: 'g' });
const answer = (body: unknown): CallOutcome => ({ ok: true, status: 200, body, text: JSON.stringify(body), latencyMs: 1 });

const hostileVersion = '\u001b]0;pwned\u0007\u001b[2J\nfake-row  ok  \u202egpj.exe';
const hugeCommit = 'c'.repeat(100_000);

describe('Version and CommitSHA from a node', () => {
  test('boundVersionText: escaped, at most maxVersionTextLength characters, the length named; idempotent; Fabric values unchanged', () => {
    expect(boundVersionText('3.0.0')).toBe('3.0.0');
    expect(boundVersionText('94590aa')).toBe('94590aa');
    const commit = boundVersionText(hugeCommit);
    expect(commit.length).toBeLessThanOrEqual(maxVersionTextLength);
    expect(commit).toMatch(/^c+\.\.\. \(100000 characters\)$/);
    expect(boundVersionText(commit)).toBe(commit);
    const version = boundVersionText(hostileVersion);
    expect(logUnsafeCharacter.test(version)).toBe(false);
    expect(version).toBe('\\u001b]0;pwned\\u0007\\u001b[2J\\nfake-row  ok  \\u202egpj.exe');
  });

  test('groupVersions answers the bounded, escaped values', () => {
    const report = groupVersions([
      { node: node('evil'), outcome: answer({ Version: hostileVersion, CommitSHA: hugeCommit }) },
      { node: node('peer0'), outcome: answer({ Version: '3.0.0', CommitSHA: '94590aa' }) },
    ]);
    const evil = report.versions.find((group) => group.nodes.includes('evil'));
    expect(evil?.version).toBe(boundVersionText(hostileVersion));
    expect(evil?.commit.length).toBeLessThanOrEqual(maxVersionTextLength);
    expect(report.versions.find((group) => group.nodes.includes('peer0'))).toEqual({ version: '3.0.0', commit: '94590aa', nodes: ['peer0'] });
  });

  test('fleet_node_version_info labels are bounded and escaped whatever the report says', async () => {
    const provider = new PrometheusProvider({ defaultMetrics: false });
    const metrics = new FleetMetrics(provider);
    metrics.recordVersions({ skew: false, versions: [{ version: hostileVersion, commit: hugeCommit, nodes: ['evil'] }], unreachable: [] });
    const body = (await provider.render(undefined)).body;
    const line = body.split('\n').find((text) => text.startsWith('fleet_node_version_info{'));
    expect(line).toBeDefined();
    expect(line!.length).toBeLessThan(300);
    expect(logUnsafeCharacter.test(line!)).toBe(false);
    expect(line).toContain(`commit="${boundVersionText(hugeCommit)}"`);
  });
});

describe('logspec set: selectors, the debug default, TTL bounds', () => {
  test('describeSelector says which nodes', () => {
    expect(describeSelector({})).toBe('every node of the fleet');
    expect(describeSelector({ groups: ['org1'], labels: { role: 'peer' } })).toBe('the nodes of group org1 and with role=peer');
    expect(describeSelector({ names: ['peer0.org1', 'peer1.org1'] })).toBe('the nodes named peer0.org1, peer1.org1');
  });

  test('raisesToDebug: a debug or payload level anywhere; not for other levels or a spec that does not parse', () => {
    expect(raisesToDebug('gossip=debug:info')).toBe(true);
    expect(raisesToDebug('DEBUG')).toBe(true);
    expect(raisesToDebug('payload')).toBe(true);
    expect(raisesToDebug('info')).toBe(false);
    expect(raisesToDebug('gossip=warning:error')).toBe(false);
    expect(raisesToDebug('gossip=loud')).toBe(false);
  });

  test('ttlProblem: 1s to 168h; the message names the value and both bounds', () => {
    expect(minTtlMs).toBe(1000);
    expect(ttlProblem(1000)).toBeNull();
    expect(ttlProblem(7 * 24 * 3600 * 1000)).toBeNull();
    expect(ttlProblem(500, '500ms')).toBe('"500ms" is shorter than the minimum, 1s; a TTL is a Go duration from 1s to 168h');
    expect(ttlProblem(8 * 24 * 3600 * 1000, '192h')).toBe('"192h" is longer than the maximum, 168h (7 days); a TTL is a Go duration from 1s to 168h');
  });
});
