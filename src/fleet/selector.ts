import type { FleetNode, NodeSelector } from './types';

/** Pure: does `node` match every field the selector gives? */
export function matches(selector: NodeSelector, node: FleetNode): boolean {
  if (selector.names !== undefined && !selector.names.includes(node.name)) return false;
  if (selector.groups !== undefined && !selector.groups.includes(node.group)) return false;
  if (selector.dialect !== undefined && selector.dialect !== node.dialect) return false;
  for (const [key, value] of Object.entries(selector.labels ?? {})) {
    if (node.labels[key] !== value) return false;
  }
  return true;
}

export function select(selector: NodeSelector, nodes: readonly FleetNode[]): FleetNode[] {
  return nodes.filter((node) => matches(selector, node));
}

/** `role=peer,org=org1` (Kubernetes' equality-based label selector syntax) as a labels map. */
export function parseLabelSelector(text: string): Record<string, string> | string {
  const labels: Record<string, string> = {};
  if (text.trim() === '') return labels;
  for (const term of text.split(',')) {
    const match = /^\s*([A-Za-z0-9][A-Za-z0-9._/-]*)\s*==?\s*([A-Za-z0-9._-]*)\s*$/.exec(term);
    if (!match) return `"${term}" is not key=value (e.g. role=peer,org=org1)`;
    labels[match[1] as string] = match[2] as string;
  }
  return labels;
}
