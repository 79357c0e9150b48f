import { FabricOpsError, messageOf } from '../errors';
import type { Logger } from '../logging/types';
import type { Counter } from '../metrics/types';
import { backoffDelay, sleep, type BackoffPolicy } from '../retry';
import { keepAliveScheduler, realScheduler, type Cancellable, type Scheduler } from '../time';
import { bounded, KubernetesApiError } from './api-error';
import { TokenBuckets } from './token-bucket';

export type EventType = 'Normal' | 'Warning';

/** The Pod the events are about (downward API: POD_NAME, POD_NAMESPACE, POD_UID). */
export interface PodReference {
  name: string;
  namespace: string;
  uid?: string;
}

/** A core/v1 Event as the recorder sends it. */
export interface CoreEventBody {
  apiVersion: 'v1';
  kind: 'Event';
  metadata: { name: string; namespace: string };
  involvedObject: { apiVersion: 'v1'; kind: 'Pod'; name: string; namespace: string; uid?: string };
  reason: string;
  message: string;
  type: EventType;
  count: number;
  firstTimestamp: string;
  lastTimestamp: string;
  source: { component: string; host?: string };
  reportingComponent: string;
  reportingInstance: string;
}

export interface EventPatch {
  count: number;
  lastTimestamp: string;
}

/** Where events go (the Kubernetes API in production). Rejects with an error carrying `statusCode` when the server answered. */
export interface EventSink {
  create(event: CoreEventBody): Promise<void>;
  patch(namespace: string, name: string, patch: EventPatch): Promise<void>;
}

export interface EventRecorderOptions {
  pod: PodReference;
  sink: EventSink;
  logger: Logger;
  /** Counts occurrences that never reached the API server (queue full, or refused as invalid). */
  dropped: Pick<Counter, 'add'>;
  /** Node name (`spec.nodeName`), for `source.host`. */
  host?: string;
  /** The clock of timestamps and rate limits, and the timers of the waits between writes (src/time.ts); default Node's. */
  scheduler?: Scheduler;
  /** Distinct events waiting for a write; the oldest is dropped beyond. Default 256. */
  queueLimit?: number;
  /** Writes per event key: burst, then one per refill interval; repeats in between are coalesced. */
  burst?: number;
  refillIntervalMs?: number;
  /** One API call's limit; a call that takes longer counts as failed. Default 10 s. */
  requestTimeoutMs?: number;
  /** Retry delays after a failed write: doubling from initial to max, each scaled by 0.8-1.2 (backoffDelay). */
  backoffInitialMs?: number;
  backoffMaxMs?: number;
  /** For the backoff's jitter; default Math.random. */
  random?: () => number;
}

const recorderDefaults = {
  queueLimit: 256,
  burst: 25,
  // client-go refills one token per 5 minutes and drops what exceeds it; we coalesce instead
  // (the count is never lost), so a faster refill only bounds how stale the count can be.
  refillIntervalMs: 10_000,
  requestTimeoutMs: 10_000,
  backoffInitialMs: 500,
  backoffMaxMs: 60_000,
  cacheLimit: 4096,
} as const;

const sourceComponent = 'fabric-ops';
const maxMessageLength = 1024;

interface Entry {
  readonly key: string;
  readonly type: EventType;
  readonly reason: string;
  readonly message: string;
  name: string;
  count: number;
  /** The count the API server has. */
  sentCount: number;
  firstMs: number;
  lastMs: number;
  created: boolean;
}

/** Status code of a failed API call, when the server answered. */
export function statusCodeOf(error: unknown): number | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  for (const field of ['status', 'statusCode', 'code']) {
    const value = (error as Record<string, unknown>)[field];
    if (typeof value === 'number' && value >= 100 && value <= 599) return value;
  }
  return undefined;
}

/** The API's own Status.message for a KubernetesApiError (it names verb, resource and user on a 403), bounded. */
function describe(error: unknown): string {
  if (error instanceof KubernetesApiError) return error.message;
  const status = statusCodeOf(error);
  const text = bounded(messageOf(error));
  return status === undefined ? text : `HTTP ${status}: ${text}`;
}

function kubernetesTime(ms: number): string {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z');
}

/** An Event write that got no answer within requestTimeoutMs (it counts as failed and is retried). */
export class EventWriteTimeoutError extends FabricOpsError {
  override readonly code = 'FABRIC_OPS_KUBERNETES_EVENT_TIMEOUT';
}

/**
 * Kubernetes' event recorder, the parts that matter here: identical events (type, reason,
 * message, object) become one Event whose count and lastTimestamp are patched; writes are
 * rate-limited per event; everything is asynchronous and bounded, so an API server that is
 * slow, down or refusing never reaches the caller of record(). An outage is logged once, when
 * it starts, and once when it ends.
 */
export class EventRecorder {
  private readonly options: EventRecorderOptions;
  private readonly scheduler: Scheduler;
  private readonly entries = new Map<string, Entry>();
  /** Keys waiting for a write, oldest first. */
  private readonly pending = new Map<string, Entry>();
  private readonly buckets: TokenBuckets;
  private readonly limits: { [K in keyof typeof recorderDefaults]: number };
  private running = false;
  private stopped = false;
  /** Set while the writer waits (for a token, or a backoff): aborting it wakes the writer. */
  private sleeping: AbortController | null = null;
  private outage: { since: number; problem: string; dropped: number } | null = null;
  private nameSequence = 0;

  constructor(options: EventRecorderOptions) {
    this.options = options;
    this.scheduler = options.scheduler ?? realScheduler;
    this.limits = {
      queueLimit: options.queueLimit ?? recorderDefaults.queueLimit,
      burst: options.burst ?? recorderDefaults.burst,
      refillIntervalMs: options.refillIntervalMs ?? recorderDefaults.refillIntervalMs,
      requestTimeoutMs: options.requestTimeoutMs ?? recorderDefaults.requestTimeoutMs,
      backoffInitialMs: options.backoffInitialMs ?? recorderDefaults.backoffInitialMs,
      backoffMaxMs: options.backoffMaxMs ?? recorderDefaults.backoffMaxMs,
      cacheLimit: recorderDefaults.cacheLimit,
    };
    this.buckets = new TokenBuckets(this.limits.burst, this.limits.refillIntervalMs);
  }

  /** Never throws, never waits. */
  record(type: EventType, reason: string, message: string): void {
    if (this.stopped) return;
    const text = message.length > maxMessageLength ? `${message.slice(0, maxMessageLength - 3)}...` : message;
    const key = `${type}\u0000${reason}\u0000${text}`;
    const nowMs = this.scheduler.now();
    let entry = this.entries.get(key);
    if (entry) {
      this.entries.delete(key); // re-inserted below: most recently used last
      entry.count += 1;
      entry.lastMs = nowMs;
    } else {
      entry = { key, type, reason, message: text, name: this.newName(nowMs), count: 1, sentCount: 0, firstMs: nowMs, lastMs: nowMs, created: false };
      if (this.entries.size >= this.limits.cacheLimit) {
        const oldest = this.entries.keys().next().value;
        if (oldest !== undefined && !this.pending.has(oldest)) this.entries.delete(oldest);
      }
    }
    this.entries.set(key, entry);
    if (!this.pending.has(key)) {
      if (this.pending.size >= this.limits.queueLimit) this.dropOldest();
      this.pending.set(key, entry);
    }
    this.kick();
  }

  /**
   * Resolves once nothing is pending (for tests and for a tidy stop); never rejects. `timeoutMs`
   * is real time, on timers that hold the process open: a stop's grace, whatever the scheduler.
   */
  async drain(timeoutMs: number): Promise<boolean> {
    const deadline = keepAliveScheduler.now() + timeoutMs;
    while (this.pending.size > 0 && keepAliveScheduler.now() < deadline) await sleep(keepAliveScheduler, 20);
    return this.pending.size === 0;
  }

  stop(): void {
    this.stopped = true;
    this.wake();
  }

  private dropOldest(): void {
    const oldest = this.pending.values().next().value;
    if (!oldest) return;
    this.pending.delete(oldest.key);
    this.entries.delete(oldest.key);
    this.countDropped(oldest.count - oldest.sentCount);
  }

  private countDropped(occurrences: number): void {
    if (occurrences <= 0) return;
    this.options.dropped.add(occurrences);
    if (this.outage) this.outage.dropped += occurrences;
  }

  private newName(nowMs: number): string {
    // client-go: <object name>.<UnixNano in hex>; the sequence keeps names unique within a millisecond.
    this.nameSequence = (this.nameSequence + 1) % 1_000_000;
    const nanos = BigInt(nowMs) * 1_000_000n + BigInt(this.nameSequence);
    return `${this.options.pod.name}.${nanos.toString(16)}`;
  }

  private kick(): void {
    if (this.outage === null) this.wake();
    if (this.running) return;
    this.running = true;
    void this.pump().finally(() => {
      this.running = false;
    });
  }

  /** Cuts the writer's wait, if it waits. */
  private wake(): void {
    const sleeping = this.sleeping;
    this.sleeping = null;
    sleeping?.abort();
  }

  private async wait(ms: number): Promise<void> {
    const sleeping = new AbortController();
    this.sleeping = sleeping;
    await sleep(this.scheduler, ms, sleeping.signal);
    if (this.sleeping === sleeping) this.sleeping = null;
  }

  private async pump(): Promise<void> {
    // The project's one backoff. With jitter: the fabric-ops of every node of a network retry
    // against one API server, and without it they would all retry in step after its outage.
    const backoff: BackoffPolicy = { initialMs: this.limits.backoffInitialMs, maxMs: this.limits.backoffMaxMs, factor: 2, jitter: 0.2 };
    let failures = 0;
    while (!this.stopped && this.pending.size > 0) {
      const nowMs = this.scheduler.now();
      let next: Entry | undefined;
      let waitMs = Infinity;
      for (const entry of this.pending.values()) {
        const wait = this.buckets.waitMs(entry.key, nowMs);
        if (wait === 0) {
          next = entry;
          break;
        }
        waitMs = Math.min(waitMs, wait);
      }
      if (!next) {
        await this.wait(waitMs);
        continue;
      }
      this.buckets.take(next.key, nowMs);
      const result = await this.write(next);
      if (result === 'retry') {
        failures += 1;
        await this.wait(backoffDelay(backoff, failures, this.options.random ?? Math.random));
        continue;
      }
      failures = 0;
    }
  }

  /** One create or patch of `entry` with its current count. */
  private async write(entry: Entry): Promise<'done' | 'retry'> {
    const count = entry.count;
    const { pod } = this.options;
    try {
      if (!entry.created) {
        await this.withTimeout(this.options.sink.create(this.body(entry, count)));
        entry.created = true;
      } else {
        await this.withTimeout(this.options.sink.patch(pod.namespace, entry.name, { count, lastTimestamp: kubernetesTime(entry.lastMs) }));
      }
    } catch (error) {
      const status = statusCodeOf(error);
      if (status === 404 && entry.created) {
        // The Event expired on the server (its TTL, an hour by default): start a new one.
        entry.created = false;
        entry.name = this.newName(this.scheduler.now());
        entry.sentCount = 0;
        return 'done';
      }
      if (status === 409 && !entry.created) {
        entry.name = this.newName(this.scheduler.now());
        return 'done';
      }
      if (status !== undefined && status >= 400 && status < 500 && status !== 403 && status !== 408 && status !== 429 && status !== 401) {
        // The server refuses this event for good (422 invalid, 400): retrying cannot help.
        this.pending.delete(entry.key);
        this.entries.delete(entry.key);
        this.countDropped(entry.count - entry.sentCount);
        this.options.logger.error(`Kubernetes refused event ${entry.reason}: ${describe(error)}; dropped`, { reason: entry.reason, status });
        return 'done';
      }
      this.startOutage(describe(error), status);
      return 'retry';
    }
    entry.sentCount = count;
    if (entry.count === count) this.pending.delete(entry.key);
    else {
      // More occurrences meanwhile: behind the others, for the next write.
      this.pending.delete(entry.key);
      this.pending.set(entry.key, entry);
    }
    this.endOutage();
    return 'done';
  }

  private body(entry: Entry, count: number): CoreEventBody {
    const { pod, host } = this.options;
    return {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name: entry.name, namespace: pod.namespace },
      involvedObject: { apiVersion: 'v1', kind: 'Pod', name: pod.name, namespace: pod.namespace, ...(pod.uid ? { uid: pod.uid } : {}) },
      reason: entry.reason,
      message: entry.message,
      type: entry.type,
      count,
      firstTimestamp: kubernetesTime(entry.firstMs),
      lastTimestamp: kubernetesTime(entry.lastMs),
      source: { component: sourceComponent, ...(host ? { host } : {}) },
      reportingComponent: sourceComponent,
      reportingInstance: pod.name,
    };
  }

  private withTimeout(call: Promise<void>): Promise<void> {
    const limit = this.limits.requestTimeoutMs;
    let timer: Cancellable | undefined;
    // Not the scheduler's unref'd timers: a write that hangs holds the process open until its limit, as the request would.
    const timeout = new Promise<never>((_, reject) => {
      timer = keepAliveScheduler.setTimeout(() => reject(new EventWriteTimeoutError(`no answer within ${limit} ms`)), limit);
    });
    call.catch(() => undefined); // a late rejection after the timeout is not unhandled
    return Promise.race([call, timeout]).finally(() => timer?.cancel());
  }

  private startOutage(problem: string, status: number | undefined): void {
    if (this.outage) return;
    this.outage = { since: this.scheduler.now(), problem, dropped: 0 };
    this.options.logger.warn(`cannot record Kubernetes events (${problem}); they are queued (at most ${this.limits.queueLimit}) and retried with backoff`, {
      problem,
      status,
    });
  }

  private endOutage(): void {
    if (!this.outage) return;
    const { since, dropped } = this.outage;
    this.outage = null;
    this.options.logger.info(
      `Kubernetes events are recorded again after ${Math.round((this.scheduler.now() - since) / 1000)} s; ${dropped} dropped meanwhile`,
      {
        dropped,
      },
    );
  }
}
