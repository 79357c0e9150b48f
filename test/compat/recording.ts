import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { NodeKind } from '../support/fabric-reference';
import type { ScenarioSpec } from './harness';
import { methods, isHttpCase, type Answer, type AnyCase, type CaseResult, type FactCase, type HttpAnswer, type HttpCase } from './model';
import { ordered } from './report';
import { generatedGroup, scenarioOfGroup, type ConfigCaseSpec } from './suite';

/**
 * A recording: what the real Fabric nodes of one release answered to every case of the live suite
 * (test/real/compat/compat.test.ts, `make compat-record`), with what each case ran under (the
 * scenario or configuration case, the release's sampleconfig), so that the replay
 * (test/compat/replay.test.ts) can start fabric-ops alone on the same configuration, send it the same
 * cases and judge its answers against the recorded ones with the live suite's verdict.
 *
 * One JSON file per release, `fabric-<version>.json`, one case per line (formatRecording; not
 * Prettier's layout, which would spread each case over a dozen lines):
 * - `release` (what /version answered), `recorded` (when), `recordedWith` (the fabric-ops checkout that
 *   ran the recording; its answers are not recorded), `sampleconfig` (the release's core.yaml and
 *   orderer.yaml, line by line), `scenarios` and `configCases` (each configuration a case runs under);
 * - `cases`: blocks of one scenario (`on`; `configuration`: the configuration case of the same id),
 *   group and node kind, each case with its id, the request as sent (`transport` native and
 *   `checkState` false left out) and `fabric`, Fabric's answer as the suite reduces it (status, media
 *   type, body shape, X-Request-Id kind, the spec read back; `raw`, the body itself of error answers, is
 *   for the reader and never compared);
 * - `generated`: the generated PUT /logspec bodies (thousands: the point of the suite), per node kind
 *   one row each, in the order sent (the row's position is the id's last part): category (index into
 *   `categories`), body, answer (index into `answers`), the spec read back (null: unchanged, still
 *   the spec the body was sent to) and whether the live suite set Fabric's spec back to info after it;
 * - ordering: the report's (group, then peer before orderer, then as sent). The PKI is not recorded:
 *   cases name a client certificate (`none`, `trusted`, `untrusted`, `expired`) and configuration cases
 *   `{{clientCA}}` / `{{untrustedCA}}`, which the replay takes from a fresh PKI of the same shape.
 */

export const recordingFormat = 'fabric-ops compat recording';
export const recordingFormatVersion = 1;
/** A recording larger than this is refused when written: a case list that grew by mistake, not data. */
export const maxRecordingBytes = 3 * 1024 * 1024;

/** A case as a recording holds it: group and node are its block's; transport native and checkState false are left out. */
export type RecordedCaseLine = { fabric: Answer } & (
  (Omit<HttpCase, 'group' | 'node' | 'transport' | 'checkState'> & Partial<Pick<HttpCase, 'transport' | 'checkState'>>) | Omit<FactCase, 'group' | 'node'>
);

export interface CaseBlock {
  on: string;
  group: string;
  node: NodeKind;
  cases: RecordedCaseLine[];
}

export const generatedColumns = ['category', 'body', 'answer', 'state', 'resetAfter'] as const;
/** category index, body, answer index, spec read back (null: unchanged), set back to info after it (1) or not (0). */
export type GeneratedRow = [number, string, number, string | null, 0 | 1];
type GeneratedAnswer = Omit<HttpAnswer, 'state' | 'raw'>;

export interface GeneratedBlock {
  on: string;
  group: string;
  node: NodeKind;
  /** What every row's request shares; a row adds its body (and category). */
  request: Pick<HttpCase, 'method' | 'path' | 'client' | 'headers' | 'transport' | 'checkState'>;
  categories: string[];
  answers: GeneratedAnswer[];
  columns: readonly string[];
  rows: GeneratedRow[];
}

export interface RecordingFile {
  format: typeof recordingFormat;
  formatVersion: typeof recordingFormatVersion;
  release: { version: string; commit: string; folder: string };
  /** When the answers were recorded (ISO 8601, UTC). */
  recorded: string;
  recordedWith: { fabricOps: string; commit: string };
  sampleconfig: { 'core.yaml': string[]; 'orderer.yaml': string[] };
  scenarios: ScenarioSpec[];
  configCases: ConfigCaseSpec[];
  cases: CaseBlock[];
  generated: GeneratedBlock[];
}

/** One recorded case, generated ones included, as the replay uses it. */
export interface RecordedEntry {
  on: string;
  case: AnyCase;
  fabric: Answer;
  /** Generated cases: whether the live suite set Fabric's spec back to info after this case. */
  resetAfter?: boolean;
}

export interface LoadedRecording {
  /** Absolute path. */
  file: string;
  /** As the report shows it: relative to the repository root. */
  shown: string;
  data: RecordingFile;
  entries: RecordedEntry[];
}

export function recordingFileName(version: string): string {
  return `fabric-${version}.json`;
}

// ---------------------------------------------------------------------------------------------
// Writing (the live suite)

/** The answer as recorded: the body itself only for error answers (their text), which nothing compares. */
function recordedAnswer(answer: Answer): Answer {
  if (answer.kind !== 'http') return answer;
  const { raw, ...rest } = answer;
  return raw !== undefined && raw !== '' && answer.status >= 400 ? { ...rest, raw } : rest;
}

function caseLine(c: AnyCase, fabric: Answer): RecordedCaseLine {
  const line: Record<string, unknown> = { ...c };
  delete line.group;
  delete line.node;
  if (line.transport === 'native') delete line.transport;
  if (line.checkState === false) delete line.checkState;
  return { ...(line as Omit<RecordedCaseLine, 'fabric'>), fabric: recordedAnswer(fabric) } as RecordedCaseLine;
}

/** Collects what the live suite needs to record beside its results. */
export class Recorder {
  private readonly resets = new Map<string, boolean>();

  noteReset(c: HttpCase, reset: boolean): void {
    this.resets.set(c.id, reset);
  }

  build(options: {
    release: RecordingFile['release'];
    recorded: Date;
    sampleconfig: { core: string; orderer: string };
    scenarios: readonly ScenarioSpec[];
    configCases: readonly ConfigCaseSpec[];
    results: readonly CaseResult[];
    repositoryRoot: string;
  }): RecordingFile {
    const blocks: CaseBlock[] = [];
    const generated = new Map<NodeKind, GeneratedBlock & { baseline: string }>();
    for (const r of ordered(options.results)) {
      const c = r.case;
      if (isHttpCase(c) && c.group === generatedGroup) {
        const f = r.fabric;
        if (f.kind !== 'http' || f.state === undefined)
          throw new Error(`${c.id}: a generated case's Fabric answer must be an HTTP answer with the spec read back`);
        const reset = this.resets.get(c.id);
        if (reset === undefined) throw new Error(`${c.id}: the live suite did not say whether Fabric's spec was set back after it`);
        const block = generated.get(c.node) ?? {
          on: scenarioOfGroup(c.group),
          group: c.group,
          node: c.node,
          request: { method: c.method, path: c.path, client: c.client, headers: c.headers, transport: c.transport, checkState: c.checkState },
          categories: [],
          answers: [],
          columns: generatedColumns,
          rows: [],
          baseline: 'info',
        };
        generated.set(c.node, block);
        if (c.id !== `${c.group}/${c.node}/${block.rows.length}`)
          throw new Error(`${c.id}: generated cases must be recorded in the order sent (expected row ${block.rows.length})`);
        const answer: GeneratedAnswer = { kind: 'http', status: f.status, contentType: f.contentType, body: f.body, requestId: f.requestId };
        const indexOf = <T>(list: T[], item: T): number => {
          const at = list.findIndex((candidate) => JSON.stringify(candidate) === JSON.stringify(item));
          return at >= 0 ? at : list.push(item) - 1;
        };
        block.rows.push([
          indexOf(block.categories, c.category ?? ''),
          c.body ?? '',
          indexOf(block.answers, answer),
          f.state === block.baseline ? null : f.state,
          reset ? 1 : 0,
        ]);
        block.baseline = reset ? 'info' : f.state;
        continue;
      }
      const on = scenarioOfGroup(c.group);
      const last = blocks.at(-1);
      if (last && last.on === on && last.group === c.group && last.node === c.node) last.cases.push(caseLine(c, r.fabric));
      else blocks.push({ on, group: c.group, node: c.node, cases: [caseLine(c, r.fabric)] });
    }
    const lines = (text: string): string[] => text.split('\n');
    return {
      format: recordingFormat,
      formatVersion: recordingFormatVersion,
      release: options.release,
      recorded: options.recorded.toISOString().replace(/\.\d{3}Z$/, 'Z'),
      recordedWith: fabricOpsCheckout(options.repositoryRoot),
      sampleconfig: { 'core.yaml': lines(options.sampleconfig.core), 'orderer.yaml': lines(options.sampleconfig.orderer) },
      scenarios: [...options.scenarios],
      configCases: [...options.configCases],
      cases: blocks,
      generated: [...generated.values()].sort((a, b) => (a.node === b.node ? 0 : a.node === 'peer' ? -1 : 1)).map(({ baseline: _baseline, ...block }) => block),
    };
  }
}

function fabricOpsCheckout(root: string): RecordingFile['recordedWith'] {
  const { version } = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { version: string };
  let commit = 'unknown';
  try {
    commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: root, encoding: 'utf8' }).trim();
  } catch {
    // not a git checkout
  }
  return { fabricOps: version, commit };
}

/** The file's text: JSON, one case (row, line of a sampleconfig, scenario) per line, keys in a fixed order. */
export function formatRecording(r: RecordingFile): string {
  const j = (value: unknown): string => JSON.stringify(value);
  const list = (items: readonly unknown[], indent: string, item: (value: unknown) => string = j): string =>
    items.length === 0 ? '[]' : `[\n${items.map((value) => `${indent}  ${item(value)}`).join(',\n')}\n${indent}]`;
  const out = [
    '{',
    `  "format": ${j(r.format)},`,
    `  "formatVersion": ${j(r.formatVersion)},`,
    `  "release": ${j(r.release)},`,
    `  "recorded": ${j(r.recorded)},`,
    `  "recordedWith": ${j(r.recordedWith)},`,
    '  "sampleconfig": {',
    `    "core.yaml": ${list(r.sampleconfig['core.yaml'], '    ')},`,
    `    "orderer.yaml": ${list(r.sampleconfig['orderer.yaml'], '    ')}`,
    '  },',
    `  "scenarios": ${list(r.scenarios, '  ')},`,
    `  "configCases": ${list(r.configCases, '  ')},`,
    `  "cases": ${list(r.cases, '  ', (value) => {
      const { cases, ...block } = value as CaseBlock;
      return `${j(block).slice(0, -1)}, "cases": ${list(cases, '    ')}}`;
    })},`,
    `  "generated": ${list(r.generated, '  ', (value) => {
      const { rows, ...block } = value as GeneratedBlock;
      return `${j(block).slice(0, -1)}, "rows": ${list(rows, '    ')}}`;
    })}`,
    '}',
    '',
  ];
  return out.join('\n');
}

/** Writes `<dir>/fabric-<version>.json`, after checking that it is within bounds and loads back. */
export function writeRecording(dir: string, recording: RecordingFile): string {
  const file = path.join(dir, recordingFileName(recording.release.version));
  const text = formatRecording(recording);
  if (Buffer.byteLength(text) > maxRecordingBytes) {
    throw new Error(`${file}: the recording is ${Buffer.byteLength(text)} bytes, over the ${maxRecordingBytes} the format allows (recording.ts)`);
  }
  parseRecording(file, text);
  mkdirSync(dir, { recursive: true });
  writeFileSync(file, text);
  return file;
}

// ---------------------------------------------------------------------------------------------
// Reading (the replay)

class RecordingError extends Error {}

function check(condition: boolean, file: string, where: string, what: string): asserts condition {
  if (!condition) throw new RecordingError(`${file}: ${where}: ${what}`);
}

const isString = (v: unknown): v is string => typeof v === 'string';
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isStringRecord = (v: unknown): v is Record<string, string> => isObject(v) && Object.values(v).every(isString);
const nodeKinds: readonly unknown[] = ['peer', 'orderer'];
const clientCerts: readonly unknown[] = ['none', 'trusted', 'untrusted', 'expired'];

function checkAnswer(value: unknown, file: string, where: string): asserts value is Answer {
  check(isObject(value), file, where, 'an answer must be an object');
  switch (value.kind) {
    case 'http':
      check(Number.isInteger(value.status), file, `${where}.status`, 'must be an integer');
      check(value.contentType === null || isString(value.contentType), file, `${where}.contentType`, 'must be a string or null');
      check(isString(value.body), file, `${where}.body`, 'must be a string');
      check(isString(value.requestId), file, `${where}.requestId`, 'must be a string');
      check(value.state === undefined || isString(value.state), file, `${where}.state`, 'must be a string when present');
      check(value.raw === undefined || isString(value.raw), file, `${where}.raw`, 'must be a string when present');
      return;
    case 'tls-refused':
    case 'no-answer':
      check(isString(value.detail), file, `${where}.detail`, 'must be a string');
      return;
    case 'value':
      check(isString(value.value), file, `${where}.value`, 'must be a string');
      return;
    default:
      check(false, file, `${where}.kind`, `unknown answer kind ${JSON.stringify(value.kind)}`);
  }
}

function checkCase(value: unknown, file: string, where: string): asserts value is AnyCase {
  check(isObject(value), file, where, 'a case must be an object');
  check(isString(value.id) && value.id !== '', file, `${where}.id`, 'must be a non-empty string');
  check(isString(value.group), file, `${where}.group`, 'must be a string');
  check(nodeKinds.includes(value.node), file, `${where}.node`, 'must be peer or orderer');
  if ('method' in value) {
    check((methods as readonly unknown[]).includes(value.method), file, `${where}.method`, `must be one of ${methods.join(', ')}`);
    check(isString(value.path), file, `${where}.path`, 'must be a string');
    check(clientCerts.includes(value.client), file, `${where}.client`, 'must be none, trusted, untrusted or expired');
    check(value.transport === 'native' || value.transport === 'plain-to-tls', file, `${where}.transport`, 'must be native or plain-to-tls');
    check(typeof value.checkState === 'boolean', file, `${where}.checkState`, 'must be a boolean');
    check(value.body === undefined || isString(value.body), file, `${where}.body`, 'must be a string when present');
    check(value.headers === undefined || isStringRecord(value.headers), file, `${where}.headers`, 'must map names to strings');
  } else {
    check(['metrics', 'statsd', 'config'].includes(value.topic as string), file, `${where}.topic`, 'must be metrics, statsd or config');
  }
}

function checkScenario(value: unknown, file: string, where: string): asserts value is ScenarioSpec {
  check(isObject(value), file, where, 'a scenario must be an object');
  check(isString(value.name), file, `${where}.name`, 'must be a string');
  check(
    Array.isArray(value.nodes) && value.nodes.length > 0 && value.nodes.every((n) => nodeKinds.includes(n)),
    file,
    `${where}.nodes`,
    'must list peer and/or orderer',
  );
  check(['off', 'optional', 'required'].includes(value.tls as string), file, `${where}.tls`, 'must be off, optional or required');
  check(value.vmEndpoint === undefined || isString(value.vmEndpoint), file, `${where}.vmEndpoint`, 'must be a string when present');
  check(value.env === undefined || isStringRecord(value.env), file, `${where}.env`, 'must map names to strings');
  if (value.metrics !== undefined) {
    check(isObject(value.metrics) && isString(value.metrics.provider), file, `${where}.metrics.provider`, 'must be a string');
    const statsd = value.metrics.statsd;
    check(
      statsd === undefined || (isObject(statsd) && isString(statsd.writeInterval) && isString(statsd.prefix)),
      file,
      `${where}.metrics.statsd`,
      'needs writeInterval and prefix',
    );
  }
}

function checkConfigCase(value: unknown, file: string, where: string): asserts value is ConfigCaseSpec {
  check(isObject(value), file, where, 'a configuration case must be an object');
  check(isString(value.id) && isString(value.name), file, `${where}.id`, 'id and name must be strings');
  check(nodeKinds.includes(value.kind), file, `${where}.kind`, 'must be peer or orderer');
  check(isStringRecord(value.env), file, `${where}.env`, 'must map names to strings');
  check(
    ['protocol', 'client-certs', 'healthz-without-cert', 'metrics-status', 'starts'].includes(value.observe as string),
    file,
    `${where}.observe`,
    'unknown',
  );
  check(
    value.tls === undefined || ['off', 'configured-disabled', 'optional', 'required', 'no-roots'].includes(value.tls as string),
    file,
    `${where}.tls`,
    'unknown',
  );
}

/** Parses and checks a recording's text; every error names the file and where in it. */
export function parseRecording(file: string, text: string): { data: RecordingFile; entries: RecordedEntry[] } {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (error) {
    throw new RecordingError(`${file}: not JSON: ${(error as Error).message}`);
  }
  check(isObject(data), file, '(top)', 'must be an object');
  check(data.format === recordingFormat, file, 'format', `must be ${JSON.stringify(recordingFormat)}`);
  check(data.formatVersion === recordingFormatVersion, file, 'formatVersion', `must be ${recordingFormatVersion} (this checkout reads no other)`);
  const release = data.release;
  check(
    isObject(release) && isString(release.version) && /^\d+\.\d+\.\d+/.test(release.version),
    file,
    'release.version',
    'must be a release number like 2.5.12',
  );
  check(isString(release.commit) && isString(release.folder), file, 'release', 'needs commit and folder');
  check(isString(data.recorded) && !Number.isNaN(Date.parse(data.recorded)), file, 'recorded', 'must be an ISO 8601 time');
  check(
    isObject(data.recordedWith) && isString(data.recordedWith.fabricOps) && isString(data.recordedWith.commit),
    file,
    'recordedWith',
    'needs fabricOps and commit',
  );
  const sampleconfig = data.sampleconfig;
  for (const name of ['core.yaml', 'orderer.yaml']) {
    check(
      isObject(sampleconfig) && Array.isArray(sampleconfig[name]) && sampleconfig[name].every(isString),
      file,
      `sampleconfig.${name}`,
      'must be a list of lines',
    );
  }
  check(Array.isArray(data.scenarios), file, 'scenarios', 'must be a list');
  data.scenarios.forEach((s, i) => checkScenario(s, file, `scenarios[${i}]`));
  check(Array.isArray(data.configCases), file, 'configCases', 'must be a list');
  data.configCases.forEach((c, i) => checkConfigCase(c, file, `configCases[${i}]`));
  const scenarios = new Set((data.scenarios as ScenarioSpec[]).map((s) => s.name));
  const configIds = new Set((data.configCases as ConfigCaseSpec[]).map((c) => c.id));
  const entries: RecordedEntry[] = [];
  const ids = new Set<string>();
  const add = (entry: RecordedEntry, where: string): void => {
    check(!ids.has(entry.case.id), file, where, `case id ${JSON.stringify(entry.case.id)} recorded twice`);
    ids.add(entry.case.id);
    if (entry.on === 'configuration')
      check(configIds.has(entry.case.id), file, `${where}.on`, `no configuration case ${JSON.stringify(entry.case.id)} in configCases`);
    else check(scenarios.has(entry.on), file, `${where}.on`, `no scenario ${JSON.stringify(entry.on)} in scenarios`);
    entries.push(entry);
  };
  check(Array.isArray(data.cases), file, 'cases', 'must be a list');
  data.cases.forEach((block: unknown, b) => {
    const where = `cases[${b}]`;
    check(isObject(block) && isString(block.on) && isString(block.group) && nodeKinds.includes(block.node), file, where, 'needs on, group and node');
    check(Array.isArray(block.cases), file, `${where}.cases`, 'must be a list');
    block.cases.forEach((line: unknown, i) => {
      const at = `${where}.cases[${i}]`;
      check(isObject(line), file, at, 'must be an object');
      const { fabric, ...rest } = line;
      const c: Record<string, unknown> = { ...rest, group: block.group, node: block.node };
      if ('method' in c) c.transport ??= 'native';
      if ('method' in c) c.checkState ??= false;
      checkCase(c, file, at);
      checkAnswer(fabric, file, `${at}.fabric`);
      add({ on: block.on as string, case: c, fabric }, at);
    });
  });
  check(Array.isArray(data.generated), file, 'generated', 'must be a list');
  data.generated.forEach((block: unknown, b) => {
    const where = `generated[${b}]`;
    check(isObject(block) && isString(block.group) && isString(block.on) && nodeKinds.includes(block.node), file, where, 'needs group, node and on');
    check(JSON.stringify(block.columns) === JSON.stringify(generatedColumns), file, `${where}.columns`, `must be ${JSON.stringify(generatedColumns)}`);
    const request: unknown = block.request;
    checkCase({ id: 'request', group: block.group, node: block.node, ...(isObject(request) ? request : {}) }, file, `${where}.request`);
    check(Array.isArray(block.categories) && block.categories.every(isString), file, `${where}.categories`, 'must be a list of names');
    check(Array.isArray(block.answers), file, `${where}.answers`, 'must be a list');
    block.answers.forEach((answer: unknown, a) => checkAnswer(answer, file, `${where}.answers[${a}]`));
    const answers = block.answers as Answer[];
    check(
      answers.every((a) => a.kind === 'http'),
      file,
      `${where}.answers`,
      'must be HTTP answers',
    );
    check(Array.isArray(block.rows), file, `${where}.rows`, 'must be a list');
    const node = block.node as NodeKind;
    let baseline = 'info';
    block.rows.forEach((row: unknown, index) => {
      const at = `${where}.rows[${index}]`;
      check(Array.isArray(row) && row.length === generatedColumns.length, file, at, `must have ${generatedColumns.length} columns`);
      const [category, body, answer, state, resetAfter] = row as unknown[];
      const categoryName = (block.categories as string[])[category as number];
      const fabricAnswer = answers[answer as number];
      check(
        categoryName !== undefined && isString(body) && fabricAnswer !== undefined,
        file,
        at,
        'category and answer must index their lists; body must be a string',
      );
      check(state === null || isString(state), file, at, 'state must be a string or null');
      check(resetAfter === 0 || resetAfter === 1, file, at, 'resetAfter must be 0 or 1');
      const spec = state ?? baseline;
      baseline = resetAfter === 1 ? 'info' : spec;
      const c = {
        ...(request as GeneratedBlock['request']),
        id: `${block.group as string}/${node}/${index}`,
        group: block.group as string,
        node,
        body,
        category: categoryName,
      };
      add({ on: block.on as string, case: c, fabric: { ...fabricAnswer, state: spec }, resetAfter: resetAfter === 1 }, at);
    });
  });
  return { data: data as unknown as RecordingFile, entries };
}

/** Where the replay looks for recordings: the repository's own, then the shared fixtures'. */
export function recordingDirs(repositoryRoot: string): string[] {
  return [path.join(repositoryRoot, 'test/compat/recorded'), path.resolve(repositoryRoot, '../shared/fixtures/compat-recorded')];
}

export interface FoundRecordings {
  looked: string[];
  /** Every file in those folders but README.md and dot files: each should be a recording. */
  files: string[];
  /** One per release: the first found (the repository's before the shared one). */
  recordings: LoadedRecording[];
  /** A later recording of a release already found: not used. */
  superseded: string[];
  /** Files that are not readable recordings, each naming the file and the problem. */
  errors: string[];
}

export function findRecordings(repositoryRoot: string, dirs = recordingDirs(repositoryRoot)): FoundRecordings {
  const found: FoundRecordings = { looked: dirs, files: [], recordings: [], superseded: [], errors: [] };
  for (const dir of dirs) {
    if (!existsSync(dir)) continue;
    for (const name of readdirSync(dir).sort()) {
      const file = path.join(dir, name);
      if (name === 'README.md' || name.startsWith('.') || !statSync(file).isFile()) continue;
      found.files.push(file);
      const shown = path.relative(repositoryRoot, file);
      if (!/^fabric-\d+\.\d+\.\d+[\w.-]*\.json$/.test(name)) {
        found.errors.push(`${shown}: not a recording's name (fabric-<version>.json)`);
        continue;
      }
      try {
        const { data, entries } = parseRecording(shown, readFileSync(file, 'utf8'));
        check(name === recordingFileName(data.release.version), shown, 'release.version', `${data.release.version} does not match the file name`);
        if (found.recordings.some((r) => r.data.release.version === data.release.version)) found.superseded.push(shown);
        else found.recordings.push({ file, shown, data, entries });
      } catch (error) {
        if (!(error instanceof RecordingError)) throw error;
        found.errors.push(error.message);
      }
    }
  }
  found.recordings.sort((a, b) => compareVersions(a.data.release.version, b.data.release.version));
  return found;
}

export function compareVersions(a: string, b: string): number {
  const pa = a.split(/[.-]/).map((p) => (/^\d+$/.test(p) ? Number(p) : p));
  const pb = b.split(/[.-]/).map((p) => (/^\d+$/.test(p) ? Number(p) : p));
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const [x, y] = [pa[i] ?? 0, pb[i] ?? 0];
    if (x === y) continue;
    if (typeof x === 'number' && typeof y === 'number') return x - y;
    return String(x) < String(y) ? -1 : 1;
  }
  return 0;
}
