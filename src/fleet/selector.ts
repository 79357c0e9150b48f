import { z } from 'zod';
import type { FleetNode, NodeSelector } from './types';

/**
 * Label lookups see a node's own labels only: a selector key such as `constructor` or `toString`
 * is not a label every object inherits, and `__proto__` is a key like any other (the labels of a
 * selector are kept in an object without prototype). A selector that names a label no node of the
 * fleet carries is refused (FleetRequestError, 400), never read as "no condition".
 */

function ownLabel(labels: Readonly<Record<string, string>>, key: string): string | undefined {
  return Object.hasOwn(labels, key) ? labels[key] : undefined;
}

/** Pure: does `node` match every field the selector gives? */
export function matches(selector: NodeSelector, node: FleetNode): boolean {
  if (selector.names !== undefined && !selector.names.includes(node.name)) return false;
  if (selector.groups !== undefined && !selector.groups.includes(node.group)) return false;
  if (selector.dialect !== undefined && selector.dialect !== node.dialect) return false;
  const labels = selector.labels ?? {};
  for (const key of Object.keys(labels)) {
    if (ownLabel(node.labels, key) !== ownLabel(labels, key)) return false;
  }
  return true;
}

export function select(selector: NodeSelector, nodes: readonly FleetNode[]): FleetNode[] {
  return nodes.filter((node) => matches(selector, node));
}

/** The label keys of `selector` that no node of `nodes` carries (each a typo, or a key of no label). */
export function unknownLabelKeys(selector: NodeSelector, nodes: readonly FleetNode[]): string[] {
  const known = new Set(nodes.flatMap((node) => Object.keys(node.labels)));
  return Object.keys(selector.labels ?? {}).filter((key) => !known.has(key));
}

/** A label key as a node may carry one (the fleet file's, and Kubernetes' with its prefix): A-Z a-z 0-9 . _ / -, starting with a letter or digit. */
const labelKey = /^[A-Za-z0-9][A-Za-z0-9._/-]{0,316}$/;

/**
 * `selector.labels` of a request: an object of key: string value, every key a label key. Read from
 * the parsed JSON itself (own keys, `__proto__` included, which a record schema would drop and
 * leave a selector of every node), into an object without prototype.
 */
export const selectorLabelsSchema = z.unknown().transform((value, ctx): Readonly<Record<string, string>> => {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    ctx.addIssue({ code: 'custom', message: 'an object of label keys and values, e.g. {"role": "peer"}' });
    return z.NEVER;
  }
  const labels = Object.create(null) as Record<string, string>;
  for (const key of Object.keys(value)) {
    const label = Object.getOwnPropertyDescriptor(value, key)?.value as unknown;
    if (!labelKey.test(key)) {
      ctx.addIssue({ code: 'custom', message: `${JSON.stringify(key)} is not a label key (A-Z a-z 0-9 . _ / -, starting with a letter or digit)` });
    } else if (typeof label !== 'string') {
      ctx.addIssue({ code: 'custom', message: `${JSON.stringify(key)}: the value must be a string` });
    } else labels[key] = label;
  }
  return labels;
});

/** `role=peer,org=org1` (Kubernetes' equality-based label selector syntax) as a labels map (without prototype). */
export function parseLabelSelector(text: string): Record<string, string> | string {
  const labels = Object.create(null) as Record<string, string>;
  if (text.trim() === '') return labels;
  for (const term of text.split(',')) {
    const match = /^\s*([A-Za-z0-9][A-Za-z0-9._/-]*)\s*==?\s*([A-Za-z0-9._-]*)\s*$/.exec(term);
    if (!match) return `"${term}" is not key=value (e.g. role=peer,org=org1)`;
    labels[match[1] as string] = match[2] as string;
  }
  return labels;
}
