import type { CallOutcome } from './client';
import type { CallFailureReason, FleetNode } from './types';

export interface VersionGroup {
  version: string;
  commit: string;
  nodes: string[];
}

export interface FleetVersionReport {
  /** True when the nodes that answered run more than one Version. */
  skew: boolean;
  versions: VersionGroup[];
  unreachable: Array<{ name: string; reason: CallFailureReason; error: string }>;
}

/** Pure: group the nodes' /version answers ({"Version","CommitSHA"}, as Fabric and fabric-ops answer). */
export function groupVersions(answers: ReadonlyArray<{ node: FleetNode; outcome: CallOutcome }>): FleetVersionReport {
  const groups = new Map<string, VersionGroup>();
  const unreachable: FleetVersionReport['unreachable'] = [];
  for (const { node, outcome } of answers) {
    if (!outcome.ok) {
      unreachable.push({ name: node.name, reason: outcome.reason, error: outcome.error });
      continue;
    }
    const body = outcome.body as { Version?: unknown; CommitSHA?: unknown } | undefined;
    if (outcome.status !== 200 || typeof body?.Version !== 'string') {
      unreachable.push({ name: node.name, reason: 'bad_response', error: `/version answered ${outcome.status}: ${outcome.text.slice(0, 120)}` });
      continue;
    }
    const version = body.Version;
    const commit = typeof body.CommitSHA === 'string' ? body.CommitSHA : '';
    const key = `${version}\u0000${commit}`;
    let group = groups.get(key);
    if (group === undefined) {
      group = { version, commit, nodes: [] };
      groups.set(key, group);
    }
    group.nodes.push(node.name);
  }
  const versions = [...groups.values()].sort((a, b) => b.nodes.length - a.nodes.length || (a.version < b.version ? -1 : 1));
  return { skew: new Set(versions.map((group) => group.version)).size > 1, versions, unreachable };
}
