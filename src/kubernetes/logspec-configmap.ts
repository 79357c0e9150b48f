import { createHash } from 'node:crypto';
import { messageOf } from '../errors';
import { formatLogSpec, parseLogSpec } from '../logging/spec';
import type { Logger } from '../logging/types';
import { backoffDelay, type BackoffPolicy } from '../metrics/statsd/backoff';
import { bounded, KubernetesApiError } from './api-error';
import { statusCodeOf } from './recorder';
import { TokenBuckets } from './token-bucket';
import type { WatchStream } from './transport-options';

export interface ConfigMapLike {
  metadata?: { name?: string; namespace?: string; resourceVersion?: string };
  data?: Record<string, string>;
}

/** One watch connection (see transport.ts): `connected` once the server answered 200, `ended` when the stream ended. */
export type WatchConnection = WatchStream;

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';

/** list and watch of one ConfigMap (fieldSelector metadata.name=<name>), as the Kubernetes API offers them. */
export interface ConfigMapApi {
  list(): Promise<{ resourceVersion: string; items: ConfigMapLike[] }>;
  watch(resourceVersion: string, onEvent: (type: WatchEventType, object: ConfigMapLike & { code?: number }) => void): WatchConnection;
}

export interface LogSpecConfigMapOptions {
  api: ConfigMapApi;
  namespace: string;
  name: string;
  key: string;
  /** Activates a spec as PUT /logspec does; throws LogSpecError when invalid. */
  setLogSpec: (spec: string, actor: string) => void;
  /** The active spec, normalised. */
  getLogSpec: () => string;
  /** A value refused before it reached setLogSpec (too long): for a Warning Event. */
  onRefused?: (message: string) => void;
  logger: Logger;
  /** Retry delays when the API server cannot be reached, answers 5xx or 429. */
  unreachableBackoff?: BackoffPolicy;
  /** Retry delays when the API server refuses (401, 403, other 4xx): someone has to act first. */
  refusedBackoff?: BackoffPolicy;
  /** List-and-watch cycles: a burst, then one per interval (a stream that ends at once cannot make the loop spin). */
  cycleBurst?: number;
  cycleIntervalMs?: number;
  random?: () => number;
  now?: () => number;
}

/**
 * A refused connection costs the API server nothing: retry within a second, so that a change
 * made once a restarted API server is ready is active within 2 s.
 */
export const unreachableBackoff: BackoffPolicy = { initialMs: 200, maxMs: 1_000, factor: 2, jitter: 0.2 };
/** An answer that refuses (a revoked token, a Role without the verb) changes only when someone acts: up to 30 s, as client-go's reflector. */
export const refusedBackoff: BackoffPolicy = { initialMs: 1_000, maxMs: 30_000, factor: 2, jitter: 0.2 };

/**
 * Longest value taken from the ConfigMap: what a PUT /logspec body can carry (16 KiB, less the
 * `{"spec":""}` around it), so a spec the ConfigMap can set, PUT can set too.
 */
export const maxConfigMapSpecBytes = 16 * 1024 - '{"spec":""}'.length;

function digest(value: string): string {
  return createHash('sha256').update(value).digest('base64');
}

function isRefusal(status: number | undefined): boolean {
  return status !== undefined && status >= 400 && status < 500 && status !== 408 && status !== 429;
}

/**
 * Watches one key of one ConfigMap and activates its value as the logging spec when it changes.
 * Only a change of the ConfigMap's value activates it: a re-list after a reconnect that finds
 * the same value leaves a later PUT /logspec in force. A deleted ConfigMap or key changes nothing.
 *
 * The loop is client-go's reflector (ListAndWatch), written here because client-node 2.0.1's
 * ListWatch/makeInformer is not faithful to it: ListWatch stops for good on the first error
 * (its caller must restart it, with no backoff), doubles a delay after every normal end of a
 * watch that carried no event (an idle watch ended by the server then waits up to 30 s), and
 * resets that delay on any event (a stream that ends after each event makes it spin).
 * Here:
 * - a watch that connected and then ended (the client's inactivity timeout, the server's
 *   timeoutSeconds, a dropped connection) is watched again at once from the last
 *   resourceVersion: an idle watch is normal, a real API server sends nothing on it;
 * - only real failures (no connection, a non-2xx answer, a malformed stream, an ERROR event
 *   other than 410) back off, and the backoff is reset by a watch that connected and ended
 *   cleanly;
 * - an ERROR event with code 410 (the resourceVersion is too old) means: list again now;
 * - every list-and-watch cycle takes a token (burst, then one per second), so nothing spins.
 */
export class LogSpecConfigMapWatcher {
  private readonly options: LogSpecConfigMapOptions;
  private readonly actor: string;
  private readonly cycles: TokenBuckets;
  private readonly now: () => number;
  private readonly random: () => number;
  private resourceVersion = '';
  /** Digest of the value last seen in the ConfigMap (applied, refused or equal to the active one). */
  private lastValue: string | undefined;
  private stopped = false;
  private connection: WatchConnection | null = null;
  /** Set by the stream: a 410 (list again) or another ERROR event (a failure). */
  private streamOutcome: 'gone' | KubernetesApiError | null = null;
  private sleepTimer: NodeJS.Timeout | undefined;
  private wakeSleep: (() => void) | null = null;
  private outage: string | null = null;
  /** The last failure came from a stream that had connected. */
  private streamFailed = false;
  private loop: Promise<void> | null = null;

  constructor(options: LogSpecConfigMapOptions) {
    this.options = options;
    this.actor = `configmap ${options.namespace}/${options.name}`;
    this.now = options.now ?? Date.now;
    this.random = options.random ?? Math.random;
    this.cycles = new TokenBuckets(options.cycleBurst ?? 5, options.cycleIntervalMs ?? 1000, 1);
  }

  start(): void {
    this.loop ??= this.run();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.connection?.abort();
    clearTimeout(this.sleepTimer);
    this.wakeSleep?.();
    await this.loop;
  }

  private get where(): string {
    return `ConfigMap ${this.options.namespace}/${this.options.name}`;
  }

  private async run(): Promise<void> {
    let failures = 0;
    while (!this.stopped) {
      // Cycles after a normal end are rate-limited; after a failure, the backoff alone spaces
      // them (both would add up to 2 s after an API-server restart).
      if (failures === 0) {
        const wait = this.cycles.waitMs('cycle', this.now());
        if (wait > 0) await this.sleep(wait);
        if (this.stopped) break;
        this.cycles.take('cycle', this.now());
      }
      let connected = false;
      try {
        if (this.resourceVersion === '') {
          const list = await this.options.api.list();
          const item = list.items.find((candidate) => candidate.metadata?.name === this.options.name);
          if (item) this.apply(item);
          this.resourceVersion = list.resourceVersion;
        }
        this.streamOutcome = null;
        const connection = this.options.api.watch(this.resourceVersion, (type, object) => this.onWatchEvent(type, object));
        this.connection = connection;
        if (this.stopped) connection.abort();
        await connection.connected;
        connected = true;
        // After a stream that broke once connected (a malformed line, an ERROR event), a new
        // connection proves nothing yet: the recovery is logged at its first good event or clean end.
        if (!this.streamFailed) this.recovered();
        await connection.ended;
        this.connection = null;
        const outcome = this.streamOutcome as 'gone' | KubernetesApiError | null;
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
        await this.sleep(backoffDelay(policy, failures, this.random));
      }
    }
  }

  private relist(): void {
    this.options.logger.debug(`${this.where}: resourceVersion ${this.resourceVersion} is too old; listing again`);
    this.resourceVersion = '';
  }

  private onWatchEvent(type: WatchEventType, object: ConfigMapLike & { code?: number }): void {
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
    const version = object.metadata?.resourceVersion;
    if (version) this.resourceVersion = version;
    if (type === 'ADDED' || type === 'MODIFIED') {
      if (object.metadata?.name === this.options.name) this.apply(object);
    } else if (type === 'DELETED' && object.metadata?.name === this.options.name) {
      this.options.logger.info(`${this.where} was deleted; the logging specification stays '${bounded(this.options.getLogSpec())}'`);
    }
  }

  private apply(configMap: ConfigMapLike): void {
    const raw = configMap.data?.[this.options.key];
    if (raw === undefined) {
      if (this.lastValue !== undefined || configMap.data !== undefined) {
        this.options.logger.warn(`${this.where} has no key ${this.options.key}; the logging specification is unchanged`);
      }
      return;
    }
    // A value written from a file ends with a newline; the spec grammar has no blanks.
    const value = raw.trim();
    const seen = digest(value);
    if (seen === this.lastValue) return;
    this.lastValue = seen;
    const active = this.options.getLogSpec();
    const bytes = Buffer.byteLength(value);
    if (bytes > maxConfigMapSpecBytes) {
      const problem = `the value is ${bytes} bytes, more than the ${maxConfigMapSpecBytes} a logging specification may have ('${bounded(value, 100)}')`;
      this.refuse(problem, value, active);
      this.options.onRefused?.(`${problem} (from ${this.actor}); the active specification stays '${bounded(active)}'`);
      return;
    }
    let normalised: string | undefined;
    try {
      normalised = formatLogSpec(parseLogSpec(value));
    } catch {
      normalised = undefined; // setLogSpec refuses it below, with its Event
    }
    // Nothing would change: no Event, no "changed" line.
    if (normalised === active) return;
    try {
      this.options.setLogSpec(value, this.actor);
    } catch (error) {
      this.refuse(messageOf(error), value, active);
    }
  }

  private refuse(problem: string, value: string, active: string): void {
    this.options.logger.warn(`${this.where} key ${this.options.key}: ${bounded(problem)}; the active specification stays '${bounded(active)}'`, {
      configMap: `${this.options.namespace}/${this.options.name}`,
      key: this.options.key,
      value: bounded(value, 100),
    });
  }

  private failed(error: unknown): void {
    const status = statusCodeOf(error);
    const problem = bounded(messageOf(error));
    if (this.outage !== null) return;
    this.outage = problem;
    this.options.logger.warn(`cannot watch ${this.where} (${problem}); retrying with backoff`, { problem, status });
  }

  private recovered(): void {
    if (this.outage === null) return;
    this.outage = null;
    this.options.logger.info(`watching ${this.where} again`);
  }

  private sleep(ms: number): Promise<void> {
    if (this.stopped) return Promise.resolve();
    return new Promise((resolve) => {
      this.wakeSleep = () => {
        this.wakeSleep = null;
        clearTimeout(this.sleepTimer);
        resolve();
      };
      this.sleepTimer = setTimeout(() => this.wakeSleep?.(), ms);
    });
  }
}
