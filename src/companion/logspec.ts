/**
 * Companion mode, the node's log level (issue 29 item 3; docs/companion.md, "The node's log level").
 *
 * - Reads and sets the node's own `/logspec` over its operations endpoint (address and TLS from the
 *   node's configuration, fabric-ops' own client certificate when one is configured).
 * - A write with a TTL puts the spec from before it back when it is due, under the fleet's rules:
 *   only if the node still holds one of the specs the companion set (else someone else changed it,
 *   and it is left alone); written ahead to the state file (the fleet's FilePutBackStore) before
 *   the node is changed, so a companion that restarts finds it and runs it (at once when overdue);
 *   retried with backoff while the node cannot be reached.
 * - The declared spec (the logspec ConfigMap's, through src/kubernetes) is applied when declared
 *   and held on the node: a poll that finds the node answering again after it was unreachable,
 *   or answering a spec the companion did not set (a restarted node starts from its core.yaml or
 *   FABRIC_LOGGING_SPEC), applies it again. A TTL write in force is left to its put-back, which
 *   then puts the declared spec rather than the one from before.
 *
 * Every change is an audit line naming who asked (the client certificate's subject, or the
 * ConfigMap) and, when Kubernetes Events are on, an Event. Node calls, writes and put-backs run one
 * at a time (a queue), so that no two read "the current spec" between each other's write.
 */
import { ConfigError, FabricOpsError, messageOf } from '../errors';
import type { CompanionConfig, Dialect } from '../config/types';
import { NodeClient, errorText } from '../fleet/client';
import type { GroupMaterial } from '../fleet/credentials';
import type * as PutBackStoreModule from '../fleet/putback-store';
import type { PendingPutBack, PutBackStore } from '../fleet/putback-store';
import type { CallFailureReason, FleetNode } from '../fleet/types';
import type { EventType } from '../kubernetes/recorder';
import { formatLogSpec, parseLogSpec } from '../logging/spec';
import type { Logger } from '../logging/types';
import { backoffDelay, type BackoffPolicy } from '../retry';
import type { Counter, MetricsProvider } from '../metrics/types';
import { clip, oneLine, quote } from '../text';
import { realScheduler, type Cancellable, type Scheduler } from '../time';
import { companionKeysFor } from '../config/companion-keys';
import { readNodeClientMaterial } from './node-health';

/** A write through the companion that cannot be carried out as asked (400); the node was not touched. */
export class NodeLogSpecRequestError extends FabricOpsError {
  override readonly code = 'FABRIC_OPS_COMPANION_LOGSPEC_REQUEST';
}

/** A TTL's bounds, as the fleet's (1s to 7 days; fleet/logspec.ts is not imported here: it loads zod). */
const minTtlMs = 1000;
const maxTtlMs = 7 * 24 * 3_600_000;

/** The state file in `operations.companion.logspec.stateDirectory`. */
export const putBackFileName = 'companion-putbacks.json';

/** A node that cannot be reached at put-back time is tried again: 1 s, 2 s, ... up to a minute (the fleet's policy). */
const putBackRetry: BackoffPolicy = { initialMs: 1000, maxMs: 60_000, factor: 2, jitter: 0.2 };

/** Events held before the Kubernetes integration (which starts after the server listens) takes them. */
const maxHeldEvents = 64;

/** Longest echo of a spec or an actor in an Event or a log line. */
const maxEcho = 200;

/** A node's /logspec answer is `{"spec": ...}` of at most 16 KiB; more is not a Fabric node. */
const maxAnswerBytes = 64 * 1024;

/** The companion's metric of its writes to the node (docs/companion.md, "Metrics"). */
export const logSpecMetricOptions = {
  writes: {
    namespace: 'companion',
    subsystem: 'logspec',
    name: 'writes',
    help: "Writes to the node's logging spec by trigger (request, declared, restart, putback) and result (applied, skipped_changed, failed)",
    labelNames: ['trigger', 'result'],
    statsdFormat: '%{#fqname}.%{trigger}.%{result}',
  },
} as const;

/** Why a call to the node's /logspec gave no spec or took none: a call failure, or the node refused the spec (`rejected`, its 400). */
export type NodeLogSpecFailure = { ok: false; reason: CallFailureReason | 'rejected'; error: string };

export type NodeLogSpecRead = { ok: true; /** As the node answered it. */ raw: string; /** Normalised. */ spec: string } | NodeLogSpecFailure;

export type NodeLogSpecWrite = { ok: true; previous: string | null; spec: string; putBackAt: string | null } | NodeLogSpecFailure;

/** Who writes: the client certificate's subject, and its issuer and fingerprint as audit fields. */
export interface NodeLogSpecWriter {
  actor: string;
  fields: Readonly<Record<string, string>>;
}

export type RecordEvent = (type: EventType, reason: string, message: string) => void;

export interface NodeLogSpecOptions {
  /** The node: `name` names it in the state file (its `host:port`), `url` is called. */
  node: FleetNode;
  client: Pick<NodeClient, 'call'>;
  /** Where pending put-backs are kept; null: a TTL is refused. */
  store: PutBackStore | null;
  /** Key names, for messages. */
  keys: { stateDirectory: string };
  scheduler: Scheduler;
  logger: Logger;
  pollIntervalMs: number;
  writes: Counter;
  /** Hold Events until recordEventsWith (Kubernetes Events are on): what happens at start is recorded too. */
  holdEvents: boolean;
  retry?: BackoffPolicy;
  random?: () => number;
}

/**
 * Pure: a spec as the node answers it, normalised as fabric-ops writes specs. flogging prints the
 * `payload` level as `Level(-2)`, which it does not take back: read as `payload`. A spec that does
 * not parse is kept as it is (it then equals none of the companion's).
 */
export function normaliseNodeSpec(spec: string): string {
  const text = spec.replace(/(^|[=:])Level\(-2\)(?=$|:)/g, '$1payload');
  try {
    return formatLogSpec(parseLogSpec(text));
  } catch {
    return spec;
  }
}

/** Pure: why a TTL of `ms` is refused, or null. */
export function ttlProblem(ms: number): string | null {
  if (Number.isInteger(ms) && ms >= minTtlMs && ms <= maxTtlMs) return null;
  return `${ms} ms is ${ms < minTtlMs ? 'shorter than the minimum, 1s' : 'longer than the maximum, 168h (7 days)'}; a TTL is a Go duration from 1s to 168h`;
}

const single = (spec: string): string => quote(spec, maxEcho, 'single');

/** The node's logging spec, read, set with a TTL, and held at the declared spec. */
export class NodeLogSpec {
  private declaredSpec: string | null = null;
  private declaredBy = '';
  /** The spec the companion last found on the node or set there (normalised); null: not known yet. */
  private expected: string | null = null;
  /** The last call found no answer: the node may be restarting. */
  private down = false;
  /** A write of the declared spec failed, and the failure was reported (once until one succeeds). */
  private applyFailing = false;
  private pending: PendingPutBack | null = null;
  private putBackTimer: Cancellable | null = null;
  private attempts = 0;
  private pollTimer: Cancellable | null = null;
  /** The put-backs as last written to the store (JSON). */
  private saved: string | undefined;
  private queue: Promise<unknown> = Promise.resolve();
  private stopped = false;
  private record: RecordEvent | null = null;
  private held: Array<[EventType, string, string]> | null;

  constructor(private readonly options: NodeLogSpecOptions) {
    this.held = options.holdEvents ? [] : null;
  }

  get url(): string {
    return `${this.options.node.url}/logspec`;
  }

  /** Loads the pending put-back (ConfigError naming the state key when the state file is unusable), schedules it, starts the poll. */
  async start(): Promise<void> {
    const { store, logger, node, keys } = this.options;
    if (store !== null) {
      let entries: PendingPutBack[];
      try {
        entries = await store.load();
      } catch (error) {
        if (error instanceof ConfigError)
          throw new ConfigError(error.problems.map((problem) => problem.replace(/^stateDirectory: /, `${keys.stateDirectory}: `)));
        throw error;
      }
      const ours = entries.filter((entry) => entry.node === node.name);
      for (const entry of entries.filter((candidate) => candidate.node !== node.name)) {
        logger.warn(`pending put-back in ${store.where} for node ${entry.node}, which is not this companion's node (${node.name}); dropped`, {
          node: entry.node,
          previous: entry.previous,
        });
      }
      const [entry] = ours;
      if (entry !== undefined) {
        this.pending = entry;
        if (ours.length === entries.length) this.saved = JSON.stringify(ours);
        logger.info(
          `pending put-back of the node's logging spec to ${single(entry.previous)} loaded from ${store.where}, due ${new Date(entry.dueAt).toISOString()}`,
          {
            previous: entry.previous,
            specs: entry.specs,
            actor: entry.actor,
          },
        );
        this.schedulePutBack(entry);
      }
    }
    this.schedulePoll();
  }

  /** Stops the timers and waits for the call in progress. A pending put-back stays in the state file for the next start. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.pollTimer?.cancel();
    this.pollTimer = null;
    this.putBackTimer?.cancel();
    this.putBackTimer = null;
    await this.idle();
  }

  /** Waits for queued work (tests, stop). */
  idle(): Promise<void> {
    return this.queue.then(() => undefined);
  }

  /** The pending put-back (a copy), or null. */
  pendingPutBack(): PendingPutBack | null {
    return this.pending === null ? null : { ...this.pending, specs: [...this.pending.specs] };
  }

  /** Kubernetes Events from now on (null: none); those held since the start go first. */
  recordEventsWith(record: RecordEvent | null): void {
    const held = this.held ?? [];
    this.held = null;
    this.record = record;
    if (record !== null) for (const [type, reason, message] of held) record(type, reason, message);
  }

  /** The declared spec, normalised; '' before any. */
  declared(): string {
    return this.declaredSpec ?? '';
  }

  /**
   * Declares the spec the node is to have (the logspec ConfigMap's value) and applies it: now, or
   * when a TTL write in force ends. Throws LogSpecError when it does not parse (nothing changes).
   */
  declare(spec: string, actor: string): void {
    let normal: string;
    try {
      normal = formatLogSpec(parseLogSpec(spec));
    } catch (error) {
      const stays =
        this.declaredSpec === null ? 'no specification is declared for the node' : `the node's declared specification stays ${single(this.declaredSpec)}`;
      this.event('Warning', 'NodeLogSpecRefused', `${messageOf(error)} (from ${clip(actor, maxEcho)}); ${stays}`);
      throw error;
    }
    this.declaredSpec = normal;
    this.declaredBy = actor;
    this.options.logger.info(`node logging specification ${single(normal)} declared by ${actor}`, { audit: 'companion.logspec.declared', actor, spec: normal });
    void this.serial(() => this.reconcile('declared'));
  }

  /** GET: the node's spec now. */
  async read(): Promise<NodeLogSpecRead> {
    return await this.readSpec();
  }

  /**
   * PUT: sets the node's spec; with `ttlMs`, puts the spec from before back when it is due.
   * Throws LogSpecError (a spec that does not parse), NodeLogSpecRequestError (a bad TTL, or no
   * state directory) and PutBackPersistError (the put-back could not be written ahead): the node
   * was not touched. A failed call is a result (`ok: false`), reported as such.
   */
  async set(spec: string, ttlMs: number | null, writer: NodeLogSpecWriter): Promise<NodeLogSpecWrite> {
    const normal = formatLogSpec(parseLogSpec(spec));
    if (ttlMs !== null) {
      const problem = ttlProblem(ttlMs);
      if (problem !== null) throw new NodeLogSpecRequestError(`ttl: ${problem}`);
      if (this.options.store === null) {
        throw new NodeLogSpecRequestError(
          `ttl: needs ${this.options.keys.stateDirectory}, where the put-back is kept until it is due, and it is not set; the node was not changed`,
        );
      }
    }
    return await this.serial(() => this.write(normal, ttlMs, writer));
  }

  private serial<T>(work: () => Promise<T>): Promise<T> {
    const result = this.queue.then(work, work);
    this.queue = result.catch(() => undefined);
    return result;
  }

  private async readSpec(): Promise<NodeLogSpecRead> {
    const outcome = await this.options.client.call(this.options.node, 'GET', '/logspec');
    if (!outcome.ok) return { ok: false, reason: outcome.reason, error: `${this.url}: ${outcome.error}` };
    const spec = (outcome.body as { spec?: unknown } | null | undefined)?.spec;
    if (outcome.status !== 200 || typeof spec !== 'string') {
      return { ok: false, reason: 'bad_response', error: `${this.url} answered ${outcome.status}: ${errorText(outcome.text)}` };
    }
    return { ok: true, raw: spec, spec: normaliseNodeSpec(spec) };
  }

  private async putSpec(spec: string): Promise<{ ok: true } | NodeLogSpecFailure> {
    const outcome = await this.options.client.call(this.options.node, 'PUT', '/logspec', { spec });
    if (!outcome.ok) return { ok: false, reason: outcome.reason, error: `${this.url}: ${outcome.error}` };
    if (outcome.status === 204 || outcome.status === 200) return { ok: true };
    if (outcome.status === 400) return { ok: false, reason: 'rejected', error: errorText(outcome.text) };
    return { ok: false, reason: 'bad_response', error: `${this.url} answered ${outcome.status} to PUT: ${errorText(outcome.text)}` };
  }

  private noteCall(result: { ok: boolean; reason?: string }): void {
    if (result.ok) this.down = false;
    else if (result.reason === 'unreachable' || result.reason === 'timeout') this.down = true;
  }

  private async write(spec: string, ttlMs: number | null, writer: NodeLogSpecWriter): Promise<NodeLogSpecWrite> {
    const { scheduler, logger } = this.options;
    const dueAt = ttlMs === null ? null : scheduler.now() + ttlMs;
    // 1. The spec the node has now: what a TTL puts back (and what the audit line says it was).
    const before = await this.readSpec();
    this.noteCall(before);
    if (!before.ok && dueAt !== null) {
      return this.failedWrite(spec, ttlMs, writer, { ...before, error: `reading the node's current spec: ${before.error}` });
    }
    const previous = before.ok ? before.spec : null;
    // 2. Write-ahead: the put-back is on disk before the node changes.
    const prior = this.pending;
    if (dueAt !== null && previous !== null) {
      this.pending = this.entryFor(previous, spec, dueAt, writer.actor);
      try {
        await this.persist();
      } catch (error) {
        this.pending = prior;
        throw error;
      }
    }
    // 3. The write.
    const put = await this.putSpec(spec);
    this.noteCall(put);
    if (!put.ok) {
      if (this.pending !== prior) {
        this.pending = prior;
        await this.persist().catch((error: unknown) => logger.error(messageOf(error)));
      }
      return this.failedWrite(spec, ttlMs, writer, put);
    }
    this.expected = spec;
    const putBackAt = dueAt === null ? null : new Date(dueAt).toISOString();
    if (dueAt !== null && this.pending !== null) {
      this.attempts = 0;
      this.schedulePutBack(this.pending);
    } else if (prior !== null) {
      // A write without TTL makes the spec permanent: the earlier put-back is dropped (the fleet's rule).
      this.dropPutBack();
      await this.persist().catch((error: unknown) => logger.error(messageOf(error)));
    }
    this.options.writes.with({ trigger: 'request', result: 'applied' }).add(1);
    const was = previous === null ? '' : ` from ${single(previous)}`;
    const forTtl = ttlMs === null ? '' : ` for ${ttlMs / 1000}s (put back at ${putBackAt})`;
    logger.info(`node logging specification changed${was} to ${single(spec)} by ${writer.actor}${forTtl}`, {
      audit: 'companion.logspec.set',
      actor: writer.actor,
      ...writer.fields,
      node: this.url,
      previous,
      spec,
      ttlMs,
      putBackAt,
    });
    this.event('Normal', 'NodeLogSpecChanged', `node logging specification changed${was} to ${single(spec)} by ${clip(writer.actor, maxEcho)}${forTtl}`);
    return { ok: true, previous, spec, putBackAt };
  }

  private failedWrite(spec: string, ttlMs: number | null, writer: NodeLogSpecWriter, failure: NodeLogSpecFailure): NodeLogSpecFailure {
    this.options.writes.with({ trigger: 'request', result: 'failed' }).add(1);
    const message = `node logging specification not changed to ${single(spec)} for ${writer.actor}: ${failure.reason === 'rejected' ? `the node refused it: ${failure.error}` : failure.error}`;
    this.options.logger.warn(message, {
      audit: 'companion.logspec.set',
      actor: writer.actor,
      ...writer.fields,
      node: this.url,
      spec,
      ttlMs,
      reason: failure.reason,
    });
    this.event('Warning', 'NodeLogSpecChangeFailed', oneLine(message, 1000));
    return failure;
  }

  /** A TTL write's put-back: one that is still ours keeps the spec from before the first write (the fleet's rule). */
  private entryFor(current: string, spec: string, dueAt: number, actor: string): PendingPutBack {
    const existing = this.pending;
    if (existing !== null && existing.specs.includes(current)) {
      return { ...existing, specs: [...existing.specs.filter((s) => s !== spec), spec], dueAt, actor };
    }
    return { node: this.options.node.name, previous: current, specs: [spec], dueAt, actor };
  }

  private dropPutBack(): void {
    this.putBackTimer?.cancel();
    this.putBackTimer = null;
    this.pending = null;
    this.attempts = 0;
  }

  private schedulePutBack(entry: PendingPutBack, delayMs?: number): void {
    if (this.stopped) return;
    this.putBackTimer?.cancel();
    const delay = delayMs ?? Math.max(0, entry.dueAt - this.options.scheduler.now());
    this.putBackTimer = this.options.scheduler.setTimeout(() => {
      this.putBackTimer = null;
      void this.serial(() => this.putBack(entry));
    }, delay);
  }

  /** Puts the node back if it still holds one of our specs: to the declared spec when there is one, else to the spec from before. */
  private async putBack(entry: PendingPutBack): Promise<void> {
    if (this.pending !== entry || this.stopped) return;
    const { logger } = this.options;
    this.attempts += 1;
    const attempts = this.attempts;
    const target = this.declaredSpec ?? entry.previous;
    const found = await this.readSpec();
    this.noteCall(found);
    let result: 'restored' | 'skipped_changed' | 'failed';
    let detail: string;
    if (!found.ok) {
      result = 'failed';
      detail = `reading the node's spec: ${found.error}`;
    } else if (!entry.specs.includes(found.spec)) {
      result = 'skipped_changed';
      detail = found.spec;
    } else {
      const put = await this.putSpec(target);
      this.noteCall(put);
      result = put.ok ? 'restored' : 'failed';
      detail = put.ok ? target : put.error;
      if (put.ok) this.expected = target;
    }
    const final = result !== 'failed';
    if (final) {
      this.dropPutBack();
      await this.persist().catch((error: unknown) => logger.error(messageOf(error)));
    } else {
      this.schedulePutBack(entry, backoffDelay(this.options.retry ?? putBackRetry, attempts, this.options.random ?? Math.random));
    }
    this.options.writes.with({ trigger: 'putback', result: result === 'restored' ? 'applied' : result }).add(1);
    // Said when it starts failing and when it ends (with the attempts), not at every retry.
    if (!final && attempts > 1) return;
    const after = attempts > 1 ? ` after ${attempts} attempts` : '';
    const ttlOf = `the TTL of ${clip(entry.actor, maxEcho)} ended`;
    const fields = {
      audit: 'companion.logspec.putback',
      actor: entry.actor,
      node: this.url,
      result,
      previous: entry.previous,
      specs: entry.specs,
      target,
      attempts,
    };
    if (result === 'restored') {
      const declared = this.declaredSpec === null ? '' : ` (the declared specification, from ${this.declaredBy})`;
      const message = `node logging specification put back to ${single(target)}${declared}: ${ttlOf}${after}`;
      logger.info(message, fields);
      this.event('Normal', 'NodeLogSpecPutBack', message);
    } else if (result === 'skipped_changed') {
      const message =
        detail === target
          ? `node logging specification already at ${single(target)}, nothing to put back (${ttlOf})`
          : `node logging specification left at ${single(detail)}, not put back to ${single(target)}: it was changed since (${ttlOf})`;
      logger.info(message, { ...fields, spec: detail });
      this.event('Normal', 'NodeLogSpecPutBack', message);
    } else {
      const message = `node logging specification not put back to ${single(target)} (${ttlOf}): ${detail}; tried again with backoff`;
      logger.warn(message, fields);
      this.event('Warning', 'NodeLogSpecPutBackFailed', oneLine(message, 1000));
    }
  }

  private schedulePoll(): void {
    if (this.stopped) return;
    this.pollTimer = this.options.scheduler.setTimeout(() => {
      this.pollTimer = null;
      const next = (): void => this.schedulePoll();
      void this.serial(() => this.reconcile('poll')).then(next, next);
    }, this.options.pollIntervalMs);
  }

  /**
   * Holds the node at the declared spec. `declared`: it was just declared (applied unless a TTL
   * write of ours is in force). `poll`: applied again when the node was unreachable and answers,
   * or answers a spec the companion neither found nor set (it restarted, or it was changed on its
   * own endpoint): a write through the companion holds until then.
   */
  private async reconcile(trigger: 'declared' | 'poll'): Promise<void> {
    const declared = this.declaredSpec;
    if (declared === null || this.stopped) return;
    const { logger } = this.options;
    const found = await this.readSpec();
    if (!found.ok) {
      const first = !this.down;
      this.noteCall(found);
      if (trigger === 'declared' || (first && this.down)) {
        logger.warn(
          `the node's logging specification cannot be read (${found.error}); the declared specification ${single(declared)} is applied when it answers`,
          {
            node: this.url,
            reason: found.reason,
          },
        );
      }
      return;
    }
    const wasDown = this.down;
    this.down = false;
    const current = found.spec;
    if (current === declared) {
      this.expected = current;
      this.applyFailing = false;
      return;
    }
    const pending = this.pending;
    if (pending !== null && pending.specs.includes(current) && !wasDown) {
      // A TTL write of ours is in force: its put-back puts the declared spec.
      if (trigger === 'declared') {
        logger.info(
          `the node holds ${single(current)}, set by ${pending.actor} until ${new Date(pending.dueAt).toISOString()}: the declared specification ${single(declared)} is put then`,
          { node: this.url, spec: current, declared },
        );
      }
      this.expected = current;
      return;
    }
    if (trigger === 'poll' && !wasDown && current === this.expected) return;
    const restart = trigger === 'poll';
    const put = await this.putSpec(declared);
    this.noteCall(put);
    const metricTrigger = restart ? 'restart' : 'declared';
    if (!put.ok) {
      this.options.writes.with({ trigger: metricTrigger, result: 'failed' }).add(1);
      if (this.applyFailing) return;
      this.applyFailing = true;
      const why = put.reason === 'rejected' ? `the node refused it: ${put.error}` : put.error;
      const message = `the declared node logging specification ${single(declared)} (from ${clip(this.declaredBy, maxEcho)}) was not applied: ${why}; tried again every ${this.options.pollIntervalMs / 1000}s`;
      logger.warn(message, { node: this.url, declared, reason: put.reason });
      this.event('Warning', 'NodeLogSpecDeclaredFailed', oneLine(message, 1000));
      return;
    }
    this.applyFailing = false;
    this.expected = declared;
    this.options.writes.with({ trigger: metricTrigger, result: 'applied' }).add(1);
    const fields = {
      audit: restart ? 'companion.logspec.restored' : 'companion.logspec.applied',
      actor: this.declaredBy,
      node: this.url,
      previous: current,
      spec: declared,
    };
    if (restart) {
      const seen = wasDown ? `answers again, with ${single(current)}` : `answers ${single(current)}, which the companion did not set`;
      const message = `the node ${seen} (a restart): the declared specification ${single(declared)} from ${clip(this.declaredBy, maxEcho)} is applied again`;
      logger.info(message, fields);
      this.event('Normal', 'NodeLogSpecRestored', message);
    } else {
      const message = `node logging specification changed from ${single(current)} to ${single(declared)} by ${clip(this.declaredBy, maxEcho)}`;
      logger.info(message, fields);
      this.event('Normal', 'NodeLogSpecChanged', message);
    }
  }

  /** Writes the pending put-back when it differs from what was last written. */
  private async persist(): Promise<void> {
    const { store } = this.options;
    if (store === null) return;
    const entries = this.pending === null ? [] : [this.pending];
    const text = JSON.stringify(entries);
    if (text === this.saved) return;
    await store.save(entries);
    this.saved = text;
  }

  private event(type: EventType, reason: string, message: string): void {
    if (this.record !== null) {
      this.record(type, reason, message);
      return;
    }
    if (this.held === null) return;
    if (this.held.length >= maxHeldEvents) this.held.shift();
    this.held.push([type, reason, message]);
  }
}

/** The node's operations endpoint as the companion calls it. */
function nodeTarget(node: CompanionConfig['node'], dialect: Dialect): FleetNode {
  const { host, port } = node.address;
  const urlHost = host.includes(':') ? `[${host}]` : host;
  return {
    name: `${host}:${port}`,
    url: `${node.tls.enabled ? 'https' : 'http'}://${urlHost}:${port}`,
    dialect,
    labels: {},
    group: 'node',
    ...(node.tls.enabled && node.tls.serverName !== host ? { tlsServerName: node.tls.serverName } : {}),
  };
}

export interface NodeLogSpecHost {
  readonly dialect: Dialect;
  /** The call's own bound (the health checkers' timeout). */
  readonly timeoutMs: number;
  readonly metrics: MetricsProvider;
  readonly logger: Logger;
  readonly kubernetesEvents: boolean;
}

/**
 * The put-back store, loaded only with a state directory (a TTL needs one): node:fs/promises, which
 * it uses, loads Node's readline and REPL-history modules (docs/companion.md, "Footprint").
 */
function filePutBackStore(stateDirectory: string): PutBackStore {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- only with a state directory (the companion's footprint)
  const { FilePutBackStore } = require('../fleet/putback-store') as typeof PutBackStoreModule;
  return new FilePutBackStore(stateDirectory, { fileName: putBackFileName });
}

/**
 * The companion's NodeLogSpec, from its configuration: the node's client material read now
 * (ConfigError naming the key), and again before each call (a rotated file is used from the next
 * call; a file that cannot be read then keeps the former material).
 */
export function createNodeLogSpec(companion: CompanionConfig, host: NodeLogSpecHost, scheduler: Scheduler = realScheduler): NodeLogSpec {
  const { tls } = companion.node;
  let material: GroupMaterial | null = tls.enabled ? readNodeClientMaterial(host.dialect, tls) : null;
  const reload = (): void => {
    if (material === null) return;
    try {
      const fresh = readNodeClientMaterial(host.dialect, tls);
      if (fresh.cert !== material.cert || fresh.key !== material.key || fresh.ca.join('') !== material.ca.join('')) material = fresh;
    } catch {
      // The former material stays; the node checker reports the file.
    }
  };
  const client = new NodeClient({ timeoutMs: host.timeoutMs, maxResponseBytes: maxAnswerBytes, scheduler, material: () => material });
  const keys = companionKeysFor(host.dialect);
  if (tls.enabled && tls.certFile === '') {
    // Fabric's /logspec demands a client certificate whenever its TLS is on (clientAuthRequired or not).
    host.logger.warn(
      `the node's /logspec needs a client certificate from its ${host.dialect === 'peer' ? 'operations.tls.clientRootCAs.files' : 'Operations.TLS.ClientRootCAs'}, and ${keys.nodeClientCertFile} is not set: reading or setting the node's logging spec will be refused (401)`,
      { key: keys.nodeClientCertFile },
    );
  }
  const { stateDirectory, pollIntervalMs } = companion.logspec;
  return new NodeLogSpec({
    node: nodeTarget(companion.node, host.dialect),
    client: {
      call: (node, method, path, body, signal) => {
        reload();
        return client.call(node, method, path, body, signal);
      },
    },
    store: stateDirectory === '' ? null : filePutBackStore(stateDirectory),
    keys: { stateDirectory: keys.logspecStateDirectory },
    scheduler,
    logger: host.logger,
    pollIntervalMs,
    writes: host.metrics.newCounter(logSpecMetricOptions.writes),
    holdEvents: host.kubernetesEvents,
  });
}
