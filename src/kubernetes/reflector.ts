import { realScheduler, type Scheduler } from '../time';
import { messageOf } from '../errors';
import type { Logger } from '../logging/types';
import { backoffDelay, sleep, type BackoffPolicy } from '../retry';
import { bounded, KubernetesApiError } from './api-error';
import { statusCodeOf } from './recorder';
import { TokenBuckets } from './token-bucket';
import type { WatchStream } from './transport-options';

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';

/** What the reflector needs of a Kubernetes object: its name and the resourceVersion it was seen at. */
export interface ObjectWithMetadata {
  metadata?: { name?: string; namespace?: string; resourceVersion?: string };
}

/** list and watch of one collection (a resource in a namespace or in all, with its selectors), as the Kubernetes API offers them. */
export interface ListWatchApi<T> {
  /** `signal` aborts the list (the Reflector's stop). */
  list(signal?: AbortSignal): Promise<{ resourceVersion: string; items: T[] }>;
  /** `object` is a Status (with `code`) for an ERROR event, a bare object with metadata.resourceVersion for a BOOKMARK. */
  watch(resourceVersion: string, onEvent: (type: WatchEventType, object: T & { code?: number }) => void): WatchStream;
}

/**
 * What the reflector tells: after every (re)list the whole set (`replace`), then each change
 * from the watch. An object that leaves the selection (deleted, or relabelled out of a label
 * selector) comes to `remove`, as the API server sends it: a DELETED event.
 */
export interface ReflectorHandler<T> {
  replace(items: T[]): void;
  upsert(object: T): void;
  remove(object: T): void;
}

export interface ReflectorOptions<T> {
  api: ListWatchApi<T>;
  handler: ReflectorHandler<T>;
  /** What is watched, for the log lines: `cannot watch <what> (...)`, `watching <what> again`. */
  what: string;
  logger: Logger;
  /** Retry delays when the API server cannot be reached, answers 5xx or 429. */
  unreachableBackoff?: BackoffPolicy;
  /** Retry delays when the API server refuses (401, 403, other 4xx): someone has to act first. */
  refusedBackoff?: BackoffPolicy;
  /** List-and-watch cycles: a burst, then one per interval (a stream that ends at once cannot make the loop spin). */
  cycleBurst?: number;
  cycleIntervalMs?: number;
  random?: () => number;
  /** The clock of the cycle limit and the timers of the backoff and cycle waits (src/time.ts); default Node's. */
  scheduler?: Scheduler;
}

/**
 * A refused connection costs the API server nothing: retry within a second, so that a change
 * made once a restarted API server is ready is seen within 2 s.
 */
export const unreachableBackoff: BackoffPolicy = { initialMs: 200, maxMs: 1_000, factor: 2, jitter: 0.2 };
/** An answer that refuses (a revoked token, a Role without the verb) changes only when someone acts: up to 30 s, as client-go's reflector. */
export const refusedBackoff: BackoffPolicy = { initialMs: 1_000, maxMs: 30_000, factor: 2, jitter: 0.2 };

function isRefusal(status: number | undefined): boolean {
  return status !== undefined && status >= 400 && status < 500 && status !== 408 && status !== 429;
}

/**
 * client-go's reflector (ListAndWatch) for one collection, written here because client-node
 * 2.0.1's ListWatch/makeInformer is not faithful to it: ListWatch stops for good on the first
 * error (its caller must restart it, with no backoff), doubles a delay after every normal end
 * of a watch that carried no event (an idle watch ended by the server then waits up to 30 s),
 * and resets that delay on any event (a stream that ends after each event makes it spin).
 * Here:
 * - a watch that connected and then ended (the client's inactivity timeout, the server's
 *   timeoutSeconds, a dropped connection) is watched again at once from the last
 *   resourceVersion: an idle watch is normal, a real API server sends nothing on it;
 * - only real failures (no connection, a non-2xx answer, a malformed stream, an ERROR event
 *   other than 410, a handler that throws) back off, and the backoff is reset by a watch that
 *   connected and ended cleanly;
 * - a 410 (the resourceVersion is too old), as an ERROR event in the stream or as the answer,
 *   means: list again now, and hand the new set to `replace`;
 * - every list-and-watch cycle takes a token (burst, then one per second), so nothing spins;
 * - an outage is one warning when it starts and one info line when a watch works again.
 */
export class Reflector<T extends ObjectWithMetadata> {
  private readonly options: ReflectorOptions<T>;
  private readonly cycles: TokenBuckets;
  private readonly random: () => number;
  private resourceVersion = '';
  private stopped = false;
  private connection: WatchStream | null = null;
  /** Which watch is current: events of an older one (a double that keeps calling) are ignored. */
  private watchGeneration = 0;
  /** Set by the stream: a 410 (list again) or another ERROR event / a handler failure. */
  private streamOutcome: 'gone' | KubernetesApiError | null = null;
  private readonly scheduler: Scheduler;
  private listAbort: AbortController | null = null;
  /** Aborted by stop(): cuts a backoff or cycle wait, and makes any later one return at once. */
  private readonly stopping = new AbortController();
  /** The first failure of the current outage (logged once), null when none. */
  private outage: string | null = null;
  private lastProblem: string | null = null;
  /** The last failure came from a stream that had connected. */
  private streamFailed = false;
  private loop: Promise<void> | null = null;
  private isSynced = false;
  private resolveSynced!: () => void;
  private readonly syncedPromise: Promise<void>;

  constructor(options: ReflectorOptions<T>) {
    this.options = options;
    this.scheduler = options.scheduler ?? realScheduler;
    this.random = options.random ?? Math.random;
    this.cycles = new TokenBuckets(options.cycleBurst ?? 5, options.cycleIntervalMs ?? 1000, 1);
    this.syncedPromise = new Promise((resolve) => (this.resolveSynced = resolve));
  }

  /** True once the first list has been handed to `replace`. */
  get synced(): boolean {
    return this.isSynced;
  }

  /** Resolves at the first successful list (or when stopped). */
  whenSynced(): Promise<void> {
    return this.syncedPromise;
  }

  /** The last failure's message while the list or watch is failing, else null (for a status line). */
  get problem(): string | null {
    return this.lastProblem;
  }

  start(): void {
    this.loop ??= this.run();
  }

  /** Stops at once: an open watch and a list in flight are aborted, a sleep cut; nothing is handed on after it. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.listAbort?.abort();
    this.connection?.abort();
    this.stopping.abort();
    this.resolveSynced();
    await this.loop;
  }

  private async run(): Promise<void> {
    let failures = 0;
    while (!this.stopped) {
      // Cycles after a normal end are rate-limited; after a failure, the backoff alone spaces
      // them (both would add up to 2 s after an API-server restart).
      if (failures === 0) {
        const wait = this.cycles.waitMs('cycle', this.scheduler.now());
        if (wait > 0) await sleep(this.scheduler, wait, this.stopping.signal);
        if (this.stopped) break;
        this.cycles.take('cycle', this.scheduler.now());
      }
      let connected = false;
      try {
        if (this.resourceVersion === '') {
          this.listAbort = new AbortController();
          const list = await this.options.api.list(this.listAbort.signal);
          this.listAbort = null;
          if (this.stopped) break;
          this.options.handler.replace(list.items);
          // The API answered: the last failure is over for whoever reads `problem` (the log's recovery line waits for a watch).
          this.lastProblem = null;
          this.resourceVersion = list.resourceVersion;
          if (!this.isSynced) {
            this.isSynced = true;
            this.resolveSynced();
          }
        }
        this.streamOutcome = null;
        const generation = ++this.watchGeneration;
        const connection = this.options.api.watch(this.resourceVersion, (type, object) => {
          if (generation === this.watchGeneration) this.onWatchEvent(type, object);
        });
        this.connection = connection;
        if (this.stopped || this.streamOutcome !== null) connection.abort();
        await connection.connected;
        connected = true;
        // After a stream that broke once connected (a malformed line, an ERROR event), a new
        // connection proves nothing yet: the recovery is logged at its first good event or clean end.
        if (!this.streamFailed) this.recovered();
        await connection.ended;
        this.connection = null;
        const outcome = this.streamOutcome as 'gone' | KubernetesApiError | null;
        if (this.stopped) break;
        if (outcome instanceof KubernetesApiError) throw outcome;
        if (outcome === 'gone') this.relist();
        this.streamFailed = false;
        this.recovered();
        failures = 0;
      } catch (error) {
        this.connection = null;
        if (this.stopped) break;
        this.streamFailed = connected;
        if (statusCodeOf(error) === 410) {
          // Answered, not failed: list again as after an in-stream 410, within the cycle limit.
          this.relist();
          failures = 0;
          continue;
        }
        failures += 1;
        this.failed(error);
        const policy = isRefusal(statusCodeOf(error))
          ? (this.options.refusedBackoff ?? refusedBackoff)
          : (this.options.unreachableBackoff ?? unreachableBackoff);
        await sleep(this.scheduler, backoffDelay(policy, failures, this.random), this.stopping.signal);
      }
    }
  }

  private relist(): void {
    this.options.logger.debug(`${this.options.what}: resourceVersion ${this.resourceVersion} is too old; listing again`);
    this.resourceVersion = '';
  }

  private onWatchEvent(type: WatchEventType, object: T & { code?: number }): void {
    if (this.stopped || this.streamOutcome !== null) return;
    if (type === 'ERROR') {
      // A Status in the stream. 410 (Expired/Gone): the resourceVersion is too old, list again.
      this.streamOutcome = object.code === 410 ? 'gone' : KubernetesApiError.fromStatus(object);
      this.connection?.abort();
      return;
    }
    if (this.streamFailed) {
      this.streamFailed = false;
      this.recovered();
    }
    try {
      if (type === 'ADDED' || type === 'MODIFIED') this.options.handler.upsert(object);
      else if (type === 'DELETED') this.options.handler.remove(object);
    } catch (error) {
      // The event is not taken: the watch starts again from the resourceVersion before it (with backoff).
      this.streamOutcome = new KubernetesApiError(`${type} ${object.metadata?.name ?? '(no name)'} not handled: ${messageOf(error)}`);
      this.connection?.abort();
      return;
    }
    const version = object.metadata?.resourceVersion;
    if (version) this.resourceVersion = version;
  }

  private failed(error: unknown): void {
    const status = statusCodeOf(error);
    const problem = bounded(messageOf(error));
    this.lastProblem = problem;
    if (this.outage !== null) return;
    this.outage = problem;
    this.options.logger.warn(`cannot watch ${this.options.what} (${problem}); retrying with backoff`, { problem, status });
  }

  private recovered(): void {
    if (this.outage === null) return;
    this.outage = null;
    this.lastProblem = null;
    this.options.logger.info(`watching ${this.options.what} again`);
  }
}
