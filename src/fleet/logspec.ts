import { FabricOpsError, messageOf } from '../errors';
import { formatLogSpec, parseLogSpec } from '../logging/spec';
import type { Logger } from '../logging/types';
import { backoffDelay, type BackoffPolicy } from '../metrics/statsd/backoff';
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
export const putBackRetry: BackoffPolicy = { initialMs: 1000, maxMs: 60_000, factor: 2, jitter: 0.2 };

/**
 * How long a put-back waits for a node that discovery no longer lists before it is given up
 * (result failed). A node missing from a synced fleet is usually one being replaced or
 * rescheduled (a StatefulSet Pod keeps its name and is back within a minute or two; a rolling
 * update of a few Pods stays within a few minutes); one missing for longer was removed or
 * relabelled on purpose, and a put-back kept for it forever would stay in the pending list and be
 * retried for good. A node that comes back later starts from its own configured spec anyway.
 */
export const putBackAbsenceLimitMs = 10 * 60_000;

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
 * Fleet-wide log levels: reads, writes with per-node results, all-or-nothing, and TTL put-backs
 * that survive a restart. Writes and put-backs run one at a time (a queue), so that two requests
 * never interleave their reads of "the previous spec".
 */
export class FleetLogSpec {
  private readonly pending = new Map<string, PendingPutBack>();
  private readonly timers = new Map<string, Cancellable>();
  /** Calls made for each pending put-back so far (its retries), reset when a new put-back starts. */
  private readonly attempts = new Map<string, number>();
  /** Since when a put-back's node has been missing from the synced fleet. */
  private readonly absentSince = new Map<string, number>();
  /** Put-backs due while discovery had not listed every source: they run once it has. */
  private readonly waitingForSync = new Set<string>();
  /** When each scheduled put-back is due to run (its TTL's end, or its next retry). */
  private readonly runAt = new Map<string, number>();
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
      this.pending.set(entry.node, entry);
      this.schedule(entry);
    }
    if (this.pending.size > 0) this.options.logger.info(`${this.pending.size} pending log level put-backs loaded from ${this.options.store.where}`);
    // The store keeps them where they are kept (the ConfigMap: written again if someone deletes it).
    this.options.store.watch?.((rewrite) => this.options.emit({ type: 'fleet.putbacks.rewritten', actor: 'fabric-ops', ...rewrite }));
  }

  stop(): void {
    this.stopped = true;
    for (const timer of this.timers.values()) timer.cancel();
    this.timers.clear();
    this.runAt.clear();
    this.storeStopped = (this.options.store.stop?.() ?? Promise.resolve()).catch((error: unknown) => this.options.logger.error(messageOf(error)));
  }

  /** Waits for queued writes and put-backs, and for the store's watch once stopped (tests, stop). */
  idle(): Promise<void> {
    return Promise.all([this.queue, this.storeStopped]).then(() => undefined);
  }

  pendingPutBacks(): PendingPutBack[] {
    return [...this.pending.values()].map((entry) => ({ ...entry, specs: [...entry.specs] }));
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
      const due = this.pending.get(node.name)?.dueAt;
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
    const priorEntries = new Map(readable.map(({ node }) => [node.name, this.pending.get(node.name)]));
    if (dueAt !== null && readable.length > 0) {
      for (const { node, previous } of readable) this.pending.set(node.name, this.entryFor(node.name, previous, spec, dueAt, actor));
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
      if (holdsOurSpec && dueAt !== null) this.schedule(this.pending.get(node.name) as PendingPutBack);
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
      const entries = [...this.pending.values()].filter((entry) => {
        const node = this.options.nodes.byName(entry.node);
        return node !== undefined && matches(selector, node);
      });
      const results = (await mapBounded(entries, this.options.concurrency, (entry) => this.putBack(entry))).map(({ result }) => result);
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

  private entryFor(name: string, current: string, spec: string, dueAt: number, actor: string): PendingPutBack {
    const existing = this.pending.get(name);
    const currentNormal = normalised(current) ?? current;
    if (existing !== undefined && existing.specs.includes(currentNormal)) {
      // Still ours from an earlier TTL: keep the spec from before the first change.
      return { ...existing, specs: [...existing.specs.filter((s) => s !== spec), spec], dueAt, actor };
    }
    // A new put-back starts its retries afresh.
    this.attempts.delete(name);
    this.absentSince.delete(name);
    return { node: name, previous: current, specs: [spec], dueAt, actor };
  }

  private restoreEntry(name: string, prior: PendingPutBack | undefined): void {
    this.cancelTimer(name);
    if (prior === undefined) {
      this.pending.delete(name);
      this.attempts.delete(name);
      this.absentSince.delete(name);
    } else {
      this.pending.set(name, prior);
      this.schedule(prior);
    }
  }

  private cancelTimer(name: string): void {
    this.timers.get(name)?.cancel();
    this.timers.delete(name);
    this.runAt.delete(name);
  }

  private schedule(entry: PendingPutBack, delayMs?: number): void {
    if (this.stopped) return;
    this.cancelTimer(entry.node);
    const { scheduler } = this.options;
    const delay = delayMs ?? Math.max(0, entry.dueAt - scheduler.now());
    this.runAt.set(entry.node, scheduler.now() + delay);
    this.timers.set(
      entry.node,
      scheduler.setTimeout(() => {
        this.timers.delete(entry.node);
        if (!this.options.nodes.synced) {
          this.runAt.delete(entry.node);
          this.whenSynced(entry);
          return;
        }
        this.queueBatch();
      }, delay),
    );
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
    const due: PendingPutBack[] = [];
    for (const [name, at] of this.runAt) {
      const entry = this.pending.get(name);
      if (entry === undefined) continue;
      if (at <= now || (at <= now + putBackBatchWindowMs && !this.attempts.has(name))) due.push(entry);
    }
    if (due.length === 0) return;
    for (const entry of due) this.cancelTimer(entry.node);
    const outcomes = await mapBounded(due, this.options.concurrency, async (entry) => ({ entry, ...(await this.putBack(entry)) }));
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
  private whenSynced(entry: PendingPutBack): void {
    if (this.waitingForSync.has(entry.node)) return;
    this.waitingForSync.add(entry.node);
    void this.options.nodes.whenSynced().then(() => {
      this.waitingForSync.delete(entry.node);
      if (this.pending.get(entry.node) === entry) this.schedule(entry, 0);
    });
  }

  /**
   * Puts one node back if it still has one of our specs. Unreachable, or missing from the fleet:
   * kept and retried with backoff; missing for putBackAbsenceLimitMs: given up (failed, final).
   */
  private async putBack(entry: PendingPutBack): Promise<{ result: NodePutBack; final: boolean }> {
    const { scheduler } = this.options;
    const attempts = (this.attempts.get(entry.node) ?? 0) + 1;
    this.attempts.set(entry.node, attempts);
    const node = this.options.nodes.byName(entry.node);
    let result: NodePutBack;
    let final: boolean;
    if (node === undefined) {
      const since = this.absentSince.get(entry.node) ?? scheduler.now();
      this.absentSince.set(entry.node, since);
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
      this.absentSince.delete(entry.node);
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
    if (!final) {
      this.schedule(entry, backoffDelay(this.options.retry ?? putBackRetry, attempts, this.options.random ?? Math.random));
    } else {
      this.attempts.delete(entry.node);
      this.absentSince.delete(entry.node);
      this.cancelTimer(entry.node);
      this.pending.delete(entry.node);
    }
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
          `${node.name}=${node.result}${(node.attempts ?? 1) > 1 ? ` after ${node.attempts} attempts` : ''}${node.result === 'failed' && node.error ? ` (${node.error}${this.pending.has(node.name) ? '; tried again with backoff' : ''})` : ''}`,
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
    const entries = [...this.pending.values()];
    const text = JSON.stringify(entries);
    if (text === this.saved) return;
    await this.options.store.save(entries);
    this.saved = text;
  }
}
