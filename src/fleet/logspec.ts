import { FabricOpsError, messageOf } from '../errors';
import { formatLogSpec, parseLogSpec } from '../logging/spec';
import type { Logger } from '../logging/types';
import { backoffDelay, type BackoffPolicy } from '../retry';
import type { Cancellable, Scheduler } from '../time';
import type { Counter } from '../metrics/types';
import { errorText, type CallOutcome, type NodeClient } from './client';
import { maxTtlMs } from './config';
import { mapBounded } from './pool';
import type { PendingPutBack, PutBackStore } from './putback-store';
import { matches, select, unknownLabelKeys } from './selector';
import type { FleetEvent, FleetNode, NodeLogSpecChange, NodePutBack, NodeSelector } from './types';

/** A fleet logspec request that cannot be carried out as given (400); no node was touched. */
export class FleetRequestError extends FabricOpsError {
  override readonly code = 'FABRIC_OPS_FLEET_REQUEST';
}

/** A write before discovery has listed every source: which nodes a selector means is not known yet (503, try again). */
export class FleetNotReadyError extends FabricOpsError {
  override readonly code = 'FABRIC_OPS_FLEET_NOT_READY';
}

/** The nodes the logspec work sees: the fleet's directory (NodeDirectory). */
export interface FleetNodes {
  nodes(): readonly FleetNode[];
  byName(name: string): FleetNode | undefined;
  /** Every discovery source has listed once (always, without discovery). */
  readonly synced: boolean;
  /** Nodes can come and go (discovery). */
  readonly dynamic: boolean;
  whenSynced(): Promise<void>;
  /** For messages: the sources not synced yet, with their problems. */
  describeUnsynced(): string;
}

export interface SetLogSpecRequest {
  spec: string;
  selector: NodeSelector;
  ttlMs?: number;
  allOrNothing?: boolean;
}

export interface SetLogSpecAnswer {
  /** True when every selected node took the spec. */
  complete: boolean;
  spec: string;
  ttlMs: number | null;
  allOrNothing: boolean;
  /**
   * When the put-back is due (ISO 8601): with a TTL, and only when some node holds the spec now
   * (took it, or could not be rolled back). Null when none does (every node failed, or
   * all-or-nothing put every one back): no put-back is pending.
   */
  putBackAt: string | null;
  nodes: NodeLogSpecChange[];
}

export interface NodeLogSpec {
  name: string;
  group: string;
  spec?: string;
  status: 'ok' | NodeLogSpecChange['reason'];
  error?: string;
  /** A put-back is pending on this node (ISO 8601 due time). */
  putBackAt?: string;
}

export interface LogSpecManagerOptions {
  nodes: FleetNodes;
  client: Pick<NodeClient, 'call'>;
  concurrency: number;
  scheduler: Scheduler;
  store: PutBackStore;
  logger: Logger;
  changes: Counter;
  putBacks: Counter;
  emit(event: FleetEvent): void;
  /** Retries of a put-back on a node that cannot be reached. */
  retry?: BackoffPolicy;
  random?: () => number;
}

/**
 * The shortest TTL. A write reads every selected node, writes the put-backs ahead, then sets the
 * spec: on a fleet that takes a good part of a second, and a put-back due before the write ends
 * would race it. The longest is maxTtlMs (7 days).
 */
export const minTtlMs = 1000;

/** Pure: why a TTL of `ms` milliseconds (`text`: as given) is refused, or null. The bounds are said in the README's words. */
export function ttlProblem(ms: number, text?: string): string | null {
  if (Number.isInteger(ms) && ms >= minTtlMs && ms <= maxTtlMs) return null;
  const given = text === undefined ? `${ms} ms` : `"${text}"`;
  const limit = !Number.isInteger(ms)
    ? 'not a whole number of milliseconds'
    : ms < minTtlMs
      ? `shorter than the minimum, ${minTtlMs / 1000}s`
      : `longer than the maximum, ${maxTtlMs / 3_600_000}h (7 days)`;
  return `${given} is ${limit}; a TTL is a Go duration from 1s to 168h`;
}

/** A node that could not be reached at put-back time is tried again: 1 s, 2 s, ... up to a minute. */
const putBackRetry: BackoffPolicy = { initialMs: 1000, maxMs: 60_000, factor: 2, jitter: 0.2 };

/**
 * How long a put-back waits for a node that discovery no longer lists before it is given up
 * (result failed). A node missing from a synced fleet is usually one being replaced or
 * rescheduled (a StatefulSet Pod keeps its name and is back within a minute or two; a rolling
 * update of a few Pods stays within a few minutes); one missing for longer was removed or
 * relabelled on purpose, and a put-back kept for it forever would stay in the pending list and be
 * retried for good. A node that comes back later starts from its own configured spec anyway.
 */
const putBackAbsenceLimitMs = 10 * 60_000;

/**
 * Put-backs due within this long of one that is due now run with it, as one batch: one store
 * write, one event (one Kubernetes Event), one audit line. A TTL on N nodes ends for all of them
 * at once (one write gives them one due time), and a restart finds the overdue ones together; a
 * put-back may so run up to this much before its due time, never later. Retries (a node that did
 * not answer) run at their own time, with whichever others are due then.
 */
export const putBackBatchWindowMs = 1000;

/** Nodes an audit line of put-backs names (its failures first); the rest are counted. Every node's result is in the event and the metrics. */
export const maxAuditNodes = 20;

/** Pure: the normalised form of a spec, or null when it does not parse. */
function normalised(spec: string): string | null {
  try {
    return formatLogSpec(parseLogSpec(spec));
  } catch {
    return null;
  }
}

function specOf(outcome: CallOutcome): { spec: string } | { reason: NonNullable<NodeLogSpecChange['reason']>; error: string } {
  if (!outcome.ok) return { reason: outcome.reason, error: outcome.error };
  const spec = (outcome.body as { spec?: unknown } | undefined)?.spec;
  if (outcome.status !== 200 || typeof spec !== 'string')
    return { reason: 'bad_response', error: `/logspec answered ${outcome.status}: ${outcome.text.slice(0, 120)}` };
  return { spec };
}

function putOutcome(outcome: CallOutcome): { ok: true } | { ok: false; reason: NonNullable<NodeLogSpecChange['reason']>; error: string } {
  if (!outcome.ok) return { ok: false, reason: outcome.reason, error: outcome.error };
  if (outcome.status === 204 || outcome.status === 200) return { ok: true };
  if (outcome.status === 400) return { ok: false, reason: 'rejected', error: `400: ${errorText(outcome.text)}` };
  return { ok: false, reason: 'bad_response', error: `PUT /logspec answered ${outcome.status}: ${errorText(outcome.text)}` };
}

/**
 * One node's pending put-back: `entry`, exactly what the store keeps (replaced by a new object when
 * a write renews it), and what this process alone knows of it, never persisted: its next run (the
 * timer, when it is due and when it was scheduled), its calls so far, since when its node has been
 * missing, and whether it waits for discovery to sync. A record lives from the write (or the
 * load) of its entry until the put-back ends or a write without TTL drops it.
 */
class PutBackRecord {
  /** The timer of the next run, until it fires. */
  timer: Cancellable | undefined;
  /**
   * When the next run is due (its TTL's end, or its next retry), from schedule() until that run
   * starts or is cancelled: a fired timer leaves it set, for the batch to find.
   */
  runAt: number | undefined;
  /** The rank of that schedule among all: a batch runs its put-backs in the order they were scheduled. */
  scheduledAs = 0;
  /** Calls made for this put-back so far (its retries), 0 again when a new put-back starts. */
  attempts = 0;
  /** Since when the node has been missing from the synced fleet. */
  absentSince: number | undefined;
  /** Due while discovery had not listed every source: it runs once it has. */
  waitingForSync = false;

  constructor(public entry: PendingPutBack) {}

  /** The next run is off: cancelled, or starting now. */
  unschedule(): void {
    this.timer?.cancel();
    this.timer = undefined;
    this.runAt = undefined;
  }

  /** A new put-back (the node no longer has our spec from an earlier one) starts its retries afresh. */
  startAfresh(entry: PendingPutBack): void {
    this.entry = entry;
    this.attempts = 0;
    this.absentSince = undefined;
  }
}

/**
 * Fleet-wide log levels: reads, writes with per-node results, all-or-nothing, and TTL put-backs
 * that survive a restart. Writes and put-backs run one at a time (a queue), so that two requests
 * never interleave their reads of "the previous spec".
 */
export class FleetLogSpec {
  /** The pending put-backs, one per node, in the order the store keeps them. */
  private readonly records = new Map<string, PutBackRecord>();
  /** Schedules made so far: a record's rank among them (PutBackRecord.scheduledAs). */
  private schedules = 0;
  /** A batch of due put-backs is queued and has not started: a timer firing meanwhile joins it. */
  private batchQueued = false;
  /** The store's stop (its watch), awaited by idle(). */
  private storeStopped: Promise<void> = Promise.resolve();
  /** The put-backs as last written to the store (JSON), so that an unchanged list is not written again. */
  private saved: string | undefined;
  private queue: Promise<unknown> = Promise.resolve();
  private stopped = false;

  constructor(private readonly options: LogSpecManagerOptions) {}

  /**
   * Loads the persisted put-backs and schedules them (an overdue one runs at once, or once
   * discovery has listed every source). With static nodes only, one for a node no longer in the
   * configuration is dropped at once; with discovery, its node may not be listed yet.
   */
  async start(): Promise<void> {
    for (const entry of await this.options.store.load()) {
      if (!this.options.nodes.dynamic && this.options.nodes.byName(entry.node) === undefined) {
        this.options.logger.warn(`pending put-back for node ${entry.node}, which is no longer in the fleet configuration; dropped`, {
          node: entry.node,
          previous: entry.previous,
        });
        continue;
      }
      this.schedule(this.keep(entry));
    }
    if (this.records.size > 0) this.options.logger.info(`${this.records.size} pending log level put-backs loaded from ${this.options.store.where}`);
    // The store keeps them where they are kept (the ConfigMap: written again if someone deletes it).
    this.options.store.watch?.((rewrite) => this.options.emit({ type: 'fleet.putbacks.rewritten', actor: 'fabric-ops', ...rewrite }));
  }

  stop(): void {
    this.stopped = true;
    for (const record of this.records.values()) record.unschedule();
    this.storeStopped = (this.options.store.stop?.() ?? Promise.resolve()).catch((error: unknown) => this.options.logger.error(messageOf(error)));
  }

  /** Waits for queued writes and put-backs, and for the store's watch once stopped (tests, stop). */
  idle(): Promise<void> {
    return Promise.all([this.queue, this.storeStopped]).then(() => undefined);
  }

  pendingPutBacks(): PendingPutBack[] {
    return [...this.records.values()].map(({ entry }) => ({ ...entry, specs: [...entry.specs] }));
  }

  private serial<T>(work: () => Promise<T>): Promise<T> {
    const result = this.queue.then(work, work);
    this.queue = result.catch(() => undefined);
    return result;
  }

  async read(): Promise<NodeLogSpec[]> {
    const { nodes, client, concurrency } = this.options;
    return mapBounded(nodes.nodes(), concurrency, async (node) => {
      const found = specOf(await client.call(node, 'GET', '/logspec'));
      const due = this.records.get(node.name)?.entry.dueAt;
      const putBackAt = due !== undefined ? { putBackAt: new Date(due).toISOString() } : {};
      if ('spec' in found) return { name: node.name, group: node.group, status: 'ok' as const, spec: found.spec, ...putBackAt };
      return { name: node.name, group: node.group, status: found.reason, error: found.error, ...putBackAt };
    });
  }

  /** Validates everything before any node is touched (throws LogSpecError / FleetRequestError). */
  async set(request: SetLogSpecRequest, actor: string, actorFields: Readonly<Record<string, string>> = {}): Promise<SetLogSpecAnswer> {
    const spec = formatLogSpec(parseLogSpec(request.spec));
    if (request.ttlMs !== undefined) {
      const problem = ttlProblem(request.ttlMs);
      if (problem !== null) throw new FleetRequestError(`ttl: ${problem}`);
    }
    this.checkSelector(request.selector);
    const targets = select(request.selector, this.options.nodes.nodes());
    if (targets.length === 0) throw new FleetRequestError(`selector ${JSON.stringify(request.selector)} matches no node`);
    return await this.serial(() => this.apply(spec, targets, request, actor, actorFields));
  }

  private async apply(
    spec: string,
    targets: FleetNode[],
    request: SetLogSpecRequest,
    actor: string,
    actorFields: Readonly<Record<string, string>>,
  ): Promise<SetLogSpecAnswer> {
    const { client, concurrency, scheduler, logger } = this.options;
    const ttlMs = request.ttlMs ?? null;
    const allOrNothing = request.allOrNothing === true;
    const dueAt = ttlMs === null ? null : scheduler.now() + ttlMs;

    // 1. The spec each node has now: what all-or-nothing and the TTL put back.
    const before = await mapBounded(targets, concurrency, async (node) => ({ node, found: specOf(await client.call(node, 'GET', '/logspec')) }));
    const results = new Map<string, NodeLogSpecChange>();
    const readable: Array<{ node: FleetNode; previous: string }> = [];
    for (const { node, found } of before) {
      if ('spec' in found) readable.push({ node, previous: found.spec });
      // What went wrong first (a table cut at 80 columns keeps it), then when.
      else results.set(node.name, { name: node.name, result: 'failed', reason: found.reason, error: `${found.error} (reading the current spec)` });
    }

    // 2. Write-ahead: with a TTL, the put-backs are on disk before any node changes. A crash
    // after this point finds them at start; a node that never took the spec is then left alone.
    const priorEntries = new Map(readable.map(({ node }) => [node.name, this.records.get(node.name)?.entry]));
    if (dueAt !== null && readable.length > 0) {
      for (const { node, previous } of readable) this.renew(node.name, previous, spec, dueAt, actor);
      try {
        await this.persist();
      } catch (error) {
        for (const [name, prior] of priorEntries) this.restoreEntry(name, prior);
        throw error;
      }
    }

    // 3. Apply, concurrently within the bound.
    const applied: Array<{ node: FleetNode; previous: string }> = [];
    await mapBounded(readable, concurrency, async ({ node, previous }) => {
      const outcome = putOutcome(await client.call(node, 'PUT', '/logspec', { spec }));
      if (outcome.ok) {
        applied.push({ node, previous });
        results.set(node.name, { name: node.name, result: 'applied', previous });
      } else {
        results.set(node.name, { name: node.name, result: 'failed', previous, reason: outcome.reason, error: outcome.error });
      }
    });

    // 4. All-or-nothing: any failure puts back the nodes that took it.
    const complete = applied.length === targets.length;
    if (allOrNothing && !complete) {
      await mapBounded(applied, concurrency, async ({ node, previous }) => {
        const outcome = putOutcome(await client.call(node, 'PUT', '/logspec', { spec: previous }));
        results.set(
          node.name,
          outcome.ok
            ? { name: node.name, result: 'rolled_back', previous }
            : { name: node.name, result: 'rollback_failed', previous, reason: outcome.reason, error: outcome.error },
        );
      });
    }

    // 5. The put-backs that remain: a TTL for every node that has our spec now; a write without
    // TTL makes the spec permanent, so an earlier pending put-back of that node is dropped.
    for (const { node } of readable) {
      const result = results.get(node.name)?.result;
      const holdsOurSpec = result === 'applied' || result === 'rollback_failed';
      if (holdsOurSpec && dueAt !== null) this.schedule(this.records.get(node.name) as PutBackRecord);
      else if (result === 'applied') this.restoreEntry(node.name, undefined);
      else if (result !== 'rollback_failed') this.restoreEntry(node.name, priorEntries.get(node.name));
    }
    if (dueAt !== null || readable.some(({ node }) => priorEntries.get(node.name) !== undefined)) {
      await this.persist().catch((error: unknown) => logger.error(messageOf(error)));
    }

    const nodes = targets.map((node) => results.get(node.name) as NodeLogSpecChange);
    for (const node of nodes) this.options.changes.with({ result: node.result }).add(1);
    const summary = nodes.map((node) => `${node.name}=${node.result}${node.reason ? ` (${node.reason})` : ''}`).join(', ');
    logger.info(`fleet logging specification '${spec}' set by ${actor}${ttlMs !== null ? ` for ${ttlMs / 1000}s` : ''}: ${summary}`, {
      audit: 'fleet.logspec.set',
      actor,
      ...actorFields,
      selector: request.selector,
      spec,
      ttlMs,
      allOrNothing,
      nodes,
    });
    this.options.emit({ type: 'fleet.logspec.changed', actor, selector: request.selector, spec, ttlMs, allOrNothing, nodes });
    // A put-back is reported only when one is pending: all-or-nothing that put every node back leaves none.
    const holding = nodes.some((node) => node.result === 'applied' || node.result === 'rollback_failed');
    return { complete, spec, ttlMs, allOrNothing, putBackAt: dueAt === null || !holding ? null : new Date(dueAt).toISOString(), nodes };
  }

  /** DELETE /fleet/logspec: every pending put-back the selector matches, now. */
  async restore(selector: NodeSelector, actor: string, actorFields: Readonly<Record<string, string>> = {}): Promise<NodePutBack[]> {
    this.checkSelector(selector);
    return await this.serial(async () => {
      const records = [...this.records.values()].filter(({ entry }) => {
        const node = this.options.nodes.byName(entry.node);
        return node !== undefined && matches(selector, node);
      });
      const results = (await mapBounded(records, this.options.concurrency, (record) => this.putBack(record))).map(({ result }) => result);
      await this.persist().catch((error: unknown) => this.options.logger.error(messageOf(error)));
      this.count(results);
      this.report('cancel', actor, results, actorFields);
      return results;
    });
  }

  /** A name, group or label key the fleet does not have is a typo, not an empty match: refused, naming it. */
  private checkSelector(selector: NodeSelector): void {
    const { nodes } = this.options;
    if (!nodes.synced) {
      throw new FleetNotReadyError(
        `the fleet is not known yet: ${nodes.describeUnsynced()}; no node was touched, try again once GET /fleet/healthz shows every discovery source synced`,
      );
    }
    const unknownNames = (selector.names ?? []).filter((name) => nodes.byName(name) === undefined);
    if (unknownNames.length > 0)
      throw new FleetRequestError(`selector.names: no node named ${unknownNames.map((name) => JSON.stringify(name)).join(', ')} in the fleet`);
    const groups = new Set(nodes.nodes().map((node) => node.group));
    const unknownGroups = (selector.groups ?? []).filter((group) => !groups.has(group));
    if (unknownGroups.length > 0)
      throw new FleetRequestError(`selector.groups: no group ${unknownGroups.map((group) => JSON.stringify(group)).join(', ')} in the fleet`);
    const unknownLabels = unknownLabelKeys(selector, nodes.nodes());
    if (unknownLabels.length > 0)
      throw new FleetRequestError(`selector.labels: no node of the fleet has the label ${unknownLabels.map((key) => JSON.stringify(key)).join(', ')}`);
  }

  /** With a TTL, the put-back a write leaves on a node that has `current` now (the write ahead, before the node changes). */
  private renew(name: string, current: string, spec: string, dueAt: number, actor: string): void {
    const record = this.records.get(name);
    const currentNormal = normalised(current) ?? current;
    if (record !== undefined && record.entry.specs.includes(currentNormal)) {
      // Still ours from an earlier TTL: keep the spec from before the first change.
      record.entry = { ...record.entry, specs: [...record.entry.specs.filter((s) => s !== spec), spec], dueAt, actor };
      return;
    }
    // A new put-back starts its retries afresh.
    const entry = { node: name, previous: current, specs: [spec], dueAt, actor };
    if (record === undefined) this.keep(entry);
    else record.startAfresh(entry);
  }

  /** `entry` is the node's pending put-back (a new record, or the node's record with its state kept). */
  private keep(entry: PendingPutBack): PutBackRecord {
    const record = this.records.get(entry.node) ?? new PutBackRecord(entry);
    record.entry = entry;
    // A node's record keeps its place (the store's order): set() on a key it has does not move it.
    this.records.set(entry.node, record);
    return record;
  }

  /** Back to the node's put-back from before a write: `prior`, scheduled again, or none. */
  private restoreEntry(name: string, prior: PendingPutBack | undefined): void {
    if (prior === undefined) this.drop(name);
    else this.schedule(this.keep(prior));
  }

  /** The node's put-back is over (ended, given up, or made moot by a write without TTL). */
  private drop(name: string): void {
    this.records.get(name)?.unschedule();
    this.records.delete(name);
  }

  private schedule(record: PutBackRecord, delayMs?: number): void {
    if (this.stopped) return;
    record.unschedule();
    const { scheduler } = this.options;
    const { entry } = record;
    const delay = delayMs ?? Math.max(0, entry.dueAt - scheduler.now());
    record.runAt = scheduler.now() + delay;
    record.scheduledAs = ++this.schedules;
    record.timer = scheduler.setTimeout(() => {
      record.timer = undefined;
      if (!this.options.nodes.synced) {
        record.runAt = undefined;
        this.whenSynced(record, entry);
        return;
      }
      this.queueBatch();
    }, delay);
  }

  /** One batch runs the put-backs due when it starts (queued behind a write in progress). */
  private queueBatch(): void {
    if (this.batchQueued) return;
    this.batchQueued = true;
    void this.serial(() => this.runDue());
  }

  /**
   * The put-backs due now, and those due within putBackBatchWindowMs that have not been tried yet,
   * as one batch: each node put back (within the concurrency bound), then one store write, one
   * audit line and one event per writer whose TTL ended (normally one).
   */
  private async runDue(): Promise<void> {
    this.batchQueued = false;
    const now = this.options.scheduler.now();
    const due = [...this.records.values()]
      .filter(({ runAt, attempts }) => runAt !== undefined && (runAt <= now || (runAt <= now + putBackBatchWindowMs && attempts === 0)))
      .sort((a, b) => a.scheduledAs - b.scheduledAs);
    if (due.length === 0) return;
    for (const record of due) record.unschedule();
    const outcomes = await mapBounded(due, this.options.concurrency, async (record) => ({ entry: record.entry, ...(await this.putBack(record)) }));
    await this.persist().catch((error: unknown) => this.options.logger.error(messageOf(error)));
    this.count(outcomes.map(({ result }) => result));
    // Reported when it starts failing and when it ends (with the attempts), not at every retry.
    const byActor = new Map<string, NodePutBack[]>();
    for (const { entry, result, final } of outcomes) {
      if (!final && result.attempts !== 1) continue;
      byActor.set(entry.actor, [...(byActor.get(entry.actor) ?? []), result]);
    }
    for (const [actor, nodes] of byActor) this.report('ttl', `ttl of ${actor}`, nodes);
  }

  /** A put-back due before the fleet is known waits for it: a node is gone only when a synced fleet lacks it. */
  private whenSynced(record: PutBackRecord, entry: PendingPutBack): void {
    if (record.waitingForSync) return;
    record.waitingForSync = true;
    void this.options.nodes.whenSynced().then(() => {
      record.waitingForSync = false;
      // Unless the put-back was renewed or ended meanwhile.
      const current = this.records.get(entry.node);
      if (current?.entry === entry) this.schedule(current, 0);
    });
  }

  /**
   * Puts one node back if it still has one of our specs. Unreachable, or missing from the fleet:
   * kept and retried with backoff; missing for putBackAbsenceLimitMs: given up (failed, final).
   */
  private async putBack(record: PutBackRecord): Promise<{ result: NodePutBack; final: boolean }> {
    const { scheduler } = this.options;
    const { entry } = record;
    const attempts = ++record.attempts;
    const node = this.options.nodes.byName(entry.node);
    let result: NodePutBack;
    let final: boolean;
    if (node === undefined) {
      const since = (record.absentSince ??= scheduler.now());
      const minutes = Math.round(putBackAbsenceLimitMs / 60_000);
      final = scheduler.now() - since >= putBackAbsenceLimitMs;
      result = {
        name: entry.node,
        result: 'failed',
        attempts,
        error: final
          ? `node ${entry.node} has not been in the fleet for ${minutes} minutes (discovery no longer lists it): its put-back to '${entry.previous}' is given up`
          : `node ${entry.node} is not in the fleet now (discovery does not list it); tried again for up to ${minutes} minutes`,
      };
    } else {
      record.absentSince = undefined;
      const found = specOf(await this.options.client.call(node, 'GET', '/logspec'));
      if (!('spec' in found)) {
        result = { name: node.name, result: 'failed', attempts, error: `reading the current spec: ${found.error}` };
      } else if (!entry.specs.includes(normalised(found.spec) ?? found.spec)) {
        result = { name: node.name, result: 'skipped_changed', attempts, spec: found.spec };
      } else {
        const outcome = putOutcome(await this.options.client.call(node, 'PUT', '/logspec', { spec: entry.previous }));
        result = outcome.ok
          ? { name: node.name, result: 'restored', attempts, spec: entry.previous }
          : { name: node.name, result: 'failed', attempts, error: outcome.error };
      }
      final = result.result !== 'failed';
    }
    // The attempts are told where they say something: a failure, or an end after failures.
    if (result.result !== 'failed' && attempts === 1) delete result.attempts;
    if (!final) this.schedule(record, backoffDelay(this.options.retry ?? putBackRetry, attempts, this.options.random ?? Math.random));
    else this.drop(entry.node);
    return { result, final };
  }

  /** Every attempt's result is counted (the put-back alert watches failures go on increasing while a node stays unreachable). */
  private count(nodes: readonly NodePutBack[]): void {
    for (const node of nodes) this.options.putBacks.with({ result: node.result }).add(1);
  }

  /**
   * One audit line and one event for a batch of put-backs. The line names at most maxAuditNodes
   * nodes, those not restored first, and counts the rest; the event carries every node's result.
   */
  private report(trigger: 'ttl' | 'cancel', actor: string, nodes: NodePutBack[], actorFields: Readonly<Record<string, string>> = {}): void {
    if (nodes.length === 0) return;
    const named = [...nodes.filter((node) => node.result !== 'restored'), ...nodes.filter((node) => node.result === 'restored')].slice(0, maxAuditNodes);
    const omitted = nodes.length - named.length;
    const summary = named
      .map(
        (node) =>
          `${node.name}=${node.result}${(node.attempts ?? 1) > 1 ? ` after ${node.attempts} attempts` : ''}${node.result === 'failed' && node.error ? ` (${node.error}${this.records.has(node.name) ? '; tried again with backoff' : ''})` : ''}`,
      )
      .join(', ');
    const restored = nodes.filter((node) => node.result === 'restored').length;
    const log = restored < nodes.length ? this.options.logger.warn.bind(this.options.logger) : this.options.logger.info.bind(this.options.logger);
    const count = nodes.length === 1 ? '' : ` ${restored} of ${nodes.length} nodes restored:`;
    log(`fleet logging specification put back (${trigger}) by ${actor}:${count} ${summary}${omitted > 0 ? `, ... and ${omitted} more` : ''}`, {
      audit: 'fleet.logspec.putback',
      actor,
      ...actorFields,
      trigger,
      nodeCount: nodes.length,
      restored,
      nodes: named,
      ...(omitted > 0 ? { omittedNodes: omitted } : {}),
    });
    this.options.emit({ type: 'fleet.logspec.putback', actor, trigger, nodes });
  }

  /** Writes the pending put-backs when they differ from what was last written (one fsync and rename per change, not per call). */
  private async persist(): Promise<void> {
    const entries = [...this.records.values()].map(({ entry }) => entry);
    const text = JSON.stringify(entries);
    if (text === this.saved) return;
    await this.options.store.save(entries);
    this.saved = text;
  }
}
