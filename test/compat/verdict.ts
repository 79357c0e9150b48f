import { appliesTo, type Deviation } from './deviations';
import { sameAnswer, type Answer, type AnyCase, type CaseResult, type Verdict } from './model';

/** Identical, else the first deviation of the table that explains the difference, else a failure. */
export function judge(table: readonly Deviation[], c: AnyCase, fabric: Answer, ours: Answer): Verdict {
  if (sameAnswer(fabric, ours)) return { kind: 'identical' };
  const deviation = table.find((d) => d.matches(c, fabric, ours));
  return deviation ? { kind: 'deviation', id: deviation.id } : { kind: 'failure' };
}

/** Collects every result of the run, in a stable order for the report. */
export class ResultBook {
  readonly results: CaseResult[] = [];
  private readonly ids = new Set<string>();

  private readonly table: readonly Deviation[];

  /** `line`: the release line compared (`2.5`); only the deviations that apply to it explain a difference. */
  constructor(table: readonly Deviation[], line: string) {
    this.table = table.filter((deviation) => appliesTo(deviation, line));
  }

  record(c: AnyCase, fabric: Answer, ours: Answer): CaseResult {
    if (this.ids.has(c.id)) throw new Error(`duplicate compat case id: ${c.id}`);
    this.ids.add(c.id);
    const result: CaseResult = { case: c, fabric, ours, verdict: judge(this.table, c, fabric, ours) };
    this.results.push(result);
    return result;
  }

  failures(): CaseResult[] {
    return this.results.filter((r) => r.verdict.kind === 'failure');
  }

  /** Ids of the deviations that apply to this release and that no case needed. */
  unexercised(): string[] {
    const used = new Set(this.results.flatMap((r) => (r.verdict.kind === 'deviation' ? [r.verdict.id] : [])));
    return this.table.map((d) => d.id).filter((id) => !used.has(id));
  }
}
