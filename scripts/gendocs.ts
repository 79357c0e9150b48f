/**
 * `make docs`: the reference pages of docs/, generated from the code so that they cannot drift from
 * it (as Fabric's gendoc does for its metrics). Each block is written between
 * `<!-- BEGIN GENERATED: <name> -->` and `<!-- END GENERATED: <name> -->` of its page:
 *
 *   docs/reference/configuration.md
 *     config-peer        every key of the peer dialect (src/config/declarations.ts)
 *     config-orderer     every key of the orderer dialect (src/config/declarations.ts)
 *     fleet-keys         every key of the fleet file (FleetFileSchema, src/fleet/config.ts)
 *   docs/health.md
 *     config-health      the health-check keys of both dialects side by side
 *   docs/reference/metrics.md
 *     metrics            every metric the service creates (src/metrics/service-metrics.ts)
 *     companion-metrics  every metric companion mode creates (certificateMetricOptions, diskMetricOptions, logSpecMetricOptions)
 *     fleet-metrics      every metric fleet mode creates (src/fleet/metrics.ts)
 *     chaincode-metrics  every metric fabric-ops/chaincode creates (src/chaincode/transactions.ts)
 *   docs/companion.md
 *     companion-metrics  (the same table, beside the companion's guide)
 *   docs/reference/command.md
 *     command-help       `fabric-ops --help` (src/command-usage.ts)
 *     fleet-help         `fabric-ops fleet --help` (src/fleet/cli.ts)
 *     environment        fabric-ops' own environment variables (src/config/environment.ts)
 * and the whole of docs/reference/api.md (scripts/api-report.ts: the library's API from its types).
 *
 *   scripts/gendocs [--check] [ROOT]   write the pages of the repository at ROOT (default: the
 *                                      current directory), or (--check) exit 1 when one differs
 *
 * test/unit/docs/generated-docs.test.ts fails when a committed page is not what this produces (and
 * test/unit/docs/api-report.test.ts for api.md), test/unit/companion/disk-metrics-docs.test.ts when
 * docs/companion.md is not.
 */
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { createTransactionMetrics } from '../src/chaincode/transactions';
import { commandUsage } from '../src/command-usage';
import { certificateMetricOptions } from '../src/companion/certificate-monitor';
import { diskMetricOptions } from '../src/companion/disk-monitor';
import { logSpecMetricOptions } from '../src/companion/logspec';
import { environmentReference } from '../src/config/environment';
import { settingsReference, type SettingReference } from '../src/config/reference';
import type { Dialect } from '../src/config/types';
import type { SettingValue } from '../src/config/settings';
import { fleetUsage } from '../src/fleet/cli';
import { FleetFileSchema } from '../src/fleet/config';
import { FleetMetrics } from '../src/fleet/metrics';
import { defineMetric, type MetricDefinition, type MetricKind } from '../src/metrics/definition';
import { DisabledProvider } from '../src/metrics/disabled/provider';
import { createServiceMetrics } from '../src/metrics/service-metrics';
import type { Counter, Gauge, Histogram, HistogramOptions, MetricOptions, MetricsProvider } from '../src/metrics/types';
import { renderApiReport } from './api-report';

/**
 * Replaces what lies between the markers of block `name` in `document` (a page of docs/, the
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

export interface RecordedMetric {
  definition: MetricDefinition;
  /** The meaning shown: the options' `doc` when they have one, else `help`. */
  meaning: string;
}

function recorded(kind: MetricKind, options: MetricOptions | HistogramOptions): RecordedMetric {
  const doc: unknown = (options as { doc?: unknown }).doc;
  return { definition: defineMetric(kind, options), meaning: typeof doc === 'string' ? doc : options.help };
}

/** Every metric `create` asks a provider for, in creation order, with its kind as created. */
export function recordMetrics(create: (provider: MetricsProvider) => unknown): RecordedMetric[] {
  const seen: RecordedMetric[] = [];
  const inner = new DisabledProvider();
  const recorder: MetricsProvider = {
    newCounter(options): Counter {
      seen.push(recorded('counter', options));
      return inner.newCounter(options);
    },
    newGauge(options): Gauge {
      seen.push(recorded('gauge', options));
      return inner.newGauge(options);
    },
    newHistogram(options): Histogram {
      seen.push(recorded('histogram', options));
      return inner.newHistogram(options);
    },
  };
  create(recorder);
  return seen;
}

/** Every metric createServiceMetrics creates, in creation order, with its kind as created. */
export function serviceMetrics(): RecordedMetric[] {
  return recordMetrics((provider) => createServiceMetrics(provider, '0.0.0'));
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
  return declared.map(([kind, options]) => recorded(kind, options));
}

/** Every metric fleet mode creates (FleetMetrics' constructor). */
export function fleetMetrics(): RecordedMetric[] {
  return recordMetrics((provider) => new FleetMetrics(provider));
}

/** Every metric fabric-ops/chaincode adds to the service's own. */
export function chaincodeMetrics(): RecordedMetric[] {
  return recordMetrics((provider) => createTransactionMetrics(provider));
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

/** fabric-ops' own environment variables, from their convict schema (src/config/environment.ts). */
export function environmentTable(): string {
  const rows = environmentReference().map((variable) => [
    code(variable.variable),
    variable.readBy,
    variable.format,
    variable.defaultValue === '' ? '' : code(variable.defaultValue),
    variable.doc,
  ]);
  return markdownTable(['variable', 'read by', 'format', 'default', 'meaning'], rows);
}

// ---------------------------------------------------------------------------------------------
// The fleet file's keys, from its zod schema (as JSON Schema: types, defaults, bounds, required).

/**
 * What each key of the fleet file means. The schema gives the type, default and bounds; the
 * meaning is written here (or, taking precedence, with `.describe()` in the schema). A key of the
 * schema without one fails test/unit/docs/generated-docs.test.ts, naming it.
 */
export const fleetKeyMeanings: Record<string, string> = {
  stateDirectory:
    "folder where pending put-backs are kept (`fleet-putbacks.json`, atomic writes); this user's, writable by no one else. One of `stateDirectory` and `stateConfigMap` is needed; both may be given ([where put-backs are kept](../fleet.md#where-pending-put-backs-are-kept))",
  stateConfigMap:
    "a ConfigMap of fabric-ops' namespace that also (or instead) holds the pending put-backs, key `fleet-putbacks.json`: survives the pod's replacement",
  discovery: 'where nodes are discovered besides `nodes`',
  'discovery.kubernetes':
    'Kubernetes discovery sources: each one list+watch of Services or Pods by label selector ([Kubernetes discovery](../fleet.md#what-a-node-is-and-how-it-is-found))',
  'discovery.kubernetes[].kind': '`Service` or `Pod`',
  'discovery.kubernetes[].namespace':
    "the namespace to watch; default: fabric-ops' own (`POD_NAMESPACE`, else the kubeconfig context's); `*`: every namespace (a ClusterRole)",
  'discovery.kubernetes[].selector': 'a Kubernetes label selector, sent as given (`app.kubernetes.io/component=peer,org=org1`)',
  'discovery.kubernetes[].port': 'the operations port: a port name (Service `spec.ports[].name`, Pod container port name) or a number',
  'discovery.kubernetes[].group': 'the group whose credentials reach these nodes',
  'discovery.kubernetes[].dialect': 'the dialect of the nodes found, unless `dialectLabel` says otherwise',
  'discovery.kubernetes[].dialectLabel': 'a label whose value (`peer` or `orderer`) on the object gives its dialect',
  'discovery.kubernetes[].scheme': '`https` or `http`',
  'discovery.kubernetes[].address': 'Services only: `dns` (`<name>.<namespace>.svc`, the default) or `clusterIP`; Pods are reached at their IP',
  'discovery.kubernetes[].tlsServerName':
    "the name the node certificate is verified against, `{name}` and `{namespace}` replaced (`{name}.{namespace}.svc`); default: the URL's host",
  nodeTimeout: 'per call to a node: connect, TLS, request and whole answer (Go duration)',
  roundTimeout: "a health or version round's deadline (Go duration; default 2 x `nodeTimeout` + 1s; at least `nodeTimeout`)",
  concurrency: 'node calls in flight at once, whatever the fleet size',
  maxResponseBytes: "a node's answer larger than this is a `bad_response`",
  pollInterval: 'a background health and version round every this long, for the fleet metrics (`0s`: none)',
  minRoundInterval: 'a round that ended less than this ago answers the next caller (`0s`: never)',
  channels: "how the nodes' chains are read and judged (`GET /fleet/channels`: [docs/fleet-channels.md](../fleet-channels.md))",
  'channels.behindBlocks':
    "a node more than this many blocks below a channel's highest height is lagging (`behind` once it has been for `behindFor`; `stalled` when its height stays while the highest moves)",
  'channels.behindFor': 'how long a node lags by more than `behindBlocks` before it is `behind` (Go duration; `0s`: at once)',
  'channels.maxChannels':
    "channels kept from one node's `/metrics`; height samples past it are counted and reported, not kept (bounds the answer and the metric series)",
  'channels.maxMetricsBytes': "bytes of one node's `/metrics` read at most (streamed, never held); a longer body is a `bad_response`",
  healthy: 'when `GET /fleet/healthz` answers 200: `{ minShare: 1 }` (a share of the nodes answering ok) or `{ minCount: 3 }`',
  'healthy.minShare': 'the share of nodes (0 to 1) that must answer ok',
  'healthy.minCount': 'the number of nodes that must answer ok',
  writers:
    'who may `PUT` and `DELETE /fleet/logspec`: a subject (`O=org1,CN=operator`) or an object below; empty (the default): no one ([security defaults](../fleet.md#security-defaults-and-why))',
  'writers[].subject': "the client certificate's subject in RFC 4514 text, in the certificate's order, compared exactly",
  'writers[].issuerFingerprint': "SHA-256 fingerprint of the CA certificate that must have signed the client certificate (one of the server's `clientRootCAs`)",
  'writers[].issuerCertFile': 'the same CA given as a PEM file',
  'writers[].fingerprint': 'SHA-256 fingerprint of exactly one client certificate',
  'writers[].issuer': 'refused: an issuer by name can be forged by any trusted CA; use `issuerFingerprint` or `issuerCertFile`',
  groups: 'the credentials to reach nodes, by group name (each org has its own operations CA)',
  'groups.<name>.tls': "the group's TLS material, read like the server's own files and re-read when they change",
  'groups.<name>.tls.certFile': 'client certificate presented to the nodes (mTLS); with `keyFile`',
  'groups.<name>.tls.keyFile': 'its private key; never logged or returned',
  'groups.<name>.tls.caFiles': "CA certificates trusted for the nodes' operations server certificates",
  nodes: 'the nodes listed by hand (compose and VM installs); discovered ones add to them',
  'nodes[].name': 'unique name (1-253 of `A-Z a-z 0-9 . _ : -`)',
  'nodes[].url': "the node's operations endpoint, `https://host:port` (no path)",
  'nodes[].dialect': '`peer`, `orderer` or `unknown`',
  'nodes[].group': 'the group whose credentials reach it',
  'nodes[].labels': 'string labels for selectors (`--selector role=peer`)',
  'nodes[].companion': "the node's companion ([docs/companion.md](../companion.md)), reached with the node's group credentials",
  'nodes[].companion.url': "the companion's own endpoint, `https://host:port`",
};

interface JsonSchema {
  type?: string;
  properties?: Record<string, JsonSchema>;
  additionalProperties?: JsonSchema | boolean;
  items?: JsonSchema;
  anyOf?: JsonSchema[];
  required?: string[];
  enum?: unknown[];
  default?: unknown;
  minimum?: number;
  maximum?: number;
  description?: string;
}

export interface FleetKey {
  key: string;
  type: string;
  defaultValue: unknown;
  required: boolean;
  bounds: string;
  description: string | undefined;
}

function schemaType(schema: JsonSchema): string {
  if (schema.anyOf) return schema.anyOf.map(schemaType).join(' or ');
  if (schema.enum) return 'string';
  if (schema.type === 'array') return `list of ${schema.items ? pluralType(schema.items) : 'values'}`;
  if (schema.type === 'object' && schema.additionalProperties && typeof schema.additionalProperties === 'object' && !schema.properties) {
    return `map of ${pluralType(schema.additionalProperties)}`;
  }
  return schema.type ?? 'any';
}

function pluralType(schema: JsonSchema): string {
  const single = schemaType(schema);
  return single === 'object' ? 'objects' : single === 'string' ? 'strings' : single;
}

function boundsOf(schema: JsonSchema): string {
  const parts: string[] = [];
  const own = schema.anyOf ?? [schema];
  for (const part of own) {
    if (part.enum) parts.push(`one of ${part.enum.map((value) => code(String(value))).join(', ')}`);
    if (part.minimum !== undefined && part.maximum !== undefined) parts.push(`${part.minimum} to ${part.maximum}`);
    else if (part.minimum !== undefined) parts.push(`at least ${part.minimum}`);
    else if (part.maximum !== undefined) parts.push(`at most ${part.maximum}`);
  }
  return parts.join('; ');
}

/** Every key of the fleet file, depth first in the schema's order: `groups.<name>.tls.certFile`, `nodes[].url`. */
export function fleetKeys(): FleetKey[] {
  const root = z.toJSONSchema(FleetFileSchema, { io: 'input', unrepresentable: 'any' }) as JsonSchema;
  const keys: FleetKey[] = [];
  const walk = (schema: JsonSchema, prefix: string): void => {
    const objects = (schema.anyOf ?? [schema]).filter((part) => part.type === 'object' || part.type === 'array');
    for (const part of objects) {
      if (part.type === 'array' && part.items) {
        walk(part.items, `${prefix}[]`);
        continue;
      }
      for (const [name, child] of Object.entries(part.properties ?? {})) {
        const key = prefix === '' ? name : `${prefix}.${name}`;
        keys.push({
          key,
          type: schemaType(child),
          defaultValue: child.default,
          required: (part.required ?? []).includes(name),
          bounds: boundsOf(child),
          description: child.description,
        });
        walk(child, key);
      }
      if (!part.properties && part.additionalProperties && typeof part.additionalProperties === 'object' && prefix !== '') {
        const value = part.additionalProperties;
        if (value.type === 'object' && value.properties) walk(value, `${prefix}.<name>`);
      }
    }
  };
  walk(root, '');
  return keys;
}

export function fleetKeysTable(): string {
  const rows = fleetKeys().map((key) => [
    code(key.key),
    key.type,
    key.required ? 'required' : key.defaultValue === undefined ? '' : code(JSON.stringify(key.defaultValue).replace(/"/g, "'")),
    [key.description ?? fleetKeyMeanings[key.key] ?? '(no meaning written: add it to fleetKeyMeanings in scripts/gendocs.ts)', key.bounds]
      .filter((part) => part !== '')
      .join('; '),
  ]);
  return markdownTable(['key', 'type', 'default', 'meaning'], rows);
}

// ---------------------------------------------------------------------------------------------
// The pages and their blocks.

const textBlock = (text: string): string => ['```text', text.trimEnd(), '```'].join('\n');

/** Each generated page of docs/ (relative to the repository), with its blocks by marker name. */
export const generatedPages: ReadonlyArray<{ file: string; blocks: () => Record<string, string> }> = [
  {
    file: 'docs/reference/configuration.md',
    blocks: () => ({ 'config-peer': configTable('peer'), 'config-orderer': configTable('orderer'), 'fleet-keys': fleetKeysTable() }),
  },
  { file: 'docs/health.md', blocks: () => ({ 'config-health': pairedConfigTable((key) => key.startsWith('operations.healthCheck.')) }) },
  {
    file: 'docs/reference/metrics.md',
    blocks: () => ({
      metrics: metricsTable(),
      'companion-metrics': metricsTable(companionMetrics()),
      'fleet-metrics': metricsTable(fleetMetrics()),
      'chaincode-metrics': metricsTable(chaincodeMetrics()),
    }),
  },
  { file: 'docs/companion.md', blocks: () => companionDocBlocks() },
  {
    file: 'docs/reference/command.md',
    blocks: () => ({ 'command-help': textBlock(commandUsage), 'fleet-help': textBlock(fleetUsage), environment: environmentTable() }),
  },
];

/** The page `file` (relative to the repository) with its generated blocks written. */
export function renderPage(file: string, text: string): string {
  const page = generatedPages.find((candidate) => candidate.file === file);
  if (!page) throw new Error(`${file} is not a generated page (${generatedPages.map((candidate) => candidate.file).join(', ')})`);
  return Object.entries(page.blocks()).reduce((document, [name, content]) => replaceGenerated(document, name, content), text);
}

/** Every generated block of docs/companion.md, by marker name. */
export function companionDocBlocks(): Record<string, string> {
  return { 'companion-metrics': metricsTable(companionMetrics()) };
}

export function renderCompanionDoc(doc: string): string {
  return Object.entries(companionDocBlocks()).reduce((document, [name, content]) => replaceGenerated(document, name, content), doc);
}

/** docs/reference/api.md, whole. */
export const apiReportFile = 'docs/reference/api.md';

function main(args: readonly string[]): void {
  const check = args.includes('--check');
  const given = args.find((arg) => !arg.startsWith('--')) ?? '.';
  // `make docs` named README.md before the references moved to docs/: its folder is the repository.
  const root = path.resolve(existsSync(given) && statSync(given).isFile() ? path.dirname(given) : given);
  const pages = [
    ...generatedPages.map(({ file }) => ({ file, render: (text: string) => renderPage(file, text) })),
    { file: apiReportFile, render: () => renderApiReport(root) },
  ];
  let stale = false;
  for (const { file, render } of pages) {
    const absolute = path.join(root, file);
    const current = existsSync(absolute) ? readFileSync(absolute, 'utf8') : '';
    const generated = render(current);
    if (check) {
      if (generated !== current) {
        process.stderr.write(`${file}: the generated reference is out of date; run make docs\n`);
        stale = true;
      }
      continue;
    }
    if (generated !== current) writeFileSync(absolute, generated);
    process.stdout.write(`${file}: ${generated === current ? 'up to date' : 'regenerated'}\n`);
  }
  if (stale) process.exit(1);
}

if (require.main === module) main(process.argv.slice(2));
