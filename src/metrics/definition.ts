/**
 * A metric's options, checked once at creation, and the per-provider table that makes
 * creating the same metric twice return the same metric (and different options an error).
 * Pure logic: every provider uses it, so misuse fails the same way whatever is configured.
 */
import { MetricOptionsError } from '../errors';
import { compileStatsdFormat, defaultStatsdFormat, joinName, type StatsdNameTemplate } from './namer';
import type { HistogramOptions, MetricOptions } from './types';

export type MetricKind = 'counter' | 'gauge' | 'histogram';

export interface MetricDefinition {
  readonly kind: MetricKind;
  readonly namespace: string;
  readonly subsystem: string;
  readonly name: string;
  readonly help: string;
  readonly labelNames: readonly string[];
  readonly labelNameSet: ReadonlySet<string>;
  readonly statsdFormat: string;
  /** Histogram bucket upper bounds; empty for counters and gauges. */
  readonly buckets: readonly number[];
  /** `namespace_subsystem_name`. */
  readonly fqName: string;
  readonly statsdName: StatsdNameTemplate;
  /** `counter 'logging_entries_checked'`, for messages. */
  readonly description: string;
}

/** Prometheus' default buckets (seconds), as Fabric uses them. */
const defaultBuckets: readonly number[] = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

const identifier = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

function optionalString(value: unknown, field: string, metric: string): string {
  if (value === undefined) return '';
  if (typeof value !== 'string') throw new MetricOptionsError(`${metric}: ${field} must be a string, got ${typeof value}`);
  return value;
}

/** Validates options and builds the definition; throws MetricOptionsError naming the metric and the field. */
export function defineMetric(kind: MetricKind, options: MetricOptions | HistogramOptions): MetricDefinition {
  if (typeof options !== 'object' || options === null) {
    throw new MetricOptionsError(`${kind}: options must be an object`);
  }
  const rawName = typeof options.name === 'string' ? options.name : '';
  const namespace = optionalString(options.namespace, 'namespace', `${kind} '${rawName}'`);
  const subsystem = optionalString(options.subsystem, 'subsystem', `${kind} '${rawName}'`);
  const fqName = joinName({ namespace, subsystem, name: rawName }, '_');
  const description = `${kind} '${fqName}'`;

  checkNameParts(description, { namespace, subsystem, name: rawName });
  if (typeof options.help !== 'string' || options.help.trim() === '') {
    throw new MetricOptionsError(`${description}: help is required (a sentence saying what is measured)`);
  }
  const labelNames = options.labelNames === undefined ? [] : [...options.labelNames];
  const seen = checkLabelNames(description, kind, labelNames);

  const statsdFormat = options.statsdFormat === undefined ? defaultStatsdFormat : options.statsdFormat;
  if (typeof statsdFormat !== 'string' || statsdFormat === '') {
    throw new MetricOptionsError(`${description}: statsdFormat must be a non-empty string`);
  }
  const statsdName = compileStatsdFormat(statsdFormat, { namespace, subsystem, name: rawName }, labelNames, description);
  const buckets = kind === 'histogram' ? checkBuckets(description, (options as HistogramOptions).buckets) : [];

  return {
    kind,
    namespace,
    subsystem,
    name: rawName,
    help: options.help,
    labelNames,
    labelNameSet: seen,
    statsdFormat,
    buckets,
    fqName,
    statsdName,
    description,
  };
}

/** The name and its optional namespace and subsystem: each a Prometheus identifier, the name required. */
function checkNameParts(description: string, parts: { namespace: string; subsystem: string; name: string }): void {
  if (parts.name === '') throw new MetricOptionsError(`${description}: name is required`);
  for (const field of ['namespace', 'subsystem', 'name'] as const) {
    const value = parts[field];
    if (value !== '' && !identifier.test(value)) {
      throw new MetricOptionsError(`${description}: ${field} '${value}' is not a valid metric name part (letters, digits and '_', not starting with a digit)`);
    }
  }
}

/** Label names: identifiers, none reserved ('__*', a histogram's 'le'), none twice. Returns them as a set. */
function checkLabelNames(description: string, kind: MetricKind, labelNames: readonly unknown[]): Set<string> {
  const seen = new Set<string>();
  for (const label of labelNames) {
    if (typeof label !== 'string' || !identifier.test(label)) {
      throw new MetricOptionsError(`${description}: label name ${JSON.stringify(label)} is not valid (letters, digits and '_', not starting with a digit)`);
    }
    if (label.startsWith('__')) {
      throw new MetricOptionsError(`${description}: label name '${label}' is reserved (names starting with '__')`);
    }
    if (kind === 'histogram' && label === 'le') {
      throw new MetricOptionsError(`${description}: label name 'le' is reserved for histogram buckets`);
    }
    if (seen.has(label)) throw new MetricOptionsError(`${description}: label name '${label}' is listed twice`);
    seen.add(label);
  }
  return seen;
}

/** A histogram's buckets (the defaults when not given): finite, strictly increasing, at least one. */
function checkBuckets(description: string, given: readonly number[] | undefined): readonly number[] {
  const buckets = given === undefined ? defaultBuckets : [...given];
  if (buckets.length === 0) throw new MetricOptionsError(`${description}: buckets must not be empty`);
  buckets.forEach((bound, index) => {
    if (typeof bound !== 'number' || !Number.isFinite(bound)) {
      throw new MetricOptionsError(`${description}: bucket ${JSON.stringify(bound)} is not a finite number`);
    }
    const previous = buckets[index - 1];
    if (previous !== undefined && bound <= previous) {
      throw new MetricOptionsError(`${description}: buckets must increase strictly; ${bound} follows ${previous}`);
    }
  });
  return buckets;
}

function differences(a: MetricDefinition, b: MetricDefinition): string[] {
  const out: string[] = [];
  const list = (values: readonly (string | number)[]): string => `[${values.join(', ')}]`;
  if (a.kind !== b.kind) out.push(`type ${a.kind} vs ${b.kind}`);
  if (a.namespace !== b.namespace || a.subsystem !== b.subsystem || a.name !== b.name) {
    out.push(`namespace/subsystem/name '${a.namespace}'/'${a.subsystem}'/'${a.name}' vs '${b.namespace}'/'${b.subsystem}'/'${b.name}'`);
  }
  if (a.help !== b.help) out.push(`help ${JSON.stringify(a.help)} vs ${JSON.stringify(b.help)}`);
  const sameLabels = a.labelNames.length === b.labelNames.length && a.labelNames.every((label) => b.labelNameSet.has(label));
  if (!sameLabels) out.push(`labelNames ${list(a.labelNames)} vs ${list(b.labelNames)}`);
  if (a.statsdFormat !== b.statsdFormat) out.push(`statsdFormat '${a.statsdFormat}' vs '${b.statsdFormat}'`);
  const sameBuckets = a.buckets.length === b.buckets.length && a.buckets.every((bound, i) => bound === b.buckets[i]);
  if (!sameBuckets) out.push(`buckets ${list(a.buckets)} vs ${list(b.buckets)}`);
  return out;
}

/**
 * The metrics one provider has created, by fully qualified name. Creating a metric again
 * with the same options returns the first one (its series are shared); with different
 * options it is a MetricOptionsError listing what differs.
 */
export class MetricTable {
  private readonly entries = new Map<string, { definition: MetricDefinition; metric: unknown }>();

  getOrCreate<T>(definition: MetricDefinition, create: () => T): T {
    const existing = this.entries.get(definition.fqName);
    if (existing) {
      const diff = differences(existing.definition, definition);
      if (diff.length > 0) {
        throw new MetricOptionsError(`${definition.description} is already registered with other options (registered vs now: ${diff.join('; ')})`);
      }
      return existing.metric as T;
    }
    const metric = create();
    this.entries.set(definition.fqName, { definition, metric });
    return metric;
  }

  get size(): number {
    return this.entries.size;
  }
}
