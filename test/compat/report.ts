import type { Deviation } from './deviations';
import { describeAnswer, isHttpCase, type CaseResult, type Verdict } from './model';

/**
 * Renders docs/compatibility.md and the deviations section of docs/reference/deviations.md. Deterministic: no clock (the
 * dates shown are the recordings'), cases in the order the suite defines them, request ids reduced
 * to absent / echoed / uuid, generated cases summarised by category in seed order.
 *
 * docs/compatibility.md is what the replay (test/compat/replay.test.ts) renders from the recordings,
 * or, without any, a notice saying so; below it, a kept section (`<!-- BEGIN KEPT ...`) that no run
 * renders: the live run of 2026-11-23, measured before there were recordings, carried over as it is.
 */

/** Where a release's Fabric answers come from. */
export type RunSource =
  | { kind: 'recording'; file: string; recorded: string }
  /** The live suite: Fabric answered now (the date of the run). */
  | { kind: 'live'; date: string };

/** One release's run: the version /version answered, and every result against it. */
export interface ReleaseRun {
  version: string;
  commit: string;
  source: RunSource;
  results: readonly CaseResult[];
}

export interface ReportInput {
  runs: readonly ReleaseRun[];
  deviations: readonly Deviation[];
  /** Groups whose cases are generated: summarised by category, with examples, per release. */
  generatedGroups: ReadonlySet<string>;
  /** Lines describing how the run was set up. */
  setup: string[];
}

export function cell(text: string): string {
  return text.replace(/\\/g, '\\\\').replace(/\|/g, '\\|').replace(/\r?\n/g, ' ').replace(/`/g, "'");
}

export function verdictText(verdict: Verdict): string {
  switch (verdict.kind) {
    case 'identical':
      return 'identical';
    case 'deviation':
      return `deviation ${verdict.id}`;
    case 'failure':
      return '**failure**';
  }
}

function groupsInOrder(results: readonly CaseResult[]): string[] {
  return [...new Set(results.map((r) => r.case.group))];
}

function releasesText(d: Deviation): string {
  return d.releases === undefined ? 'all' : `${d.releases.join(', ')} only`;
}

export function renderDeviationTable(deviations: readonly Deviation[], heading = '|'): string {
  const lines = [`${heading} id | where | releases | Fabric | fabric-ops | why |`, '|---|---|---|---|---|---|'];
  for (const d of deviations) {
    lines.push(`| ${d.id} | ${cell(d.title)} | ${releasesText(d)} | ${cell(d.fabric)} | ${cell(d.ours)} | ${cell(d.why)} |`);
  }
  return lines.join('\n');
}

function caseLabel(result: CaseResult): string {
  const c = result.case;
  const prefix = `${c.group}/${c.node}/`;
  return c.id.startsWith(prefix) ? `${c.node}: ${c.id.slice(prefix.length)}` : c.id;
}

function renderGenerated(results: readonly CaseResult[]): string[] {
  const out: string[] = [];
  const byKey = new Map<string, CaseResult[]>();
  for (const r of results) {
    const category = isHttpCase(r.case) ? (r.case.category ?? 'other') : 'other';
    const key = `${r.case.node}\u0000${category}`;
    byKey.set(key, [...(byKey.get(key) ?? []), r]);
  }
  out.push('| node | category | cases | verdicts |', '|---|---|---|---|');
  for (const [key, list] of byKey) {
    const [node, category] = key.split('\u0000');
    const counts = new Map<string, number>();
    for (const r of list) counts.set(verdictText(r.verdict), (counts.get(verdictText(r.verdict)) ?? 0) + 1);
    out.push(`| ${node} | ${category} | ${list.length} | ${[...counts].map(([v, n]) => `${v}: ${n}`).join(', ')} |`);
  }
  out.push(
    '',
    'The first two cases of each node, category and verdict:',
    '',
    '| node | category | body | Fabric | fabric-ops | verdict |',
    '|---|---|---|---|---|---|',
  );
  const seen = new Map<string, number>();
  for (const r of results) {
    if (!isHttpCase(r.case)) continue;
    const key = `${r.case.node}/${r.case.category ?? ''}/${verdictText(r.verdict)}`;
    const n = seen.get(key) ?? 0;
    if (n >= 2) continue;
    seen.set(key, n + 1);
    out.push(
      `| ${r.case.node} | ${cell(r.case.category ?? '')} | \`${cell(JSON.stringify(r.case.body ?? ''))}\` | ${cell(describeAnswer(r.fabric))} | ${cell(describeAnswer(r.ours))} | ${verdictText(r.verdict)} |`,
    );
  }
  return out;
}

/** Stable order whatever order concurrent cases finished in: by group, then peer before orderer, then as recorded. */
export function ordered(results: readonly CaseResult[]): CaseResult[] {
  const groups = groupsInOrder(results);
  const rank = (r: CaseResult): number => groups.indexOf(r.case.group) * 2 + (r.case.node === 'peer' ? 0 : 1);
  return results
    .map((r, i) => ({ r, i }))
    .sort((a, b) => rank(a.r) - rank(b.r) || a.i - b.i)
    .map(({ r }) => r);
}

/** The answers and verdict of one case in every release run, side by side. */
interface CaseRow {
  result: CaseResult;
  byRelease: Array<CaseResult | undefined>;
}

function rowsOf(runs: readonly ReleaseRun[], group: string): CaseRow[] {
  const rows = new Map<string, CaseRow>();
  const ids: string[] = [];
  for (const [index, run] of runs.entries()) {
    for (const r of ordered(run.results)) {
      if (r.case.group !== group) continue;
      let row = rows.get(r.case.id);
      if (!row) {
        row = { result: r, byRelease: runs.map(() => undefined) };
        rows.set(r.case.id, row);
        ids.push(r.case.id);
      }
      row.byRelease[index] = r;
    }
  }
  return ids.map((id) => rows.get(id)).filter((row): row is CaseRow => row !== undefined);
}

function verdictsText(runs: readonly ReleaseRun[], row: CaseRow): string {
  const texts = row.byRelease.map((r) => (r ? verdictText(r.verdict) : 'not run'));
  if (texts.every((text) => text === texts[0])) return texts[0] ?? '';
  // A difference in one release only: say which.
  return runs.map((run, index) => `${run.version}: ${texts[index]}`).join('; ');
}

function oursText(runs: readonly ReleaseRun[], row: CaseRow): string {
  const texts = row.byRelease.map((r) => (r ? describeAnswer(r.ours) : 'not run'));
  if (texts.every((text) => text === texts[0])) return texts[0] ?? '';
  return runs.map((run, index) => `${run.version}: ${texts[index]}`).join('; ');
}

/** `a`, `a and b`, `a, b and c`. */
function joinAnd(items: readonly string[]): string {
  return items.length <= 1 ? (items[0] ?? '') : `${items.slice(0, -1).join(', ')} and ${items.at(-1) ?? ''}`;
}

function sourceCells(source: RunSource): string {
  return source.kind === 'recording' ? `${source.recorded.slice(0, 10)} | \`${cell(source.file)}\`` : `${source.date} (live run) | not recorded`;
}

export const reportTitle = '# Compatibility with Hyperledger Fabric';

export function renderReport(input: ReportInput): string {
  const { runs } = input;
  const versions = runs.map((run) => run.version);
  const groups = [...new Set(runs.flatMap((run) => groupsInOrder(ordered(run.results))))];
  const recorded = runs.every((run) => run.source.kind === 'recording');
  const out: string[] = [
    `${reportTitle} ${joinAnd(versions)}`,
    '',
    recorded
      ? '<!-- Generated by `make compat-record` (test/compat/replay.test.ts, from the recordings); do not edit above the kept section. `make test` fails when this part differs from the rendering of the recordings. -->'
      : '<!-- Rendered by the live suite (test/real/compat/compat.test.ts); docs/compatibility.md is rendered from recordings (make compat-record). -->',
    '',
    '| Fabric | commit | recorded | Fabric answers from | cases |',
    '|---|---|---|---|---|',
    ...runs.map((run) => `| ${run.version} | ${run.commit} | ${sourceCells(run.source)} | ${run.results.length} |`),
    '',
    recorded
      ? `Fabric's answers are those the real ${joinAnd(versions.map((v) => `Fabric ${v}`))} \`peer\` and \`orderer\` gave when recorded (\`make compat-record\`: test/real/compat/compat.test.ts sends each case to the real node and writes its answer); fabric-ops' answers are this checkout's, from the replay (test/compat/replay.test.ts, run by \`make test\`): fabric-ops started on the configuration each case was recorded under, sent the same case, its answer judged against the recorded one.`
      : `Measured against the real ${runs.map((run) => `Fabric ${run.version} (commit ${run.commit})`).join(' and ')} \`peer\` and \`orderer\`: each case is sent to the real node and to fabric-ops started on the same configuration file and environment, and the answers are compared.`,
    'The releases are shown side by side; where a verdict or an answer of fabric-ops differs between releases, the cell names each release.',
    '',
    ...input.setup.map((line) => `- ${line}`),
    '',
    '## Summary',
    '',
    `| group | cases | ${versions.map((version) => `${version}: identical / deviations / failures`).join(' | ')} |`,
    `|---|---|${versions.map(() => '---|').join('')}`,
  ];
  const counts = (list: readonly CaseResult[]): string => {
    const count = (kind: Verdict['kind']): number => list.filter((r) => r.verdict.kind === kind).length;
    return `${count('identical')} / ${count('deviation')} / ${count('failure')}`;
  };
  for (const group of groups) {
    const perRun = runs.map((run) => run.results.filter((r) => r.case.group === group));
    out.push(`| ${group} | ${Math.max(...perRun.map((list) => list.length))} | ${perRun.map(counts).join(' | ')} |`);
  }
  out.push(`| **all** | ${Math.max(...runs.map((run) => run.results.length))} | ${runs.map((run) => counts(run.results)).join(' | ')} |`, '');

  out.push('## Deliberate deviations', '', renderDeviationTable(input.deviations), '');
  out.push(`| id | ${versions.map((version) => `cases (${version})`).join(' | ')} |`, `|---|${versions.map(() => '---|').join('')}`);
  for (const d of input.deviations) {
    const perRun = runs.map((run) => run.results.filter((r) => r.verdict.kind === 'deviation' && r.verdict.id === d.id).length);
    out.push(`| ${d.id} | ${perRun.join(' | ')} |`);
  }
  out.push('');

  for (const group of groups) {
    out.push(`## ${group}`, '');
    if (input.generatedGroups.has(group)) {
      for (const run of runs) out.push(`### Fabric ${run.version}`, '', ...renderGenerated(ordered(run.results).filter((r) => r.case.group === group)), '');
      continue;
    }
    out.push(
      `| case | ${versions.map((version) => `Fabric ${version}`).join(' | ')} | fabric-ops | verdict |`,
      `|---|${versions.map(() => '---|').join('')}---|---|`,
    );
    for (const row of rowsOf(runs, group)) {
      const fabric = row.byRelease.map((r) => (r ? cell(describeAnswer(r.fabric)) : 'not run'));
      out.push(`| ${cell(caseLabel(row.result))} | ${fabric.join(' | ')} | ${cell(oursText(runs, row))} | ${cell(verdictsText(runs, row))} |`);
    }
    out.push('');
  }
  return `${out.join('\n').trimEnd()}\n`;
}

/** The page whose marked section is the deviation table (the README's until the docs moved to docs/). */
export const deviationsPage = 'docs/reference/deviations.md';
export const deviationsBegin = '<!-- BEGIN GENERATED: deviations -->';
export const deviationsEnd = '<!-- END GENERATED: deviations -->';

/** The section of docs/reference/deviations.md between the markers. */
export function renderDeviationsSection(deviations: readonly Deviation[]): string {
  return [
    deviationsBegin,
    '',
    renderDeviationTable(deviations),
    '',
    "Every other answer is the same as Fabric's; `docs/compatibility.md` lists each case compared (`make compat`).",
    '',
    deviationsEnd,
  ].join('\n');
}

/** Replaces the marked section of the deviations page; throws when the markers are missing. */
export function replaceDeviationsSection(page: string, section: string): string {
  const begin = page.indexOf(deviationsBegin);
  const end = page.indexOf(deviationsEnd);
  if (begin < 0 || end < begin) throw new Error(`${deviationsPage} has no ${deviationsBegin} ... ${deviationsEnd} section`);
  return page.slice(0, begin) + section + page.slice(end + deviationsEnd.length);
}

/** docs/compatibility.md without any recording: says so, where the replay looked, and how to make one. */
export function renderNoRecording(looked: readonly string[]): string {
  return [
    reportTitle,
    '',
    '<!-- Generated by test/compat/replay.test.ts; do not edit above the kept section. `make test` fails when this part differs. -->',
    '',
    '## No recording',
    '',
    `No recording of real Fabric answers: the replay (test/compat/replay.test.ts, run by \`make test\`) looked in ${looked.map((dir) => `\`${dir}\``).join(' and ')} and found none, so \`make test\` compares fabric-ops with no recorded answer of the differential suite (it says so in one line: \`COMPAT REPLAY HAS NO RECORDING\`). It still compares fabric-ops, started on the sampleconfig of each release recorded in \`../shared/fixtures/fabric-recorded/\`, with those real nodes' /logspec, /version and /healthz.`,
    '',
    'To record: `make compat-record FABRIC_HOMES="<release folders with bin/peer, bin/orderer, sampleconfig/>"` (one `test/compat/recorded/fabric-<version>.json` per release, then this file rendered from them); to compare live without recording: `make compat FABRIC_HOMES="..."`.',
    '',
  ].join('\n');
}

export const keptMarker = '<!-- BEGIN KEPT';

/** The rendered part of docs/compatibility.md, and the kept section below it (from its marker on; '' when none). */
export function splitReport(text: string): { rendered: string; kept: string } {
  const at = text.indexOf(`\n${keptMarker}`);
  return at < 0 ? { rendered: text, kept: '' } : { rendered: `${text.slice(0, at).trimEnd()}\n`, kept: text.slice(at + 1) };
}

/** The rendered part, then the kept section, one blank line between. */
export function composeReport(rendered: string, kept: string): string {
  return kept === '' ? rendered : `${rendered.trimEnd()}\n\n${kept}`;
}
