/**
 * Metric names, as Fabric's common/metrics namer builds them. Pure logic.
 *
 * Prometheus: `namespace_subsystem_name` (empty parts left out).
 * StatsD: the metric's `statsdFormat` (default `%{#fqname}`, i.e. `namespace.subsystem.name`),
 * where `%{#namespace}`, `%{#subsystem}`, `%{#name}`, `%{#fqname}` are the name parts and
 * `%{<label>}` is that label's value made safe for one bucket component (see escapeStatsdLabelValue).
 */
import { MetricOptionsError } from '../errors';

export interface NameParts {
  readonly namespace: string;
  readonly subsystem: string;
  readonly name: string;
}

export const defaultStatsdFormat = '%{#fqname}';

export function joinName(parts: NameParts, separator: '_' | '.'): string {
  return [parts.namespace, parts.subsystem, parts.name].filter((part) => part !== '').join(separator);
}

/**
 * A label value as one component of a StatsD bucket name. As in Fabric, `.`, `|`, `:` and
 * white space become `_`. Beyond Fabric, `/` too: Graphite stores a bucket as a file path, so
 * a `/` would split the component into directories. Leading slashes are dropped first, so a
 * path-like value names itself (`/healthz` gives `healthz`, `/a/b` gives `a_b`); a value of
 * slashes only gives `_`, never an empty component.
 */
export function escapeStatsdLabelValue(value: string): string {
  const withoutLeadingSlashes = value.replace(/^\/+/, '');
  if (withoutLeadingSlashes === '' && value !== '') return '_';
  return withoutLeadingSlashes.replace(/[.|:\s/]/g, '_');
}

/** A compiled `statsdFormat`: the bucket name for a set of label values. */
export interface StatsdNameTemplate {
  /** The labels the format references, in order of first appearance. */
  readonly referencedLabels: readonly string[];
  format(labels: Readonly<Record<string, string>>): string;
}

type Piece = { readonly literal: string } | { readonly label: string };

const placeholder = /%\{([^}]*)\}/g;
/** Characters that would break the StatsD line protocol (`name:value|type|@rate`). */
const unsafeInName = /[:|@\s]/;

/**
 * Compiles a format once, at metric creation, so that a format naming an unknown label or
 * placeholder fails then and there. `metric` names the metric in error messages.
 */
export function compileStatsdFormat(format: string, parts: NameParts, labelNames: readonly string[], metric: string): StatsdNameTemplate {
  const known = new Set(labelNames);
  const fixed: Record<string, string> = {
    '#namespace': parts.namespace,
    '#subsystem': parts.subsystem,
    '#name': parts.name,
    '#fqname': joinName(parts, '.'),
  };
  const pieces: Piece[] = [];
  const referenced: string[] = [];
  let literal = '';
  const addLiteral = (text: string): void => {
    if (text.includes('%{')) {
      throw new MetricOptionsError(`${metric}: statsdFormat '${format}' has a '%{' that is not closed by '}'`);
    }
    const bad = unsafeInName.exec(text);
    if (bad) {
      throw new MetricOptionsError(`${metric}: statsdFormat '${format}' contains ${JSON.stringify(bad[0])}, which cannot appear in a StatsD bucket name`);
    }
    literal += text;
  };
  let last = 0;
  for (const match of format.matchAll(placeholder)) {
    addLiteral(format.slice(last, match.index));
    last = match.index + match[0].length;
    const token = match[1] ?? '';
    const fixedValue = fixed[token];
    if (fixedValue !== undefined) {
      literal += fixedValue;
    } else if (token.startsWith('#')) {
      throw new MetricOptionsError(
        `${metric}: statsdFormat '${format}' uses unknown placeholder '%{${token}}'; known: %{#namespace}, %{#subsystem}, %{#name}, %{#fqname} and %{<label>}`,
      );
    } else if (known.has(token)) {
      if (literal !== '') pieces.push({ literal });
      literal = '';
      pieces.push({ label: token });
      if (!referenced.includes(token)) referenced.push(token);
    } else {
      throw new MetricOptionsError(
        `${metric}: statsdFormat '${format}' references label '${token}', which is not one of its labelNames [${labelNames.join(', ')}]`,
      );
    }
  }
  addLiteral(format.slice(last));
  if (literal !== '') pieces.push({ literal });

  if (pieces.length === 0) {
    throw new MetricOptionsError(`${metric}: statsdFormat '${format}' gives an empty bucket name`);
  }
  const only = pieces[0];
  if (pieces.length === 1 && only !== undefined && 'literal' in only) {
    const constant = only.literal;
    return { referencedLabels: referenced, format: () => constant };
  }
  return {
    referencedLabels: referenced,
    format(labels) {
      let out = '';
      for (const piece of pieces) {
        out += 'literal' in piece ? piece.literal : escapeStatsdLabelValue(labels[piece.label] ?? 'unknown');
      }
      return out;
    },
  };
}
