import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import {
  FabricStartError,
  killAllFabricNodes,
  makeFabricWorkDir,
  startFabricNode,
  writeNodeConfig,
  type NodeConfigOptions,
  type NodeKind,
} from '../support/fabric-reference';
import { createTestPki, type TestPki } from '../support/pki';
import { detailCases, endpointMatrix, healthCases, plainToTlsCases } from './cases';
import { describeBody, readSpec, runCase, send, putSpec, type Target } from './client';
import { deviations } from './deviations';
import { startOurs, startScenario, type Pair, type Scenario, type ScenarioOptions } from './harness';
import { generateBodies } from './logspec-generator';
import { labelNames, parseExposition, StatsdListener, udpPortsOf, type Family } from './metrics';
import { describeAnswer, type Answer, type ClientCert, type FactCase, type HttpCase } from './model';
import { renderReadmeSection, renderReport, replaceReadmeSection } from './report';
import { compatReleaseHomes, releaseLine } from './releases';
import { ResultBook } from './verdict';
import type { ReleaseRun } from './report';

/**
 * The differential suite: the same requests to the real Fabric peer and orderer and to
 * fabric-ops on the same configuration; differences must be listed in deviations.ts.
 * It runs once per Fabric release (releases.ts: 2.5.12 and 3.0.0 by default, $FABRIC_HOMES),
 * one after another, and renders them side by side.
 * `COMPAT_WRITE=1` (make compat) rewrites docs/compatibility.md and the README section;
 * otherwise they must equal what this run renders.
 */

const root = path.resolve(__dirname, '../..');
const reportFile = path.join(root, 'docs/compatibility.md');
const readmeFile = path.join(root, 'README.md');
const write = process.env.COMPAT_WRITE === '1';
const generatedPerPeer = 5000;
const generatedPerOrderer = 1000;
const seed = 20250512;

const homes = compatReleaseHomes();
const runs: ReleaseRun[] = [];
let pki: TestPki;
let work: { dir: string; cleanup(): Promise<void> };
// The release under test (the describe.each below runs them one after another).
let home = '';
let releaseDir = '';
let book = new ResultBook(deviations, 'none');
let scenarios: Scenario[] = [];
let statsd: StatsdListener | null = null;
let fabricVersion = { Version: 'unknown', CommitSHA: 'unknown' };

const allClients: ClientCert[] = ['none', 'trusted', 'untrusted', 'expired'];

function scenario(name: string): Scenario {
  const found = scenarios.find((s) => s.name === name);
  if (!found) throw new Error(`scenario ${name} did not start`);
  return found;
}

async function compare(pair: Pair, cases: HttpCase[]): Promise<void> {
  for (const c of cases) {
    const [fabric, ours] = await Promise.all([runCase(pair.fabricTarget, c), runCase(pair.oursTarget, c)]);
    book.record(c, fabric, ours);
  }
}

beforeAll(async () => {
  [pki, work] = await Promise.all([createTestPki(), makeFabricWorkDir()]);
}, 60_000);

afterAll(async () => {
  await killAllFabricNodes();
  await work?.cleanup();
  await pki?.cleanup();
}, 60_000);

/** Starts every scenario on the release in `home`, after /version tells which it is. */
async function startRelease(): Promise<void> {
  releaseDir = path.join(work.dir, path.basename(home));
  scenarios = [];
  // One StatsD listener per release: lines a stopped release sent must not count as ours.
  statsd = await StatsdListener.start();
  const statsdAddress = `127.0.0.1:${statsd.port}`;
  const definitions: ScenarioOptions[] = [
    { name: 'TLS off', nodes: ['peer', 'orderer'], tls: 'off', metrics: { provider: 'prometheus' } },
    { name: 'TLS, clientAuthRequired false', nodes: ['peer', 'orderer'], tls: 'optional', metrics: { provider: 'prometheus' } },
    { name: 'TLS, clientAuthRequired true', nodes: ['peer', 'orderer'], tls: 'required', metrics: { provider: 'prometheus' } },
    { name: 'Docker checker on the real dockerd', nodes: ['peer'], tls: 'off', vmEndpoint: 'unix:///var/run/docker.sock' },
    { name: 'Docker checker on a missing socket', nodes: ['peer'], tls: 'off', vmEndpoint: 'unix:///nonexistent/docker.sock' },
    { name: 'Docker checker off', nodes: ['peer'], tls: 'off', vmEndpoint: '' },
    { name: 'metrics', nodes: ['peer', 'orderer'], tls: 'off', metrics: { provider: 'prometheus' } },
    {
      name: 'StatsD',
      nodes: ['peer', 'orderer'],
      tls: 'off',
      metrics: { provider: 'statsd', statsd: (kind: NodeKind) => ({ address: statsdAddress, writeInterval: '1s', prefix: `${kind}0` }) },
    },
  ];
  const started = await Promise.allSettled(definitions.map((d) => startScenario(releaseDir, pki, { ...d, home })));
  for (const s of started) if (s.status === 'fulfilled') scenarios.push(s.value);
  const failed = started.find((s): s is PromiseRejectedResult => s.status === 'rejected');
  if (failed) throw failed.reason;
  const version = await send(scenario('TLS off').pair('peer').fabricTarget, { method: 'GET', path: '/version' });
  fabricVersion = JSON.parse(version.body) as typeof fabricVersion;
  book = new ResultBook(deviations, releaseLine(fabricVersion.Version));
}

async function stopRelease(): Promise<void> {
  await Promise.allSettled(scenarios.map((s) => s.stop()));
  await killAllFabricNodes();
  await statsd?.close();
  statsd = null;
  runs.push({ version: fabricVersion.Version, commit: fabricVersion.CommitSHA, results: book.results });
}

describe.each(homes.map((h) => [path.basename(h), h] as const))('against %s', (_name, releaseHome) => {
  beforeAll(async () => {
    home = releaseHome;
    await startRelease();
  }, 90_000);

  afterAll(stopRelease, 60_000);

  describe('every endpoint, method and near-miss path', () => {
    test('TLS off', async () => {
      const s = scenario('TLS off');
      await Promise.all(s.pairs.map((p) => compare(p, [...endpointMatrix(s.name, p.kind, ['none']), ...detailCases(s.name, p.kind)])));
    });

    test.each(['TLS, clientAuthRequired false', 'TLS, clientAuthRequired true'])(
      '%s: no, trusted, untrusted and expired client certificates; plain HTTP',
      async (name) => {
        const s = scenario(name);
        await Promise.all(s.pairs.map((p) => compare(p, [...endpointMatrix(s.name, p.kind, allClients), ...plainToTlsCases(s.name, p.kind)])));
      },
    );

    test.each(['Docker checker on the real dockerd', 'Docker checker on a missing socket', 'Docker checker off'])('%s', async (name) => {
      const p = scenario(name).pair('peer');
      await compare(p, healthCases(name, 'peer'));
    });
  });

  describe('PUT /logspec with generated bodies', () => {
    test(`${generatedPerPeer} bodies on the peer, ${generatedPerOrderer} on the orderer: accept/refuse and the spec read back`, async () => {
      const s = scenario('TLS off');
      const group = 'PUT /logspec, generated bodies';
      await Promise.all(
        s.pairs.map(async (p) => {
          const bodies = generateBodies(seed + (p.kind === 'peer' ? 0 : 1), p.kind === 'peer' ? generatedPerPeer : generatedPerOrderer);
          await Promise.all([putSpec(p.fabricTarget, 'info'), putSpec(p.oursTarget, 'info')]);
          for (const [i, { category, body }] of bodies.entries()) {
            const c: HttpCase = {
              id: `${group}/${p.kind}/${i}`,
              group,
              node: p.kind,
              method: 'PUT',
              path: '/logspec',
              client: 'none',
              body,
              headers: { 'Content-Type': 'application/json' },
              transport: 'native',
              checkState: false,
              category,
            };
            const [fabric, ours] = await Promise.all([putAndRead(p.fabricTarget, body), putAndRead(p.oursTarget, body)]);
            const result = book.record(c, fabric, ours);
            // Keep one difference from spilling into the next case.
            if (fabric.kind === 'http' && ours.kind === 'http' && fabric.state !== ours.state) {
              await Promise.all([putSpec(p.fabricTarget, 'info'), putSpec(p.oursTarget, 'info')]);
            }
            void result;
          }
        }),
      );
      expect(book.results.filter((r) => r.case.group === group)).toHaveLength(generatedPerPeer + generatedPerOrderer);
    }, 120_000);
  });

  async function putAndRead(target: Target, body: string): Promise<Answer> {
    const raw = await send(target, { method: 'PUT', path: '/logspec', body, headers: { 'Content-Type': 'application/json' } });
    const state = await readSpec(target);
    return {
      kind: 'http',
      status: raw.status,
      contentType: raw.headers['content-type']?.split(';')[0]?.trim() ?? null,
      body: describeBody(raw.body),
      requestId: raw.headers['x-request-id'] ? 'present' : 'absent',
      state,
    };
  }

  const ownFamilies = [
    'fabric_version',
    'logging_entries_checked',
    'logging_entries_written',
    'logging_spec_changes',
    'health_check_duration_seconds',
    'health_check_status',
    'operations_requests',
  ];

  async function scrape(target: Target): Promise<Map<string, Family>> {
    const answer = await send(target, { method: 'GET', path: '/metrics' });
    if (answer.status !== 200) throw new Error(`GET /metrics answered ${answer.status}`);
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
  async function metricsSequence(target: Target): Promise<void> {
    await putSpec(target, 'debug');
    for (const p of ['/healthz', '/healthz', '/version', '/nothing-here']) await send(target, { method: 'GET', path: p });
    await send(target, { method: 'PUT', path: '/logspec', body: '{"spec":"bogus"}' });
    await putSpec(target, 'warning');
    await putSpec(target, 'info');
  }

  describe('metrics', () => {
    test("/metrics: the service's own families (names, types, label names, values after the same requests)", async () => {
      const s = scenario('metrics');
      for (const p of s.pairs) {
        const [fBefore, oBefore] = await Promise.all([scrape(p.fabricTarget), scrape(p.oursTarget)]);
        await Promise.all([metricsSequence(p.fabricTarget), metricsSequence(p.oursTarget)]);
        const [fAfter, oAfter] = await Promise.all([scrape(p.fabricTarget), scrape(p.oursTarget)]);
        for (const name of ownFamilies) {
          const [fabric, ours] = [
            describeFamily(findFamily(fBefore, name), findFamily(fAfter, name)),
            describeFamily(findFamily(oBefore, name), findFamily(oAfter, name)),
          ];
          for (const [aspect, index] of [
            ['name, type, labels', 0],
            ['values', 1],
          ] as const) {
            const c: FactCase = { id: `/metrics/${p.kind}: ${name}: ${aspect}`, group: '/metrics', node: p.kind, topic: 'metrics' };
            book.record(c, { kind: 'value', value: fabric[index] }, { kind: 'value', value: ours[index] });
          }
        }
      }
    });

    test('StatsD: bucket names and types pushed to one UDP listener (peer0. and orderer0. prefixes)', async () => {
      const s = scenario('StatsD');
      const listener = statsd;
      if (!listener) throw new Error('no StatsD listener');
      await Promise.all(s.pairs.flatMap((p) => [metricsSequence(p.fabricTarget), metricsSequence(p.oursTarget)]));
      await new Promise((resolve) => setTimeout(resolve, 2500));
      const own = /^(fabric_version|logging\.|health\.|operations\.)/;
      // Which process sent a datagram: the Fabric nodes' UDP ports, from /proc; the rest is ours.
      const fabricPorts = new Set(s.pairs.flatMap((p) => [...udpPortsOf(p.fabric.pid)]));
      const senders = { fabric: listener.from(fabricPorts, 'these'), ours: listener.from(fabricPorts, 'others') };
      for (const p of s.pairs) {
        const prefix = `${p.kind}0.`;
        const summarise = (sender: keyof typeof senders): Map<string, string> => {
          const buckets = new Map<string, Set<string>>();
          for (const line of senders[sender]) {
            if (!line.bucket.startsWith(prefix) || !own.test(line.bucket.slice(prefix.length))) continue;
            // Which levels a node logs at is its own business (the peer warns at start about its
            // gossip endpoint): of the logging buckets, the info ones are compared.
            if (/\.logging\.entries_(checked|written)\.(?!info$)\w+$/.test(line.bucket)) continue;
            const bucket = line.bucket;
            const kinds = buckets.get(bucket) ?? new Set<string>();
            kinds.add(line.type === 'g' ? `|g ${line.value}` : `|${line.type}`);
            buckets.set(bucket, kinds);
          }
          return new Map([...buckets].map(([bucket, kinds]) => [bucket, [...kinds].sort().join(' ')]));
        };
        const fabric = summarise('fabric');
        const ours = summarise('ours');
        if (fabric.size === 0) throw new Error(`no StatsD line from the Fabric ${p.kind} under ${prefix}`);
        if (ours.size === 0) throw new Error(`no StatsD line from fabric-ops (${p.kind} dialect) under ${prefix}`);
        const version = (m: Map<string, string>): string => {
          const entry = [...m].find(([bucket]) => bucket.startsWith(`${prefix}fabric_version.`));
          return entry ? `${entry[0]} ${entry[1]}` : 'absent';
        };
        book.record(
          { id: `StatsD/${p.kind}: fabric_version bucket`, group: 'StatsD', node: p.kind, topic: 'statsd' },
          { kind: 'value', value: version(fabric) },
          { kind: 'value', value: version(ours) },
        );
        const names = [...new Set([...fabric.keys(), ...ours.keys()])].filter((b) => !b.startsWith(`${prefix}fabric_version.`)).sort();
        for (const bucket of names) {
          book.record(
            { id: `StatsD/${p.kind}: ${bucket}`, group: 'StatsD', node: p.kind, topic: 'statsd' },
            { kind: 'value', value: fabric.get(bucket) ?? 'absent' },
            { kind: 'value', value: ours.get(bucket) ?? 'absent' },
          );
        }
      }
    });
  });

  interface ConfigCase {
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

  function configCases(p: TestPki): ConfigCase[] {
    const ca = p.clientCA.cert;
    const other = p.untrustedCA.cert;
    const cases: ConfigCase[] = [];
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
    return cases;
  }

  async function observe(kind: ConfigCase['observe'], port: number): Promise<string> {
    const tlsTarget = (): Target => ({
      port,
      tls: { ca: pki.serverCA.certPem, clients: { trusted: pki.client, untrusted: pki.untrustedClient, expired: pki.expiredClient } },
    });
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

  describe('configuration', () => {
    test('the same environment overrides give the same behaviour; what Fabric refuses at start is refused', async () => {
      const cases = configCases(pki);
      const outcomes: Array<[ConfigCase, string, string]> = [];
      let next = 0;
      const worker = async (): Promise<void> => {
        while (next < cases.length) {
          const index = next++;
          const cc = cases[index];
          if (!cc) return;
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
          const config = await writeNodeConfig(path.join(releaseDir, `config-${index}`), {
            kind: cc.kind,
            home,
            tls,
            metrics: cc.metrics,
            generalTls: { cert: pki.serverByOrgCA.cert, key: pki.serverByOrgCA.key, rootCA: pki.orgCA.cert },
          });
          const [fabric, ours] = await Promise.all([fabricOutcome(config, cc), oursOutcome(config, cc)]);
          outcomes[index] = [cc, fabric, ours];
        }
      };
      await Promise.all([worker(), worker(), worker()]);
      for (const [cc, fabric, ours] of outcomes) {
        book.record(
          { id: `configuration/${cc.kind}: ${cc.name}`, group: 'configuration', node: cc.kind, topic: 'config' },
          { kind: 'value', value: fabric },
          { kind: 'value', value: ours },
        );
      }
    }, 120_000);
  });

  async function fabricOutcome(config: Awaited<ReturnType<typeof writeNodeConfig>>, cc: ConfigCase): Promise<string> {
    let node;
    try {
      node = await startFabricNode({ config, env: cc.env, readyTimeoutMs: 20_000 });
    } catch (error) {
      if (error instanceof FabricStartError) return 'refused at start';
      throw error;
    }
    try {
      await new Promise((resolve) => setTimeout(resolve, 100));
      if (node.child.exitCode !== null) return 'refused at start';
      return `starts; ${await observe(cc.observe, node.port)}`;
    } finally {
      node.child.kill('SIGKILL');
      await node.exited;
    }
  }

  async function oursOutcome(config: Awaited<ReturnType<typeof writeNodeConfig>>, cc: ConfigCase): Promise<string> {
    let system;
    try {
      system = await startOurs(config, cc.env);
    } catch {
      return 'refused at start';
    }
    try {
      return `starts; ${await observe(cc.observe, system.address.port)}`;
    } finally {
      await system.stop(500);
    }
  }

  test('no difference outside the deviation table; every deviation that applies to this release exercised', () => {
    const problems = [
      ...book
        .failures()
        .map((r) => `difference not in the deviation table: ${r.case.id}\n  Fabric: ${describeAnswer(r.fabric)}\n  ours:   ${describeAnswer(r.ours)}`),
      ...book
        .unexercised()
        .map((id) => `deviation ${id} is not needed by any case against ${fabricVersion.Version}: remove it, narrow its releases, or add the case`),
    ];
    expect(problems).toEqual([]);
  });
});

describe('the deviation table and the report', () => {
  test('docs/compatibility.md and the README are what this run renders, for every release', () => {
    expect(runs.map((run) => run.version)).toHaveLength(homes.length);
    const report = renderReport({
      runs,
      deviations,
      generatedGroups: new Set(['PUT /logspec, generated bodies']),
      setup: [
        "Configuration: the release's `sampleconfig/core.yaml` and `orderer.yaml`, copied with writable paths, ports and the scenario's settings changed; fabric-ops is started (library entry point) on the same file and environment.",
        'Compared for each HTTP case: status, media type (the whole `Content-Type` where the case says so), body shape (JSON key names and value types; values of `spec`, `status`, `component`), `X-Request-Id` (absent / echoed / uuid) and, after methods that may change state, the spec `GET /logspec` shows.',
        'A refused TLS handshake is compared as refused; the alert (or a closed connection) is shown in brackets and not compared.',
        `Generated PUT /logspec bodies: seed ${seed}; compared are the status and the spec read back after each.`,
        "StatsD: bucket names and types of the service's own metrics received from each process by one UDP listener (sender told apart by its source port); of the per-level logging buckets only `.info` is compared, since which levels each program logs at is its own.",
        'Metrics: values are the increments over the same request sequence (PUT debug, GET /healthz twice, /version, an unknown path, a bad spec, PUT warning, PUT info).',
      ],
    });
    const section = renderReadmeSection(deviations);
    const readme = readFileSync(readmeFile, 'utf8');
    if (write) {
      writeFileSync(reportFile, report);
      const updated = replaceReadmeSection(readme, section);
      if (updated !== readme) writeFileSync(readmeFile, updated);
    }
    const problems: string[] = [];
    const committed = existsSync(reportFile) ? readFileSync(reportFile, 'utf8') : '';
    if (committed !== report) problems.push('docs/compatibility.md differs from this run: run `make compat` and commit it');
    if (!readFileSync(readmeFile, 'utf8').includes(section)) problems.push('the README deviations section differs from deviations.ts: run `make compat`');
    expect(problems).toEqual([]);
  });
});
