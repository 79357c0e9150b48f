import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { FabricStartError, killAllFabricNodes, makeFabricWorkDir, startFabricNode, type NodeConfig } from '../../support/fabric-reference';
import { createTestPki, type TestPki } from '../../support/pki';
import { putAndRead, putSpec, runCase, send } from '../../compat/client';
import { deviations } from '../../compat/deviations';
import { startScenario, type Scenario } from '../../compat/harness';
import { StatsdListener, udpPortsOf } from '../../compat/metrics';
import { Recorder, writeRecording } from '../../compat/recording';
import { compatReleaseHomes, releaseLine } from '../../compat/releases';
import { deviationsPage, renderDeviationsSection, renderReport, replaceDeviationsSection, type ReleaseRun } from '../../compat/report';
import {
  compareGenerated,
  compareHttpCases,
  configCaseSpecs,
  configEnv,
  configFact,
  dockerScenarios,
  generatedCases,
  generatedGroup,
  generatedPerOrderer,
  generatedPerPeer,
  httpCasesOf,
  inPool,
  letStatsdFlush,
  metricsSequence,
  observe,
  observeMetrics,
  oursOutcome,
  reportSetup,
  runProblems,
  scenarioSpecs,
  statsdFacts,
  statsdPrefix,
  summariseStatsd,
  tlsScenarios,
  writeConfigCase,
  type ConfigCaseSpec,
} from '../../compat/suite';
import { ResultBook } from '../../compat/verdict';
import { delay } from '../../support/wait';

/**
 * The differential suite, live (opt-in: real Fabric binaries): the same requests to the real Fabric
 * peer and orderer and to fabric-ops on the same configuration; differences must be listed in
 * test/compat/deviations.ts. It runs once per release (FABRIC_HOMES, else FABRIC_HOME, else peer on
 * the PATH: test/compat/releases.ts), one after another. Without a release it fails at once with
 * `OPT-IN SUITE CANNOT RUN: ...`.
 *
 * - `COMPAT_RECORD=<dir>` (`make compat-record`): writes each release's Fabric answers to
 *   `<dir>/fabric-<version>.json` (test/compat/recording.ts), which the replay in `make test`
 *   (test/compat/replay.test.ts) compares fabric-ops with, and renders docs/compatibility.md from.
 * - `COMPAT_WRITE=1` (`make compat`, `make compat-record`): rewrites the deviations section of docs/reference/deviations.md.
 * - Always: this run's side-by-side report to `.tmp/compat/compatibility-live.md` (docs/compatibility.md
 *   is the recordings' rendering, not a live run's).
 *
 * What is compared, and how, is test/compat/suite.ts: the same code as the replay's, with the real
 * node as the Fabric side.
 */

const root = path.resolve(__dirname, '../../..');
const write = process.env.COMPAT_WRITE === '1';
const recordDir = process.env.COMPAT_RECORD !== undefined && process.env.COMPAT_RECORD !== '' ? path.resolve(root, process.env.COMPAT_RECORD) : null;
const liveReport = path.join(root, '.tmp/compat/compatibility-live.md');
const deviationsFile = path.join(root, deviationsPage);

const homes = compatReleaseHomes();
const runs: ReleaseRun[] = [];
const startedAt = new Date();
let pki: TestPki;
let work: { dir: string; cleanup(): Promise<void> };
// The release under test (the describe.each below runs them one after another).
let home = '';
let releaseDir = '';
let book = new ResultBook(deviations, 'none');
let recorder = new Recorder();
let problems: string[] = [];
let scenarios: Scenario[] = [];
let statsd: StatsdListener | null = null;
let fabricVersion = { Version: 'unknown', CommitSHA: 'unknown' };

function scenario(name: string): Scenario {
  const found = scenarios.find((s) => s.name === name);
  if (!found) throw new Error(`scenario ${name} did not start`);
  return found;
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
  problems = [];
  recorder = new Recorder();
  // One StatsD listener per release: lines a stopped release sent must not count as ours.
  statsd = await StatsdListener.start();
  const context = { pki, source: { home }, statsdAddress: `127.0.0.1:${statsd.port}` };
  const started = await Promise.allSettled(scenarioSpecs.map((spec) => startScenario(releaseDir, spec, context, true)));
  for (const s of started) if (s.status === 'fulfilled') scenarios.push(s.value);
  const failed = started.find((s): s is PromiseRejectedResult => s.status === 'rejected');
  if (failed) throw failed.reason;
  const version = await send(scenario('TLS off').fabricTarget('peer'), { method: 'GET', path: '/version' });
  fabricVersion = JSON.parse(version.body) as typeof fabricVersion;
  book = new ResultBook(deviations, releaseLine(fabricVersion.Version));
}

async function stopRelease(): Promise<void> {
  await Promise.allSettled(scenarios.map((s) => s.stop()));
  await killAllFabricNodes();
  await statsd?.close();
  statsd = null;
  runs.push({
    version: fabricVersion.Version,
    commit: fabricVersion.CommitSHA,
    source: { kind: 'live', date: startedAt.toISOString().slice(0, 10) },
    results: book.results,
  });
  if (recordDir) record(recordDir);
}

/** The ids every complete run records (the StatsD facts depend on what was sent: one per node at least). */
function expectedIds(): string[] {
  const ids = scenarioSpecs.flatMap((spec) =>
    ['TLS off', ...tlsScenarios, ...dockerScenarios].includes(spec.name) ? spec.nodes.flatMap((kind) => httpCasesOf(spec.name, kind).map((c) => c.id)) : [],
  );
  const generated = (['peer', 'orderer'] as const).flatMap((kind) => generatedCases(kind).map((c) => c.id));
  return [...ids, ...generated, ...configCaseSpecs().map((cc) => cc.id), `StatsD/peer: fabric_version bucket`, `StatsD/orderer: fabric_version bucket`];
}

/**
 * Writes the release's recording (COMPAT_RECORD), whatever fabric-ops' verdicts: a recording holds
 * Fabric's answers, which the replay judges fabric-ops against. A run that did not reach every case
 * (a test failed half-way) is not recorded: this afterAll fails, naming what is missing.
 */
function record(dir: string): void {
  const done = new Set(book.results.map((r) => r.case.id));
  const missing = expectedIds().filter((id) => !done.has(id));
  const metrics = book.results.filter((r) => r.case.group === '/metrics').length;
  if (missing.length > 0 || metrics === 0) {
    throw new Error(
      `compat: Fabric ${fabricVersion.Version} not recorded: the run did not reach ${missing.length} cases (first: ${missing.slice(0, 3).join('; ')})${metrics === 0 ? ' nor /metrics' : ''}`,
    );
  }
  const file = writeRecording(
    dir,
    recorder.build({
      release: { version: fabricVersion.Version, commit: fabricVersion.CommitSHA, folder: path.basename(home) },
      recorded: new Date(),
      sampleconfig: {
        core: readFileSync(path.join(home, 'sampleconfig/core.yaml'), 'utf8'),
        orderer: readFileSync(path.join(home, 'sampleconfig/orderer.yaml'), 'utf8'),
      },
      scenarios: scenarioSpecs,
      configCases: configCaseSpecs(),
      results: book.results,
      repositoryRoot: root,
    }),
  );
  console.log(`compat: recorded Fabric ${fabricVersion.Version} in ${path.relative(root, file)}`);
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
      await Promise.all(s.pairs.map((p) => compareHttpCases(book, (c) => runCase(s.fabricTarget(p.kind), c), p.oursTarget, httpCasesOf(s.name, p.kind))));
    });

    test.each(tlsScenarios)('%s: no, trusted, untrusted and expired client certificates; plain HTTP', async (name) => {
      const s = scenario(name);
      await Promise.all(s.pairs.map((p) => compareHttpCases(book, (c) => runCase(s.fabricTarget(p.kind), c), p.oursTarget, httpCasesOf(s.name, p.kind))));
    });

    test.each(dockerScenarios)('%s', async (name) => {
      const s = scenario(name);
      await compareHttpCases(book, (c) => runCase(s.fabricTarget('peer'), c), s.pair('peer').oursTarget, httpCasesOf(name, 'peer'));
    });
  });

  describe('PUT /logspec with generated bodies', () => {
    test(`${generatedPerPeer} bodies on the peer, ${generatedPerOrderer} on the orderer: accept/refuse and the spec read back`, async () => {
      const s = scenario('TLS off');
      await Promise.all(
        s.pairs.map((p) => {
          const fabric = s.fabricTarget(p.kind);
          return compareGenerated(
            book,
            {
              start: () => putSpec(fabric, 'info'),
              answer: (c) => putAndRead(fabric, c.body ?? ''),
              async baselineAfter(c, f, o) {
                // Keep one difference from spilling into the next case: both start again from info.
                const reset = f.state !== o.state;
                if (reset) await putSpec(fabric, 'info');
                recorder.noteReset(c, reset);
                return reset ? 'info' : (f.state ?? 'info');
              },
            },
            p.oursTarget,
            generatedCases(p.kind),
            problems,
          );
        }),
      );
      expect(book.results.filter((r) => r.case.group === generatedGroup)).toHaveLength(generatedPerPeer + generatedPerOrderer);
    }, 120_000);
  });

  describe('metrics', () => {
    test("/metrics: the service's own families (names, types, label names, values after the same requests)", async () => {
      const s = scenario('metrics');
      for (const p of s.pairs) {
        const [fabric, ours] = await Promise.all([observeMetrics(s.fabricTarget(p.kind), p.kind), observeMetrics(p.oursTarget, p.kind)]);
        for (const [id, fact] of fabric) {
          const oursFact = ours.get(id);
          if (!oursFact) throw new Error(`no fact ${id} for fabric-ops`);
          book.record(fact.case, fact.value, oursFact.value);
        }
      }
    });

    test('StatsD: bucket names and types pushed to one UDP listener (peer0. and orderer0. prefixes)', async () => {
      const s = scenario('StatsD');
      const listener = statsd;
      if (!listener) throw new Error('no StatsD listener');
      await Promise.all(s.pairs.flatMap((p) => [metricsSequence(s.fabricTarget(p.kind)), metricsSequence(p.oursTarget)]));
      await letStatsdFlush();
      // Which process sent a datagram: the Fabric nodes' UDP ports, from /proc; the rest is ours.
      const fabricPorts = new Set(s.pairs.flatMap((p) => [...udpPortsOf(p.fabric?.pid ?? -1)]));
      for (const p of s.pairs) {
        const fabric = summariseStatsd(listener.from(fabricPorts, 'these'), statsdPrefix(p.kind));
        const ours = summariseStatsd(listener.from(fabricPorts, 'others'), statsdPrefix(p.kind));
        if (fabric.size === 0) throw new Error(`no StatsD line from the Fabric ${p.kind} under ${statsdPrefix(p.kind)}`);
        if (ours.size === 0) throw new Error(`no StatsD line from fabric-ops (${p.kind} dialect) under ${statsdPrefix(p.kind)}`);
        for (const [c, f, o] of statsdFacts(p.kind, fabric, ours)) book.record(c, f, o);
      }
    });
  });

  describe('configuration', () => {
    test('the same environment overrides give the same behaviour; what Fabric refuses at start is refused', async () => {
      const cases = configCaseSpecs();
      const outcomes = await inPool(cases, 3, async (cc, index) => {
        const config = await writeConfigCase(releaseDir, index, cc, pki, { home });
        return Promise.all([fabricOutcome(config, cc), oursOutcome(config, cc, pki)]);
      });
      for (const [index, cc] of cases.entries()) {
        const [fabric, ours] = outcomes[index] ?? ['not run', 'not run'];
        book.record(configFact(cc), { kind: 'value', value: fabric }, { kind: 'value', value: ours });
      }
    }, 120_000);
  });

  async function fabricOutcome(config: NodeConfig, cc: ConfigCaseSpec): Promise<string> {
    let node;
    try {
      node = await startFabricNode({ config, env: configEnv(cc, pki), readyTimeoutMs: 20_000 });
    } catch (error) {
      if (error instanceof FabricStartError) return 'refused at start';
      throw error;
    }
    try {
      // A node that refuses its configuration may exit just after its ready line: given the chance.
      await delay(100);
      if (node.child.exitCode !== null) return 'refused at start';
      return `starts; ${await observe(cc.observe, node.port, pki)}`;
    } finally {
      node.child.kill('SIGKILL');
      await node.exited;
    }
  }

  test('no difference outside the deviation table; every deviation that applies to this release exercised', () => {
    expect(runProblems(book, fabricVersion.Version, problems)).toEqual([]);
  });
});

describe('the live report', () => {
  test(`every release ran; this run's report is in ${path.relative(root, liveReport)}${write ? `; the deviations section of ${deviationsPage} rewritten` : ''}`, () => {
    expect(runs.map((run) => run.version)).toHaveLength(homes.length);
    const report = renderReport({ runs, deviations, generatedGroups: new Set([generatedGroup]), setup: [...reportSetup] });
    mkdirSync(path.dirname(liveReport), { recursive: true });
    writeFileSync(liveReport, report);
    const section = renderDeviationsSection(deviations);
    const page = readFileSync(deviationsFile, 'utf8');
    if (write) {
      const updated = replaceDeviationsSection(page, section);
      if (updated !== page) writeFileSync(deviationsFile, updated);
    }
    expect(
      readFileSync(deviationsFile, 'utf8').includes(section)
        ? []
        : [`the deviations section of ${deviationsPage} differs from deviations.ts: run \`make compat\``],
    ).toEqual([]);
  });
});
