import type { CallOutcome } from './client';
import type { FailedCheck, FleetNode, NodeHealth } from './types';
import { systemClock, type Clock } from '../time';
import { excerpt } from '../health/quote';

export interface FleetHealthReport {
  status: 'OK' | 'Service Unavailable';
  /** Nodes whose /healthz answered 200. */
  healthy: number;
  total: number;
  /** Healthy nodes needed for `OK`. */
  required: number;
  /** When the round ended (ISO 8601). */
  time: string;
  round: RoundReport;
  nodes: NodeHealth[];
  /** With discovery: each source, whether it has listed, and what keeps it from the API server. */
  discovery?: DiscoveryStatus[];
  /** Why the answer is 503 although the rule may hold (discovery has not listed every source). */
  reason?: string;
}

/**
 * How a round went. It ends when every node has answered or timed out, or at its deadline
 * (roundTimeout), whichever comes first: then the calls still in flight are cut and the nodes not
 * yet asked are not asked, each reported `timeout` with an error naming the deadline.
 */
export interface RoundReport {
  /** When it began (ISO 8601). */
  started: string;
  /** From its start to its end, in ms: at most `deadlineMs` plus the time to collect the answers. */
  durationMs: number;
  deadlineMs: number;
  /** Calls the deadline cut. */
  cut: number;
  /** Nodes not asked at all because the deadline came first (asked first next round). */
  notAsked: number;
}

export interface DiscoveryStatus {
  source: string;
  synced: boolean;
  /** The last failure of its list or watch (the API server's own message), null when none. */
  problem: string | null;
}

/** Pure: how many healthy nodes the rule asks for, out of `total`. */
export function requiredHealthy(rule: { minShare: number } | { minCount: number }, total: number): number {
  if ('minCount' in rule) return rule.minCount;
  // A share of 0.5 of 5 nodes needs 3: rounded up, so "half" never means "fewer than half".
  return Math.ceil(rule.minShare * total - 1e-9);
}

const maxFailedChecks = 32;

function failedChecks(body: unknown): FailedCheck[] | null {
  if (typeof body !== 'object' || body === null) return null;
  const checks = (body as { failed_checks?: unknown }).failed_checks;
  if (checks === undefined) return [];
  if (!Array.isArray(checks)) return null;
  const result: FailedCheck[] = [];
  // What a node says is bounded before it is kept, answered and logged: at most 32 checks, each text one line of 200 characters.
  for (const check of checks.slice(0, maxFailedChecks)) {
    if (typeof check !== 'object' || check === null) return null;
    const { component, reason } = check as { component?: unknown; reason?: unknown };
    result.push({ component: typeof component === 'string' ? excerpt(component) : '', reason: typeof reason === 'string' ? excerpt(reason) : '' });
  }
  return result;
}

/** Pure: a node's /healthz outcome as its entry (Fabric answers 200 OK or 503 with failed_checks). */
export function nodeHealth(node: FleetNode, outcome: CallOutcome): NodeHealth {
  const base = { name: node.name, group: node.group, dialect: node.dialect, url: node.url, latencyMs: Math.round(outcome.latencyMs) };
  if (!outcome.ok) return { ...base, status: outcome.reason, failed_checks: [], error: outcome.error };
  const checks = failedChecks(outcome.body);
  if (checks === null || (outcome.status !== 200 && outcome.status !== 503)) {
    return { ...base, status: 'bad_response', failed_checks: [], error: `/healthz answered ${outcome.status}: ${outcome.text.slice(0, 120)}` };
  }
  if (outcome.status === 200) return { ...base, status: 'ok', failed_checks: [] };
  return { ...base, status: 'failing', failed_checks: checks };
}

/** Pure: the fleet's answer from every node's entry. */
export function evaluateHealth(nodes: NodeHealth[], rule: { minShare: number } | { minCount: number }, now: number): Omit<FleetHealthReport, 'round'> {
  const healthy = nodes.filter((node) => node.status === 'ok').length;
  const required = requiredHealthy(rule, nodes.length);
  return { status: healthy >= required ? 'OK' : 'Service Unavailable', healthy, total: nodes.length, required, time: new Date(now).toISOString(), nodes };
}

/**
 * One round at a time: a caller arriving while a round runs gets that round's answer, so 100
 * callers at once make one call per node, not 100. A round that ended less than `reuseMs` ago is
 * answered again: without it, one client calling in a loop would make every node answer a
 * request for each of its own (an amplifier in front of the fleet).
 */
export class Coalescer<T> {
  private running: { generation: number; promise: Promise<T> } | null = null;
  private last: { value: T; endedAt: number } | null = null;
  private generation = 0;

  constructor(
    private readonly round: () => Promise<T>,
    private readonly reuseMs = 0,
    private readonly clock: Clock = systemClock,
  ) {}

  /**
   * The next run starts a new round (after a write, say): the last answer no longer holds, and
   * neither does a round already running, which began before the write: a caller arriving now
   * gets a round of its own (started at once; the earlier one ends for the callers it had).
   */
  invalidate(): void {
    this.last = null;
    this.generation += 1;
  }

  run(): Promise<T> {
    const generation = this.generation;
    if (this.running !== null && this.running.generation === generation) return this.running.promise;
    if (this.last !== null && this.clock.now() - this.last.endedAt < this.reuseMs) return Promise.resolve(this.last.value);
    const entry: { generation: number; promise: Promise<T> } = { generation, promise: Promise.resolve() as unknown as Promise<T> };
    entry.promise = this.round()
      .then((value) => {
        if (generation === this.generation) this.last = { value, endedAt: this.clock.now() };
        return value;
      })
      .finally(() => {
        if (this.running === entry) this.running = null;
      });
    this.running = entry;
    return entry.promise;
  }
}
