/**
 * `make docs`: the README's reference tables, generated from the code so that they cannot
 * drift from it (as Fabric's gendoc does for its metrics):
 *   metrics          every metric the service creates (src/metrics/service-metrics.ts)
 *   config-peer      every key of the peer dialect (src/config/peer-schema.ts)
 *   config-orderer   every key of the orderer dialect (src/config/orderer-schema.ts)
 *   config-health    the health-check keys of both dialects side by side
 * and docs/companion.md's (beside the README, in docs/):
 *   companion-metrics  every metric companion mode creates (certificateMetricOptions, diskMetricOptions, logSpecMetricOptions)
 * each written between `<!-- BEGIN GENERATED: <name> -->` and `<!-- END GENERATED: <name> -->`.
 *
 *   scripts/gendocs [--check] [README.md]   write the files, or (--check) exit 1 when one differs
 *
 * test/unit/docs/readme-references.test.ts fails when the committed README is not what this produces,
 * test/unit/companion/disk-metrics-docs.test.ts when docs/companion.md is not.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { certificateMetricOptions } from '../src/companion/certificate-monitor';
import { diskMetricOptions } from '../src/companion/disk-monitor';
import { logSpecMetricOptions } from '../src/companion/logspec';
import { settingsReference, type SettingReference } from '../src/config/reference';
import type { Dialect } from '../src/config/types';
import type { SettingValue } from '../src/config/settings';
import { defineMetric, type MetricDefinition, type MetricKind } from '../src/metrics/definition';
import { DisabledProvider } from '../src/metrics/disabled/provider';
import { createServiceMetrics } from '../src/metrics/service-metrics';
import type { Counter, Gauge, Histogram, HistogramOptions, MetricOptions, MetricsProvider } from '../src/metrics/types';

/**
 * Replaces what lies between the markers of block `name` in `document` (README.md, the
 * chart's README, ...) by `content`. Throws when the markers are missing, repeated or out of order.
 */
export function replaceGenerated(document: string, name: string, content: string): string {
  const begin = `<!-- BEGIN GENERATED: ${name} -->`;
  const end = `<!-- END GENERATED: ${name} -->`;
  const start = document.indexOf(begin);
  const stop = document.indexOf(end);
  if (start < 0 || stop < 0) throw new Error(`generated block '${name}': markers ${begin} and ${end} not both found`);
  if (document.indexOf(begin, start + 1) >= 0 || document.indexOf(end, stop + 1) >= 0) {
    throw new Error(`generated block '${name}': markers found more than once`);
  }
  if (stop < start) throw new Error(`generated block '${name}': ${end} comes before ${begin}`);
  const body = content.endsWith('\n') ? content : `${content}\n`;
  return `${document.slice(0, start + begin.length)}\n${body}${document.slice(stop)}`;
}

/** A markdown table; `|` in cells escaped. */
export function markdownTable(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const line = (cells: readonly string[]): string => `|${cells.map((cell) => (cell === '' ? ' ' : ` ${cell.replace(/\|/g, '\\|')} `)).join('|')}|`;
  return [line(header), `|${header.map(() => '---').join('|')}|`, ...rows.map(line)].join('\n');
}

const code = (text: string): string => `\`${text}\``;

interface RecordedMetric {
  definition: MetricDefinition;
  /** The README's meaning: the options' `doc` when they have one, else `help`. */
  meaning: string;
}

/** Every metric createServiceMetrics creates, in creation order, with its kind as created. */
export function serviceMetrics(): RecordedMetric[] {
  const recorded: RecordedMetric[] = [];
  const inner = new DisabledProvider();
  const record = (kind: MetricKind, options: MetricOptions | HistogramOptions): void => {
    const doc: unknown = (options as { doc?: unknown }).doc;
    recorded.push({ definition: defineMetric(kind, options), meaning: typeof doc === 'string' ? doc : options.help });
  };
  const recorder: MetricsProvider = {
    newCounter(options): Counter {
      record('counter', options);
      return inner.newCounter(options);
    },
    newGauge(options): Gauge {
      record('gauge', options);
      return inner.newGauge(options);
    },
    newHistogram(options): Histogram {
      record('histogram', options);
      return inner.newHistogram(options);
    },
  };
  createServiceMetrics(recorder, '0.0.0');
  return recorded;
}

/**
 * Every metric companion mode creates (docs/companion.md), from the options its parts create them
 * with, and their kind: the certificate and disk monitors' are gauges, the node log level's writes
 * a counter. Another companion metric is declared the same way and added here.
 */
export function companionMetrics(): RecordedMetric[] {
  const declared: Array<[MetricKind, MetricOptions]> = [
    ...Object.values(certificateMetricOptions).map((options): [MetricKind, MetricOptions] => ['gauge', options]),
    ...Object.values(diskMetricOptions).map((options): [MetricKind, MetricOptions] => ['gauge', options]),
    ['counter', logSpecMetricOptions.writes],
  ];
  return declared.map(([kind, options]) => {
    const doc: unknown = (options as { doc?: unknown }).doc;
    return { definition: defineMetric(kind, options), meaning: typeof doc === 'string' ? doc : options.help };
  });
}

const typeText: Record<MetricKind, string> = { counter: 'counter', gauge: 'gauge', histogram: 'histogram (StatsD: timing, ms)' };

export function metricsTable(metrics: readonly RecordedMetric[] = serviceMetrics()): string {
  const rows = metrics.map(({ definition, meaning }) => {
    const placeholders = Object.fromEntries(definition.labelNames.map((label) => [label, `<${label}>`]));
    return [
      code(definition.kind === 'counter' ? `${definition.fqName}_total` : definition.fqName),
      code(definition.statsdName.format(placeholders)),
      typeText[definition.kind],
      definition.labelNames.map(code).join(', '),
      meaning,
    ];
  });
  return markdownTable(['Prometheus name', 'StatsD bucket', 'type', 'labels', 'meaning'], rows);
}

function defaultText(value: SettingValue): string {
  if (Array.isArray(value)) return code(`[${value.join(', ')}]`);
  if (value === '') return '';
  return code(String(value));
}

export function configTable(dialect: Dialect): string {
  const rows = settingsReference(dialect).map((setting) => [
    code(setting.key),
    code(setting.environmentVariable),
    setting.kind,
    defaultText(setting.defaultValue),
    setting.doc,
  ]);
  return markdownTable(['key', 'environment variable', 'type', 'default', 'meaning'], rows);
}

/** One meaning for two docs: the `; `-separated parts they share, then each dialect's own. */
function pairedDoc(peer: string, orderer: string): string {
  if (peer === orderer) return peer;
  const peerParts = peer.split('; ');
  const ordererParts = orderer.split('; ');
  let shared = 0;
  while (shared < peerParts.length - 1 && shared < ordererParts.length - 1 && peerParts[shared] === ordererParts[shared]) shared += 1;
  const own = `peer: ${peerParts.slice(shared).join('; ')}; orderer: ${ordererParts.slice(shared).join('; ')}`;
  return shared === 0 ? own : `${peerParts.slice(0, shared).join('; ')}; ${own}`;
}

/** Keys that both dialects have (same path but for case), side by side. */
export function pairedConfigTable(include: (key: string) => boolean): string {
  const orderer = new Map(settingsReference('orderer').map((setting) => [setting.key.toLowerCase(), setting]));
  const rows = settingsReference('peer')
    .filter((peer) => include(peer.key))
    .map((peer) => {
      const other: SettingReference | undefined = orderer.get(peer.key.toLowerCase());
      if (!other) throw new Error(`${peer.key} has no orderer counterpart (${peer.key.toLowerCase()})`);
      const peerDefault = defaultText(peer.defaultValue);
      const ordererDefault = defaultText(other.defaultValue);
      return [
        code(peer.key),
        code(other.key),
        peerDefault === ordererDefault ? peerDefault : `${peerDefault} / ${ordererDefault}`,
        pairedDoc(peer.doc, other.doc),
      ];
    });
  return markdownTable(['peer `core.yaml`', 'orderer `orderer.yaml`', 'default (peer / orderer)', 'meaning'], rows);
}

/** Every generated block of README.md, by marker name. */
export function readmeBlocks(): Record<string, string> {
  return {
    metrics: metricsTable(),
    'config-peer': configTable('peer'),
    'config-orderer': configTable('orderer'),
    'config-health': pairedConfigTable((key) => key.startsWith('operations.healthCheck.')),
  };
}

export function renderReadme(readme: string): string {
  return Object.entries(readmeBlocks()).reduce((document, [name, content]) => replaceGenerated(document, name, content), readme);
}

/** Every generated block of docs/companion.md, by marker name. */
export function companionDocBlocks(): Record<string, string> {
  return { 'companion-metrics': metricsTable(companionMetrics()) };
}

export function renderCompanionDoc(doc: string): string {
  return Object.entries(companionDocBlocks()).reduce((document, [name, content]) => replaceGenerated(document, name, content), doc);
}

function main(args: readonly string[]): void {
  const check = args.includes('--check');
  const readme = path.resolve(args.find((arg) => !arg.startsWith('--')) ?? 'README.md');
  const documents = [
    { file: readme, render: renderReadme },
    { file: path.join(path.dirname(readme), 'docs', 'companion.md'), render: renderCompanionDoc },
  ];
  let stale = false;
  for (const { file, render } of documents) {
    const current = readFileSync(file, 'utf8');
    const generated = render(current);
    if (check) {
      if (generated !== current) {
        process.stderr.write(`${file}: the generated reference tables are out of date; run make docs\n`);
        stale = true;
      }
      continue;
    }
    if (generated !== current) writeFileSync(file, generated);
    process.stdout.write(`${file}: ${generated === current ? 'up to date' : 'reference tables regenerated'}\n`);
  }
  if (stale) process.exit(1);
}

if (require.main === module) main(process.argv.slice(2));
