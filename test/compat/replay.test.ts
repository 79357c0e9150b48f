import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { OperationsSystem } from '../../src/index';
import { repositoryRoot, writeNodeConfig, type NodeKind } from '../support/fabric-reference';
import { createTestPki, type TestPki } from '../support/pki';
import { jsonShape, send, type Target } from './client';
import { deviations } from './deviations';
import { startOurs, startScenario, type Scenario } from './harness';
import { StatsdListener } from './metrics';
import { isHttpCase, type Answer, type FactCase, type HttpAnswer, type HttpCase } from './model';
import { findRecordings, type LoadedRecording, type RecordedEntry } from './recording';
import { releaseLine } from './releases';
import {
  composeReport,
  deviationsPage,
  renderDeviationsSection,
  renderNoRecording,
  renderReport,
  replaceDeviationsSection,
  splitReport,
  type ReleaseRun,
} from './report';
import {
  compareGenerated,
  compareHttpCases,
  configFact,
  generatedGroup,
  inPool,
  letStatsdFlush,
  metricsGroup,
  metricsSequence,
  observeMetrics,
  oursOutcome,
  reportSetup,
  runProblems,
  statsdFacts,
  statsdGroup,
  statsdPrefix,
  statsdSummaryFromFacts,
  summariseStatsd,
  writeConfigCase,
} from './suite';
import { ResultBook } from './verdict';

/**
 * The differential suite's replay, in `make test`: for every recording of real Fabric answers
 * (test/compat/recording.ts; `make compat-record` writes them into test/compat/recorded/, and
 * ../shared/fixtures/compat-recorded/ may hold more), fabric-ops is started alone on the configuration
 * each case was recorded under (the recorded scenario and sampleconfig, a fresh test PKI of the same
 * shape), sent the same cases, and its answers judged against the recorded ones by the live suite's
 * code (suite.ts, verdict.ts, deviations.ts). docs/compatibility.md must be what the recordings render
 * (COMPAT_WRITE=1 rewrites it, keeping its kept section).
 *
 * Always, recordings or not: fabric-ops on the sampleconfig of each release in
 * ../shared/fixtures/fabric-recorded/ answers GET /logspec, and /version and /healthz in the shape, as
 * those real nodes did; and docs/reference/deviations.md's table is what deviations.ts renders.
 */

const root = repositoryRoot();
const reportFile = path.join(root, 'docs/compatibility.md');
const deviationsFile = path.join(root, deviationsPage);
const write = process.env.COMPAT_WRITE === '1';
const found = findRecordings(root);
const looked = found.looked.map((dir) => `${path.relative(root, dir)}/`);
const recordCommand = 'make compat-record FABRIC_HOMES="<Fabric release folders>"';

/** Checks docs/compatibility.md's rendered part (or, with COMPAT_WRITE=1, writes it); the kept section below it stays. */
function reportProblems(rendered: string): string[] {
  const { rendered: committed, kept } = splitReport(readFileSync(reportFile, 'utf8'));
  if (write && committed !== rendered) writeFileSync(reportFile, composeReport(rendered, kept));
  const now = splitReport(readFileSync(reportFile, 'utf8')).rendered;
  return now === rendered
    ? []
    : [`${path.relative(root, reportFile)} differs from what the recordings render: run \`${recordCommand}\`, or COMPAT_WRITE=1 on this test, and commit it`];
}

if (found.recordings.length === 0) {
  /*
   * No recording anywhere (the project has no Fabric binaries to make one). This is not a pass of the
   * differential suite and must not look like one: the file says so loudly in one line (the Makefile
   * prints the same line after the run), and holds exactly one test, which is not about fabric-ops:
   * it asserts that the loader really found no file in either place (a recording that is present but
   * unreadable or misnamed fails it, naming the file and the problem) and that docs/compatibility.md
   * says there is no recording. The fabric-recorded comparison below still runs.
   */
  console.warn(`COMPAT REPLAY HAS NO RECORDING: looked in ${looked.join(' and ')}; make one with ${recordCommand}`);
  describe('compat replay', () => {
    test(`no recording: no file in ${looked.join(' nor ')}, and docs/compatibility.md says so`, () => {
      expect({ files: found.files.map((file) => path.relative(root, file)), errors: found.errors }).toEqual({ files: [], errors: [] });
      expect(reportProblems(renderNoRecording(looked))).toEqual([]);
    });
  });
} else {
  const runs: ReleaseRun[] = [];

  describe.each(found.recordings.map((r) => [r.data.release.version, r.data.recorded.slice(0, 10), r.shown, r] as const))(
    'Fabric %s as recorded on %s (%s)',
    (version, _date, _file, recording) => {
      let pki: TestPki;
      let work: string;
      let statsd: StatsdListener;
      let scenarios: Scenario[] = [];
      const book = new ResultBook(deviations, releaseLine(version));
      const problems: string[] = [];
      const entries = recording.entries;
      const fabricOf = new Map(entries.map((e) => [e.case.id, e]));
      const sampleconfig = (): { sampleconfig: string } => ({ sampleconfig: path.join(work, 'sampleconfig') });

      const scenario = (name: string): Scenario => {
        const s = scenarios.find((candidate) => candidate.name === name);
        if (!s) throw new Error(`${recording.shown}: scenario ${name} did not start`);
        return s;
      };
      const recorded = (c: HttpCase): RecordedEntry => {
        const entry = fabricOf.get(c.id);
        if (!entry) throw new Error(`${recording.shown}: no recorded answer for ${c.id}`);
        return entry;
      };
      /** The recorded entries matching `test`, grouped by scenario and node kind, in recorded order. */
      const groupsOf = (test: (e: RecordedEntry) => boolean): Array<{ on: string; kind: NodeKind; entries: RecordedEntry[] }> => {
        const groups: Array<{ on: string; kind: NodeKind; entries: RecordedEntry[] }> = [];
        for (const e of entries.filter(test)) {
          let g = groups.find((candidate) => candidate.on === e.on && candidate.kind === e.case.node);
          if (!g) groups.push((g = { on: e.on, kind: e.case.node, entries: [] }));
          g.entries.push(e);
        }
        return groups;
      };
      /** Runs the groups of one scenario at a time, its node kinds side by side (as the live suite does). */
      const perScenario = async (groups: ReturnType<typeof groupsOf>, run: (s: Scenario, g: (typeof groups)[number]) => Promise<void>): Promise<void> => {
        for (const on of [...new Set(groups.map((g) => g.on))]) {
          await Promise.all(groups.filter((g) => g.on === on).map((g) => run(scenario(on), g)));
        }
      };

      beforeAll(async () => {
        [pki, work, statsd] = await Promise.all([createTestPki(), mkdtemp(path.join(os.tmpdir(), 'compat-replay-')), StatsdListener.start()]);
        mkdirSync(path.join(work, 'sampleconfig'));
        writeFileSync(path.join(work, 'sampleconfig/core.yaml'), recording.data.sampleconfig['core.yaml'].join('\n'));
        writeFileSync(path.join(work, 'sampleconfig/orderer.yaml'), recording.data.sampleconfig['orderer.yaml'].join('\n'));
        const context = { pki, source: sampleconfig(), statsdAddress: `127.0.0.1:${statsd.port}` };
        const started = await Promise.allSettled(recording.data.scenarios.map((spec) => startScenario(work, spec, context, false)));
        for (const s of started) if (s.status === 'fulfilled') scenarios.push(s.value);
        const failed = started.find((s): s is PromiseRejectedResult => s.status === 'rejected');
        if (failed) throw failed.reason;
      }, 60_000);

      afterAll(async () => {
        await Promise.allSettled(scenarios.map((s) => s.stop()));
        scenarios = [];
        await statsd?.close();
        runs.push({
          version,
          commit: recording.data.release.commit,
          source: { kind: 'recording', file: recording.shown, recorded: recording.data.recorded },
          results: book.results,
        });
        await pki?.cleanup();
        if (work) await rm(work, { recursive: true, force: true });
      }, 60_000);

      test('every endpoint, method and near-miss path; each client certificate; details; health checkers', async () => {
        const groups = groupsOf((e) => isHttpCase(e.case) && e.case.group !== generatedGroup);
        await perScenario(groups, (s, g) =>
          compareHttpCases(
            book,
            (c) => Promise.resolve(recorded(c).fabric),
            s.pair(g.kind).oursTarget,
            g.entries.map((e) => e.case as HttpCase),
          ),
        );
      }, 180_000);

      test('PUT /logspec with the recorded generated bodies: accept/refuse and the spec read back', async () => {
        const groups = groupsOf((e) => e.case.group === generatedGroup);
        await perScenario(groups, (s, g) =>
          compareGenerated(
            book,
            {
              start: () => Promise.resolve(),
              answer: (c) => Promise.resolve(recorded(c).fabric as HttpAnswer),
              // Fabric went on from info where the live suite set it back, else from its own spec.
              baselineAfter: (c, f) => Promise.resolve(recorded(c).resetAfter === true ? 'info' : (f.state ?? 'info')),
            },
            s.pair(g.kind).oursTarget,
            g.entries.map((e) => e.case as HttpCase),
            problems,
          ),
        );
      }, 120_000);

      test("/metrics: the service's own families after the recorded request sequence", async () => {
        const groups = groupsOf((e) => e.case.group === metricsGroup);
        await perScenario(groups, async (s, g) => {
          const ours = await observeMetrics(s.pair(g.kind).oursTarget, g.kind);
          for (const e of g.entries) {
            const fact = ours.get(e.case.id);
            if (fact) book.record(e.case, e.fabric, fact.value);
            else problems.push(`${e.case.id}: recorded, but the replay computes no such fact`);
          }
          for (const id of ours.keys()) if (!fabricOf.has(id)) problems.push(`${id}: not in the recording (record again)`);
        });
      });

      test('StatsD: bucket names and types fabric-ops pushes, against the buckets Fabric pushed', async () => {
        const groups = groupsOf((e) => e.case.group === statsdGroup);
        const on = [...new Set(groups.map((g) => g.on))];
        await Promise.all(on.flatMap((name) => scenario(name).pairs.map((p) => metricsSequence(p.oursTarget))));
        await letStatsdFlush();
        for (const g of groups) {
          const ours = summariseStatsd(statsd.lines, statsdPrefix(g.kind));
          if (ours.size === 0) throw new Error(`no StatsD line from fabric-ops (${g.kind} dialect) under ${statsdPrefix(g.kind)}`);
          const fabric = statsdSummaryFromFacts(
            g.kind,
            g.entries.map((e) => ({ case: e.case as FactCase, fabric: e.fabric })),
          );
          const facts = statsdFacts(g.kind, fabric, ours);
          const ids = new Set(facts.map(([c]) => c.id));
          for (const e of g.entries) if (!ids.has(e.case.id)) problems.push(`${e.case.id}: recorded, but the replay computes no such fact`);
          for (const [c, f, o] of facts) book.record(c, fabricOf.get(c.id)?.fabric ?? f, o);
        }
      });

      test('configuration: the recorded environment overrides, refused or served as Fabric did', async () => {
        const configured = entries.filter((e) => e.on === 'configuration');
        const specs = new Map(recording.data.configCases.map((cc) => [cc.id, cc]));
        const outcomes = await inPool(configured, 3, async (e, index) => {
          const cc = specs.get(e.case.id);
          if (!cc) throw new Error(`${recording.shown}: no configuration case ${e.case.id}`);
          const config = await writeConfigCase(work, index, cc, pki, sampleconfig());
          return { cc, fabric: e.fabric, ours: await oursOutcome(config, cc, pki) };
        });
        for (const { cc, fabric, ours } of outcomes) book.record(configFact(cc), fabric, { kind: 'value', value: ours } satisfies Answer);
      }, 120_000);

      test('no difference outside the deviation table; every deviation that applies to this release exercised; every recorded case replayed', () => {
        const done = new Set(book.results.map((r) => r.case.id));
        const unreplayed = entries.filter((e) => !done.has(e.case.id)).map((e) => `${e.case.id}: recorded but not replayed`);
        expect(runProblems(book, version, [...problems, ...unreplayed])).toEqual([]);
      });
    },
  );

  describe('the report', () => {
    test(`docs/compatibility.md is what the recordings render (${found.recordings.map((r) => r.shown).join(', ')})`, () => {
      if (found.superseded.length > 0) console.warn(`compat replay: not used, a recording of the same release was found first: ${found.superseded.join(', ')}`);
      expect(runs.map((run) => run.version)).toEqual(found.recordings.map((r: LoadedRecording) => r.data.release.version));
      const rendered = renderReport({ runs, deviations, generatedGroups: new Set([generatedGroup]), setup: [...reportSetup] });
      expect({ errors: found.errors, report: reportProblems(rendered) }).toEqual({ errors: [], report: [] });
    });
  });
}

describe(deviationsPage, () => {
  test('its deviations section is what deviations.ts renders (COMPAT_WRITE=1 rewrites it)', () => {
    const section = renderDeviationsSection(deviations);
    const page = readFileSync(deviationsFile, 'utf8');
    if (write && !page.includes(section)) writeFileSync(deviationsFile, replaceDeviationsSection(page, section));
    expect(
      readFileSync(deviationsFile, 'utf8').includes(section)
        ? []
        : [`the deviations section of ${deviationsPage} differs from deviations.ts: run \`make compat\` or COMPAT_WRITE=1 on this test`],
    ).toEqual([]);
  });
});

// ---------------------------------------------------------------------------------------------
// Always: the real nodes recorded in ../shared/fixtures/fabric-recorded (README.md there).

const fabricRecorded = path.resolve(root, '../shared/fixtures/fabric-recorded');
const recordedReleases = ['2.5.12', '3.0.0', '3.1.5'];

interface RecordedNode {
  name: string;
  org: string;
  dialect: NodeKind;
  tlsCertFile: string;
}

/** How a /healthz `time` is written: RFC 3339, UTC or an offset, with or without fractional seconds (their digits vary: Go drops trailing zeros). */
function timeFormat(value: unknown): string {
  if (typeof value !== 'string') return `not a string (${typeof value})`;
  const match = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/.exec(value);
  if (!match || Number.isNaN(Date.parse(value))) return `not RFC 3339: ${JSON.stringify(value)}`;
  return `RFC 3339, ${match[2] === 'Z' ? 'UTC (Z)' : 'with an offset'}, ${match[1] ? 'fractional seconds' : 'whole seconds'}`;
}

function readJson(file: string): unknown {
  return JSON.parse(readFileSync(file, 'utf8')) as unknown;
}

describe("fabric-ops on each recorded release's sampleconfig, operations TLS on, answers as that release's real nodes did", () => {
  let pki: TestPki;
  let tmp: string;

  beforeAll(async () => {
    [pki, tmp] = await Promise.all([createTestPki(), mkdtemp(path.join(os.tmpdir(), 'compat-fabric-recorded-'))]);
  });

  afterAll(async () => {
    await pki?.cleanup();
    if (tmp) await rm(tmp, { recursive: true, force: true });
  });

  test(`${path.relative(root, fabricRecorded)} holds ${recordedReleases.join(', ')}`, () => {
    expect(readdirSync(fabricRecorded).filter((name) => /^\d+\.\d+\.\d+$/.test(name))).toEqual(expect.arrayContaining(recordedReleases));
  });

  test.each(recordedReleases.flatMap((release) => (['peer', 'orderer'] as const).map((kind) => [release, kind] as const)))(
    'Fabric %s, %s dialect: GET /logspec as recorded; /version and /healthz in the recorded shape',
    async (release, kind) => {
      const dir = path.join(fabricRecorded, release);
      const node = (readJson(path.join(dir, 'nodes.json')) as RecordedNode[]).find((n) => n.dialect === kind);
      if (!node) throw new Error(`${dir}/nodes.json has no ${kind}`);
      // The release's own core.yaml / orderer.yaml, as the live suite uses them (writable paths and ports moved),
      // with operations TLS on: the node's TLS certificate (as the recorded network), its org's operations CA for clients.
      const sampleconfig = path.join(tmp, `sampleconfig-${release}-${kind}`);
      mkdirSync(sampleconfig);
      const file = kind === 'peer' ? 'core.yaml' : 'orderer.yaml';
      writeFileSync(path.join(sampleconfig, file), readFileSync(path.join(dir, 'sampleconfig', file)));
      const tlsDir = path.dirname(path.join(dir, node.tlsCertFile));
      const opsCa = path.join(dir, 'ops', node.org, 'ca.crt');
      const config = await writeNodeConfig(path.join(tmp, `${release}-${kind}`), {
        kind,
        sampleconfig,
        tls: { cert: path.join(tlsDir, 'server.crt'), key: path.join(tlsDir, 'server.key'), clientAuthRequired: false, clientRootCAs: [opsCa] },
        vmEndpoint: '',
        generalTls: { cert: path.join(tlsDir, 'server.crt'), key: path.join(tlsDir, 'server.key'), rootCA: path.join(tlsDir, 'ca.crt') },
      });
      // An operator certificate from the org's recorded operations CA, issued now (the recorded one expires a month after recording).
      const caKey = path.join(dir, 'ops', node.org, 'ca.key');
      const operator = await pki.issue(
        `operator-${release}-${kind}`,
        { cert: opsCa, key: caKey, certPem: readFileSync(opsCa, 'utf8'), keyPem: readFileSync(caKey, 'utf8') },
        { usage: 'client', cn: 'operator' },
      );
      let ours: OperationsSystem | undefined;
      try {
        ours = await startOurs(config, {});
        const target: Target = {
          port: ours.address.port,
          tls: {
            ca: readFileSync(path.join(tlsDir, 'ca.crt'), 'utf8'),
            clients: { trusted: operator, untrusted: pki.untrustedClient, expired: pki.expiredClient },
          },
        };
        const get = async (p: string): Promise<{ status: number; body: unknown }> => {
          const answer = await send(target, { method: 'GET', path: p, client: 'trusted' });
          return { status: answer.status, body: JSON.parse(answer.body) as unknown };
        };
        const recordedAt = (name: string): unknown => readJson(path.join(dir, 'nodes', node.name, name));
        const [logspec, version, health] = [await get('/logspec'), await get('/version'), await get('/healthz')];
        const recordedHealth = recordedAt('healthz.json') as { time?: unknown };
        expect({
          logspec,
          version: { status: version.status, shape: jsonShape(version.body) },
          healthz: { status: health.status, shape: jsonShape(health.body), time: timeFormat((health.body as { time?: unknown }).time) },
        }).toEqual({
          logspec: { status: 200, body: recordedAt('logspec.json') },
          version: { status: 200, shape: jsonShape(recordedAt('version.json')) },
          healthz: { status: 200, shape: jsonShape(recordedHealth), time: timeFormat(recordedHealth.time) },
        });
      } finally {
        await ours?.stop(500);
      }
    },
  );
});
