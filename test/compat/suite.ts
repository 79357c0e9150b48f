import path from 'node:path';
import { writeNodeConfig, type NodeConfig, type NodeConfigOptions, type NodeKind } from '../support/fabric-reference';
import type { TestPki } from '../support/pki';
import { delay } from '../support/wait';
import { detailCases, endpointMatrix, healthCases, plainToTlsCases } from './cases';
import { putAndRead, putSpec, runCase, send, type Target } from './client';
import { generalTlsOf, startOurs, tlsTargetOf, type ConfigSource, type ScenarioSpec } from './harness';
import { generateBodies } from './logspec-generator';
import { labelNames, parseExposition, type Family, type StatsdLine } from './metrics';
import { describeAnswer, type Answer, type ClientCert, type FactCase, type HttpAnswer, type HttpCase } from './model';
import type { ResultBook } from './verdict';

/**
 * What the differential suite compares, and how, for both of its modes: the live suite
 * (test/real/compat/compat.test.ts: the real Fabric node and fabric-ops side by side) and the replay
 * (test/compat/replay.test.ts: fabric-ops alone against a recording of the real node's answers).
 * Each comparison below takes the Fabric side as a function or an object that the live suite backs
 * with the real node and the replay with the recording; fabric-ops' side, the reduction of answers
 * and the verdict (verdict.ts, deviations.ts) are one code path for both.
 */

export const seed = 20250512;
export const generatedPerPeer = 5000;
export const generatedPerOrderer = 1000;
export const generatedGroup = 'PUT /logspec, generated bodies';
export const metricsGroup = '/metrics';
export const statsdGroup = 'StatsD';
export const configurationGroup = 'configuration';
export const allClients: ClientCert[] = ['none', 'trusted', 'untrusted', 'expired'];

/** Every configuration the HTTP, metrics and StatsD cases run under. */
export const scenarioSpecs: readonly ScenarioSpec[] = [
  { name: 'TLS off', nodes: ['peer', 'orderer'], tls: 'off', metrics: { provider: 'prometheus' } },
  { name: 'TLS, clientAuthRequired false', nodes: ['peer', 'orderer'], tls: 'optional', metrics: { provider: 'prometheus' } },
  { name: 'TLS, clientAuthRequired true', nodes: ['peer', 'orderer'], tls: 'required', metrics: { provider: 'prometheus' } },
  { name: 'Docker checker on the real dockerd', nodes: ['peer'], tls: 'off', vmEndpoint: 'unix:///var/run/docker.sock' },
  { name: 'Docker checker on a missing socket', nodes: ['peer'], tls: 'off', vmEndpoint: 'unix:///nonexistent/docker.sock' },
  { name: 'Docker checker off', nodes: ['peer'], tls: 'off', vmEndpoint: '' },
  { name: 'metrics', nodes: ['peer', 'orderer'], tls: 'off', metrics: { provider: 'prometheus' } },
  { name: 'StatsD', nodes: ['peer', 'orderer'], tls: 'off', metrics: { provider: 'statsd', statsd: { writeInterval: '1s', prefix: '{kind}0' } } },
];

export const tlsScenarios = ['TLS, clientAuthRequired false', 'TLS, clientAuthRequired true'] as const;
export const dockerScenarios = ['Docker checker on the real dockerd', 'Docker checker on a missing socket', 'Docker checker off'] as const;

/** The HTTP cases (not generated) a scenario's node is sent, in the order the live suite sends them. */
export function httpCasesOf(scenario: string, kind: NodeKind): HttpCase[] {
  if (scenario === 'TLS off') return [...endpointMatrix(scenario, kind, ['none']), ...detailCases(scenario, kind)];
  if ((tlsScenarios as readonly string[]).includes(scenario)) return [...endpointMatrix(scenario, kind, allClients), ...plainToTlsCases(scenario, kind)];
  if ((dockerScenarios as readonly string[]).includes(scenario)) return healthCases(scenario, kind);
  throw new Error(`no HTTP cases for scenario ${scenario}`);
}

/**
 * The configuration a case's group runs under: its scenario's name, or `configuration` (each
 * configuration case has its own, ConfigCaseSpec, under the case's id). Recordings store it per case.
 */
export function scenarioOfGroup(group: string): string {
  if (scenarioSpecs.some((spec) => spec.name === group)) return group;
  if (group === generatedGroup) return 'TLS off';
  if (group === metricsGroup) return 'metrics';
  if (group === statsdGroup) return 'StatsD';
  if (group === configurationGroup) return configurationGroup;
  throw new Error(`compat: group ${group} has no scenario`);
}

/** How the report describes the comparison (both modes). */
export const reportSetup: readonly string[] = [
  "Configuration: the release's `sampleconfig/core.yaml` and `orderer.yaml`, copied with writable paths, ports and the scenario's settings changed; fabric-ops is started (library entry point) on the same file and environment.",
  'Compared for each HTTP case: status, media type (the whole `Content-Type` where the case says so), body shape (JSON key names and value types; values of `spec`, `status`, `component`), `X-Request-Id` (absent / echoed / uuid) and, after methods that may change state, the spec `GET /logspec` shows.',
  'A refused TLS handshake is compared as refused; the alert (or a closed connection) is shown in brackets and not compared.',
  `Generated PUT /logspec bodies: seed ${seed}; compared are the status and the spec read back after each.`,
  "StatsD: bucket names and types of the service's own metrics received from each process by one UDP listener (sender told apart by its source port); of the per-level logging buckets only `.info` is compared, since which levels each program logs at is its own.",
  'Metrics: values are the increments over the same request sequence (PUT debug, GET /healthz twice, /version, an unknown path, a bad spec, PUT warning, PUT info).',
];

// ---------------------------------------------------------------------------------------------
// HTTP cases

/** Each case to both sides, one after the other (cases that change the spec put it back). */
export async function compareHttpCases(book: ResultBook, fabric: (c: HttpCase) => Promise<Answer>, ours: Target, cases: readonly HttpCase[]): Promise<void> {
  for (const c of cases) {
    const [fabricAnswer, oursAnswer] = await Promise.all([fabric(c), runCase(ours, c)]);
    book.record(c, fabricAnswer, oursAnswer);
  }
}

// ---------------------------------------------------------------------------------------------
// Generated PUT /logspec bodies

export function generatedCase(node: NodeKind, index: number, category: string, body: string): HttpCase {
  return {
    id: `${generatedGroup}/${node}/${index}`,
    group: generatedGroup,
    node,
    method: 'PUT',
    path: '/logspec',
    client: 'none',
    body,
    headers: { 'Content-Type': 'application/json' },
    transport: 'native',
    checkState: false,
    category,
  };
}

export function generatedCases(node: NodeKind): HttpCase[] {
  const bodies = generateBodies(seed + (node === 'peer' ? 0 : 1), node === 'peer' ? generatedPerPeer : generatedPerOrderer);
  return bodies.map(({ category, body }, index) => generatedCase(node, index, category, body));
}

/** The Fabric side of the generated cases. */
export interface GeneratedFabric {
  /** Before the first body: the real node's spec set to info (live); nothing to do in the replay. */
  start(): Promise<void>;
  answer(c: HttpCase): Promise<HttpAnswer>;
  /**
   * The spec Fabric sends the next body to. Live: when the two specs read back differ, Fabric's is
   * set back to info (so that one difference does not spill into the next case) and that is it;
   * otherwise its own. Replay: what the recording says happened.
   */
  baselineAfter(c: HttpCase, fabric: HttpAnswer, ours: HttpAnswer): Promise<string>;
}

/** Each body to both sides; fabric-ops starts each next body from the spec Fabric starts it from. */
export async function compareGenerated(book: ResultBook, fabric: GeneratedFabric, ours: Target, cases: readonly HttpCase[], problems: string[]): Promise<void> {
  await Promise.all([fabric.start(), putSpec(ours, 'info')]);
  for (const c of cases) {
    const [fabricAnswer, oursAnswer] = await Promise.all([fabric.answer(c), putAndRead(ours, c.body ?? '')]);
    book.record(c, fabricAnswer, oursAnswer);
    const baseline = await fabric.baselineAfter(c, fabricAnswer, oursAnswer);
    if (oursAnswer.state === baseline) continue;
    try {
      await putSpec(ours, baseline);
    } catch (error) {
      problems.push(
        `${c.id}: fabric-ops cannot be set to the spec Fabric sends the next body to (${JSON.stringify(baseline)}): ${(error as Error).message}; the next cases start from different specs`,
      );
    }
  }
}

// ---------------------------------------------------------------------------------------------
// /metrics: the service's own families

export const ownFamilies = [
  'fabric_version',
  'logging_entries_checked',
  'logging_entries_written',
  'logging_spec_changes',
  'health_check_duration_seconds',
  'health_check_status',
  'operations_requests',
] as const;

async function scrape(target: Target): Promise<Map<string, Family>> {
  const answer = await send(target, { method: 'GET', path: '/metrics' });
  if (answer.status !== 200) throw new Error(`GET /metrics on port ${target.port} answered ${answer.status}`);
  return parseExposition(answer.body);
}

/** The family under Fabric's name: ours carry _total on counters. */
function findFamily(families: Map<string, Family>, base: string): Family | undefined {
  return families.get(base) ?? families.get(`${base}_total`);
}

/** [name, type and label names; values] of one family. */
function describeFamily(before: Family | undefined, after: Family | undefined): [string, string] {
  if (!after) return ['absent', 'absent'];
  const key = (labels: Record<string, string>): string =>
    `{${Object.entries(labels)
      .sort(([a], [b]) => (a < b ? -1 : 1))
      .map(([k, v]) => `${k}="${v}"`)
      .join(',')}}`;
  let values: string;
  if (after.type === 'counter') {
    const deltas = after.samples
      .map((s) => [key(s.labels), s.value - (before?.samples.find((b) => key(b.labels) === key(s.labels))?.value ?? 0)] as const)
      .filter(([, d]) => d !== 0)
      .map(([k, d]) => `${k}+${d}`)
      .sort();
    values = `increments ${deltas.join(' ') || 'none'}`;
  } else if (after.type === 'gauge') {
    values = `values ${after.samples
      .map((s) => `${key(s.labels)}=${s.value}`)
      .sort()
      .join(' ')}`;
  } else {
    values = `observations ${after.samples.filter((s) => s.name.endsWith('_count')).length > 0 ? 'present' : 'none'}`;
  }
  return [`${after.name} ${after.type} labels [${labelNames(after).join(',')}]`, values];
}

/** The same requests to both; log calls come from what the requests make each side log. */
export async function metricsSequence(target: Target): Promise<void> {
  await putSpec(target, 'debug');
  for (const p of ['/healthz', '/healthz', '/version', '/nothing-here']) await send(target, { method: 'GET', path: p });
  await send(target, { method: 'PUT', path: '/logspec', body: '{"spec":"bogus"}' });
  await putSpec(target, 'warning');
  await putSpec(target, 'info');
}

/** One fact compared: its case and one side's value. */
export interface Fact {
  case: FactCase;
  value: Answer;
}

/** Scrape, the sequence, scrape again: each own family's two facts, by case id. */
export async function observeMetrics(target: Target, kind: NodeKind): Promise<Map<string, Fact>> {
  const before = await scrape(target);
  await metricsSequence(target);
  const after = await scrape(target);
  const facts = new Map<string, Fact>();
  for (const name of ownFamilies) {
    const described = describeFamily(findFamily(before, name), findFamily(after, name));
    for (const [aspect, index] of [
      ['name, type, labels', 0],
      ['values', 1],
    ] as const) {
      const c: FactCase = { id: `${metricsGroup}/${kind}: ${name}: ${aspect}`, group: metricsGroup, node: kind, topic: 'metrics' };
      facts.set(c.id, { case: c, value: { kind: 'value', value: described[index] } });
    }
  }
  return facts;
}

// ---------------------------------------------------------------------------------------------
// StatsD

/** Two flushes of the scenarios' 1 s write interval, and some. */
export async function letStatsdFlush(): Promise<void> {
  await delay(2500);
}

const ownBucket = /^(fabric_version|logging\.|health\.|operations\.)/;

/** Bucket → its types (`|c`, `|g <value>` for gauges), of the service's own buckets under `prefix`. */
export function summariseStatsd(lines: readonly StatsdLine[], prefix: string): Map<string, string> {
  const buckets = new Map<string, Set<string>>();
  for (const line of lines) {
    if (!line.bucket.startsWith(prefix) || !ownBucket.test(line.bucket.slice(prefix.length))) continue;
    // Which levels a node logs at is its own business (the peer warns at start about its
    // gossip endpoint): of the logging buckets, the info ones are compared.
    if (/\.logging\.entries_(checked|written)\.(?!info$)\w+$/.test(line.bucket)) continue;
    const kinds = buckets.get(line.bucket) ?? new Set<string>();
    kinds.add(line.type === 'g' ? `|g ${line.value}` : `|${line.type}`);
    buckets.set(line.bucket, kinds);
  }
  return new Map([...buckets].map(([bucket, kinds]) => [bucket, [...kinds].sort().join(' ')]));
}

export function statsdPrefix(kind: NodeKind): string {
  return `${kind}0.`;
}

function versionBucketCase(kind: NodeKind): FactCase {
  return { id: `${statsdGroup}/${kind}: fabric_version bucket`, group: statsdGroup, node: kind, topic: 'statsd' };
}

/** The compared StatsD facts of one node kind: the fabric_version bucket, then every other bucket either side sent. */
export function statsdFacts(kind: NodeKind, fabric: ReadonlyMap<string, string>, ours: ReadonlyMap<string, string>): Array<[FactCase, Answer, Answer]> {
  const prefix = statsdPrefix(kind);
  const versionBucket = `${prefix}fabric_version.`;
  const version = (m: ReadonlyMap<string, string>): string => {
    const entry = [...m].find(([bucket]) => bucket.startsWith(versionBucket));
    return entry ? `${entry[0]} ${entry[1]}` : 'absent';
  };
  const facts: Array<[FactCase, Answer, Answer]> = [
    [versionBucketCase(kind), { kind: 'value', value: version(fabric) }, { kind: 'value', value: version(ours) }],
  ];
  const names = [...new Set([...fabric.keys(), ...ours.keys()])].filter((b) => !b.startsWith(versionBucket)).sort();
  for (const bucket of names) {
    facts.push([
      { id: `${statsdGroup}/${kind}: ${bucket}`, group: statsdGroup, node: kind, topic: 'statsd' },
      { kind: 'value', value: fabric.get(bucket) ?? 'absent' },
      { kind: 'value', value: ours.get(bucket) ?? 'absent' },
    ]);
  }
  return facts;
}

/**
 * The Fabric node's StatsD summary again, from its recorded facts: the live suite recorded a fact for
 * every bucket either side sent, so the buckets Fabric sent are exactly those whose value is not
 * `absent` (and the fabric_version fact holds `<bucket> <types>`).
 */
export function statsdSummaryFromFacts(kind: NodeKind, recorded: ReadonlyArray<{ case: FactCase; fabric: Answer }>): Map<string, string> {
  const summary = new Map<string, string>();
  const versionId = versionBucketCase(kind).id;
  for (const { case: c, fabric } of recorded) {
    if (c.node !== kind || c.group !== statsdGroup) continue;
    const value = describeAnswer(fabric);
    if (value === 'absent') continue;
    if (c.id === versionId) {
      const space = value.indexOf(' ');
      summary.set(value.slice(0, space), value.slice(space + 1));
    } else {
      summary.set(c.id.slice(`${statsdGroup}/${kind}: `.length), value);
    }
  }
  return summary;
}

// ---------------------------------------------------------------------------------------------
// Configuration: start-up outcomes under environment overrides

/**
 * One configuration case, as data. Environment values may name the run's PKI files as
 * `{{clientCA}}` or `{{untrustedCA}}` (resolvePkiTokens): each run makes a fresh PKI.
 */
export interface ConfigCaseSpec {
  /** The fact's case id: `configuration/<kind>: <name>`. */
  id: string;
  name: string;
  kind: NodeKind;
  tls?: 'off' | 'configured-disabled' | 'optional' | 'required' | 'no-roots';
  metrics?: NodeConfigOptions['metrics'];
  env: Record<string, string>;
  observe: 'protocol' | 'client-certs' | 'healthz-without-cert' | 'metrics-status' | 'starts';
}

const truths = ['true', 'True', 'TRUE', 't', 'T', '1'];
const falsehoods = ['false', 'False', 'FALSE', 'f', 'F', '0'];
const notBooleans = ['yes', 'on', 'no', 'off', 'tRuE'];

export function configCaseSpecs(): ConfigCaseSpec[] {
  const ca = '{{clientCA}}';
  const other = '{{untrustedCA}}';
  const cases: Array<Omit<ConfigCaseSpec, 'id'>> = [];
  for (const value of [...truths, ...falsehoods, ...notBooleans]) {
    cases.push({
      name: `boolean CORE_OPERATIONS_TLS_ENABLED=${value}`,
      kind: 'peer',
      tls: 'configured-disabled',
      env: { CORE_OPERATIONS_TLS_ENABLED: value },
      observe: 'protocol',
    });
  }
  for (const value of ['true', '1', 'T', 'False', 'yes']) {
    cases.push({
      name: `boolean ORDERER_OPERATIONS_TLS_ENABLED=${value}`,
      kind: 'orderer',
      tls: 'configured-disabled',
      env: { ORDERER_OPERATIONS_TLS_ENABLED: value },
      observe: 'protocol',
    });
  }
  for (const value of ['true', 'T', '1', 'false', '0', 'on']) {
    cases.push({
      name: `boolean CORE_OPERATIONS_TLS_CLIENTAUTHREQUIRED=${value}`,
      kind: 'peer',
      tls: 'optional',
      env: { CORE_OPERATIONS_TLS_CLIENTAUTHREQUIRED: value },
      observe: 'healthz-without-cert',
    });
  }
  const lists: Array<[string, string]> = [
    ['two paths, space-separated', `${other} ${ca}`],
    ['[a, b]', `[${other}, ${ca}]`],
    ['[a,b]', `[${other},${ca}]`],
    ['one path', ca],
    ['one path, brackets', `[${ca}]`],
  ];
  for (const [label, value] of lists) {
    cases.push({
      name: `list CORE_OPERATIONS_TLS_CLIENTROOTCAS_FILES: ${label}`,
      kind: 'peer',
      tls: 'optional',
      env: { CORE_OPERATIONS_TLS_CLIENTROOTCAS_FILES: value },
      observe: 'client-certs',
    });
    cases.push({
      name: `list ORDERER_OPERATIONS_TLS_CLIENTROOTCAS: ${label}`,
      kind: 'orderer',
      tls: 'optional',
      env: { ORDERER_OPERATIONS_TLS_CLIENTROOTCAS: value },
      observe: 'client-certs',
    });
  }
  for (const value of ['1s', '1m30s', '500ms', '10']) {
    cases.push({
      name: `duration CORE_METRICS_STATSD_WRITEINTERVAL=${value}`,
      kind: 'peer',
      metrics: { provider: 'statsd', statsd: { address: '127.0.0.1:9', writeInterval: '10s', prefix: '' } },
      env: { CORE_METRICS_STATSD_WRITEINTERVAL: value },
      observe: 'starts',
    });
  }
  cases.push({
    name: 'empty CORE_METRICS_PROVIDER= (file: prometheus)',
    kind: 'peer',
    metrics: { provider: 'prometheus' },
    env: { CORE_METRICS_PROVIDER: '' },
    observe: 'metrics-status',
  });
  cases.push({
    name: 'empty ORDERER_METRICS_PROVIDER= (file: prometheus)',
    kind: 'orderer',
    metrics: { provider: 'prometheus' },
    env: { ORDERER_METRICS_PROVIDER: '' },
    observe: 'metrics-status',
  });
  cases.push({
    name: 'empty CORE_OPERATIONS_TLS_ENABLED= (file: true)',
    kind: 'peer',
    tls: 'optional',
    env: { CORE_OPERATIONS_TLS_ENABLED: '' },
    observe: 'protocol',
  });
  cases.push({
    name: 'TLS on, certificate file missing',
    kind: 'peer',
    tls: 'optional',
    env: { CORE_OPERATIONS_TLS_CERT_FILE: '/nonexistent/server.crt' },
    observe: 'starts',
  });
  cases.push({
    name: 'TLS on, certificate file missing',
    kind: 'orderer',
    tls: 'optional',
    env: { ORDERER_OPERATIONS_TLS_CERTIFICATE: '/nonexistent/server.crt' },
    observe: 'starts',
  });
  cases.push({
    name: 'TLS on, key file missing',
    kind: 'peer',
    tls: 'optional',
    env: { CORE_OPERATIONS_TLS_KEY_FILE: '/nonexistent/server.key' },
    observe: 'starts',
  });
  cases.push({
    name: 'TLS on, client root CA file missing',
    kind: 'peer',
    tls: 'optional',
    env: { CORE_OPERATIONS_TLS_CLIENTROOTCAS_FILES: '/nonexistent/ca.crt' },
    observe: 'starts',
  });
  cases.push({ name: 'listen address not host:port', kind: 'peer', env: { CORE_OPERATIONS_LISTENADDRESS: 'bogus' }, observe: 'starts' });
  cases.push({ name: 'listen address not host:port', kind: 'orderer', env: { ORDERER_OPERATIONS_LISTENADDRESS: 'bogus' }, observe: 'starts' });
  cases.push({ name: 'FABRIC_LOGGING_SPEC=Debug (invalid)', kind: 'peer', env: { FABRIC_LOGGING_SPEC: 'Debug' }, observe: 'starts' });
  cases.push({ name: 'FABRIC_LOGGING_SPEC=gossip=debug:warning', kind: 'peer', env: { FABRIC_LOGGING_SPEC: 'gossip=debug:warning' }, observe: 'starts' });
  cases.push({ name: 'clientAuthRequired true, clientRootCAs empty', kind: 'peer', tls: 'no-roots', env: {}, observe: 'starts' });
  cases.push({ name: 'provider prometeus (typo)', kind: 'peer', env: { CORE_METRICS_PROVIDER: 'prometeus' }, observe: 'starts' });
  cases.push({ name: 'provider prometeus (typo)', kind: 'orderer', env: { ORDERER_METRICS_PROVIDER: 'prometeus' }, observe: 'starts' });
  cases.push({
    name: 'statsd tcp daemon down',
    kind: 'peer',
    metrics: { provider: 'statsd', statsd: { network: 'tcp', address: '127.0.0.1:9', writeInterval: '10s', prefix: '' } },
    env: {},
    observe: 'starts',
  });
  return cases.map((c) => ({ id: `${configurationGroup}/${c.kind}: ${c.name}`, ...c }));
}

/** `{{clientCA}}` and `{{untrustedCA}}` → the run's CA certificate files; any other token is an error. */
export function resolvePkiTokens(value: string, pki: TestPki): string {
  return value.replace(/\{\{(\w+)\}\}/g, (_match, name: string) => {
    if (name === 'clientCA') return pki.clientCA.cert;
    if (name === 'untrustedCA') return pki.untrustedCA.cert;
    throw new Error(`unknown PKI token {{${name}}} in ${JSON.stringify(value)}`);
  });
}

export function configEnv(cc: ConfigCaseSpec, pki: TestPki): Record<string, string> {
  return Object.fromEntries(Object.entries(cc.env).map(([key, value]) => [key, resolvePkiTokens(value, pki)]));
}

export function configFact(cc: ConfigCaseSpec): FactCase {
  return { id: cc.id, group: configurationGroup, node: cc.kind, topic: 'config' };
}

/** Writes a configuration case's file (in `root/config-<index>`). */
export function writeConfigCase(root: string, index: number, cc: ConfigCaseSpec, pki: TestPki, source: ConfigSource): Promise<NodeConfig> {
  const tls =
    cc.tls === undefined || cc.tls === 'off'
      ? undefined
      : {
          enabled: cc.tls !== 'configured-disabled',
          cert: pki.server.cert,
          key: pki.server.key,
          clientAuthRequired: cc.tls === 'required' || cc.tls === 'no-roots',
          clientRootCAs: cc.tls === 'no-roots' ? [] : [pki.clientCA.cert],
        };
  return writeNodeConfig(path.join(root, `config-${index}`), { kind: cc.kind, ...source, tls, metrics: cc.metrics, generalTls: generalTlsOf(pki) });
}

/** What a started server shows, as the configuration case asks. */
export async function observe(kind: ConfigCaseSpec['observe'], port: number, pki: TestPki): Promise<string> {
  const tlsTarget = (): Target => ({ port, tls: tlsTargetOf(pki) });
  const attempt = async (target: Target, p: string, client: ClientCert): Promise<string> => {
    const c: HttpCase = { id: 'probe', group: 'probe', node: 'peer', method: 'GET', path: p, client, transport: 'native', checkState: false };
    const answer = await runCase(target, c);
    return answer.kind === 'http' ? String(answer.status) : answer.kind;
  };
  switch (kind) {
    case 'starts':
      return 'serves';
    case 'protocol': {
      const https = await attempt(tlsTarget(), '/healthz', 'none');
      if (https === '200') return 'HTTPS';
      const http = await attempt({ port, tls: null }, '/healthz', 'none');
      return http === '200' ? 'plain HTTP' : `neither (https: ${https}, http: ${http})`;
    }
    case 'client-certs':
      return `GET /logspec: client of the client CA ${await attempt(tlsTarget(), '/logspec', 'trusted')}, client of the other CA ${await attempt(tlsTarget(), '/logspec', 'untrusted')}`;
    case 'healthz-without-cert':
      return `GET /healthz without a client certificate: ${await attempt(tlsTarget(), '/healthz', 'none')}`;
    case 'metrics-status':
      return `GET /metrics ${await attempt({ port, tls: null }, '/metrics', 'none')}`;
  }
}

/** fabric-ops on a configuration case: refused at start, or what it shows. */
export async function oursOutcome(config: NodeConfig, cc: ConfigCaseSpec, pki: TestPki): Promise<string> {
  let system;
  try {
    system = await startOurs(config, configEnv(cc, pki));
  } catch {
    return 'refused at start';
  }
  try {
    return `starts; ${await observe(cc.observe, system.address.port, pki)}`;
  } finally {
    await system.stop(500);
  }
}

/** Runs `work` over the items, `width` at a time; results in the items' order. */
export async function inPool<T, R>(items: readonly T[], width: number, work: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const results: R[] = [];
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const index = next++;
      results[index] = await work(items[index] as T, index);
    }
  };
  await Promise.all(Array.from({ length: Math.min(width, items.length) }, worker));
  return results;
}

// ---------------------------------------------------------------------------------------------

/** What fails a release's run: a difference no deviation explains, a deviation no case needed, and the run's own problems. */
export function runProblems(book: ResultBook, version: string, problems: readonly string[] = []): string[] {
  return [
    ...book
      .failures()
      .map((r) => `difference not in the deviation table: ${r.case.id}\n  Fabric: ${describeAnswer(r.fabric)}\n  ours:   ${describeAnswer(r.ours)}`),
    ...book.unexercised().map((id) => `deviation ${id} is not needed by any case against ${version}: remove it, narrow its releases, or add the case`),
    ...problems,
  ];
}
