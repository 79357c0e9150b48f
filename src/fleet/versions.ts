import type { CallOutcome } from './client';
import type { CallFailureReason, FleetNode } from './types';
import { escapeForLog, oneLine } from '../text';

/**
 * The most characters of a node's `Version` and `CommitSHA` kept (Fabric's are `3.0.0` and a
 * 7-character commit; a SHA-256 is 64 hex digits). What a node says goes to the answer, the metric
 * labels (fleet_node_version_info) and terminals: bounded, control and bidirectional characters
 * escaped (src/text.ts escapeForLog), so that a node cannot forge a table row, drive the terminal or
 * grow a label without bound.
 */
export const maxVersionTextLength = 64;

/**
 * Pure: a node's Version or CommitSHA as the fleet keeps it: escaped, and at most
 * maxVersionTextLength characters, a longer one cut to its head and `... (N characters)` (N: the
 * escaped text's length). Idempotent: what it returns comes back unchanged.
 */
export function boundVersionText(text: string): string {
  const escaped = escapeForLog(text);
  if (escaped.length <= maxVersionTextLength) return escaped;
  const marker = `... (${escaped.length} characters)`;
  let cut = maxVersionTextLength - marker.length;
  const last = escaped.charCodeAt(cut - 1);
  if (last >= 0xd800 && last <= 0xdbff) cut -= 1;
  return `${escaped.slice(0, cut)}${marker}`;
}

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
      unreachable.push({ name: node.name, reason: 'bad_response', error: `/version answered ${outcome.status}: ${oneLine(outcome.text, 120)}` });
      continue;
    }
    const version = boundVersionText(body.Version);
    const commit = typeof body.CommitSHA === 'string' ? boundVersionText(body.CommitSHA) : '';
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
