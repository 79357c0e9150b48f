import { ConfigError, messageOf } from '../errors';
import type { Logger } from '../logging/types';
import { backoffDelay, retry, type BackoffPolicy } from '../retry';
import { keepAliveScheduler, realScheduler, type Cancellable, type Scheduler } from '../time';
import { KubernetesApiError } from '../kubernetes/api-error';
import type { ConfigMapObject, ConfigMapObjectApi } from '../kubernetes/configmap-object';
import { Reflector, type ListWatchApi, type ReflectorOptions } from '../kubernetes/reflector';
import {
  formatPutBacks,
  parsePutBacks,
  PutBackPersistError,
  type FilePutBackStore,
  type PendingPutBack,
  type PutBackRewrite,
  type PutBackStore,
} from './putback-store';

/** The key of the ConfigMap's `data` that holds the put-back document (the same JSON as the file). */
export const putBackConfigMapKey = 'fleet-putbacks.json';

/**
 * What the API server accepts in one ConfigMap: the values of `data` and `binaryData` together at
 * most 1 MiB (kube-apiserver's ValidateConfigMap sums their lengths against core.MaxSecretSize;
 * keys are not counted).
 */
export const maxConfigMapBytes = 1024 * 1024;

/** Set on the ConfigMap when fabric-ops creates it, so `kubectl get cm -l app.kubernetes.io/managed-by=fabric-ops` finds it. */
export const putBackConfigMapLabels: Readonly<Record<string, string>> = {
  'app.kubernetes.io/name': 'fabric-ops',
  'app.kubernetes.io/managed-by': 'fabric-ops',
  'app.kubernetes.io/component': 'fleet-putbacks',
};

/** Writes tried when someone else changed or deleted the ConfigMap in between (409, 404): each one reads it again first. */
const maxWriteAttempts = 3;

/** Waits before the watch's repair reads and writes again after the API server failed it: 1 s doubling to 30 s. */
export const rewriteRetry: BackoffPolicy = { initialMs: 1000, maxMs: 30_000, factor: 2, jitter: 0.2 };

/** How a put-back ConfigMap stopped holding this process's put-backs. */
type Removal = PutBackRewrite['change'];

/** Pure: the bytes a ConfigMap's data takes in the API server's size check (the values; binaryData decoded from base64). */
function configMapDataBytes(object: Pick<ConfigMapObject, 'data' | 'binaryData'>): number {
  let bytes = 0;
  for (const value of Object.values(object.data ?? {})) bytes += Buffer.byteLength(value);
  for (const value of Object.values(object.binaryData ?? {})) bytes += Buffer.from(value, 'base64').length;
  return bytes;
}

/** What the watch needs of a ConfigMap: its name, resourceVersion and UID, and its data. */
export interface WatchedConfigMap {
  metadata?: { name?: string; namespace?: string; resourceVersion?: string; uid?: string };
  data?: Record<string, string>;
}

/** The watch of the put-back ConfigMap (ConfigMapPutBackStore.watch): list and watch by name, with the Reflector's settings. */
export interface PutBackConfigMapWatch extends Pick<
  ReflectorOptions<WatchedConfigMap>,
  'logger' | 'unreachableBackoff' | 'refusedBackoff' | 'cycleBurst' | 'cycleIntervalMs' | 'random' | 'scheduler'
> {
  /** list and watch with fieldSelector metadata.name=<name> (src/kubernetes/client.ts createConfigMapApi). */
  api: ListWatchApi<WatchedConfigMap>;
}

export interface ConfigMapPutBackStoreOptions {
  api: ConfigMapObjectApi;
  /** When given, watch() follows the ConfigMap and writes the pending put-backs again when someone else removes them. */
  watch?: PutBackConfigMapWatch;
  logger: Pick<Logger, 'warn' | 'info'>;
  key?: string;
  /** At start, an API server that does not answer (or answers 5xx, 429) is asked again with this backoff until `deadlineMs` has passed. */
  startRetry?: { policy: BackoffPolicy; deadlineMs: number };
  random?: () => number;
  /**
   * Waits between those attempts, and for a repair after a failed one. keepAliveScheduler by
   * default: real timers that keep the process alive (at start nothing else may: the server does
   * not listen yet, and an unref'd timer would let the start end in a silent exit).
   */
  scheduler?: Scheduler;
}

/**
 * A start that finds the API server down (a control-plane upgrade, a blip) waits up to 30 s for
 * it rather than exiting at once into a crash loop; a refusal (401, 403) ends the start at once.
 */
const startRetry: { policy: BackoffPolicy; deadlineMs: number } = {
  policy: { initialMs: 500, maxMs: 5_000, factor: 2, jitter: 0.2 },
  deadlineMs: 30_000,
};

function answeredForGood(error: unknown): boolean {
  const status = error instanceof KubernetesApiError ? error.status : undefined;
  return status !== undefined && status < 500 && status !== 408 && status !== 429;
}

/** Pure: `a, b, c` of the first `limit` names, then how many more. */
function nodeNames(nodes: readonly string[], limit = 10): string {
  const shown = nodes.slice(0, limit).join(', ');
  return nodes.length > limit ? `${shown} and ${nodes.length - limit} more` : shown;
}

/** `1 put-back was pending`, `5 put-backs were pending`. */
function pendingText(count: number): string {
  return count === 1 ? '1 put-back was pending' : `${count} put-backs were pending`;
}

const removalText: Record<Removal, string> = {
  deleted: 'was deleted',
  key_removed: 'lost its key',
  changed: 'had its key changed',
};

/** What the watch last saw of the ConfigMap: the object, or that it is gone (the UID of the one deleted, '' when a list lacked it). */
type Seen = { object: WatchedConfigMap } | { deletedUid: string };

/**
 * Pending put-backs in one ConfigMap of fabric-ops' namespace (fleet file: `stateConfigMap`),
 * under one key, as the same JSON document as the file. fabric-ops owns that key: there is one
 * fleet replica, so a write that finds the ConfigMap changed by someone else (409 Conflict) or
 * deleted (409 from the UID precondition, or 404) reads it again and writes its own put-backs
 * over the key. Other keys, labels and annotations someone put on the ConfigMap are kept.
 *
 * With `watch` given, watch() follows the ConfigMap (list and watch by name): when it is deleted,
 * or its key removed or changed to something that is not what this process wrote, while
 * put-backs are pending, they are written again at once, not at the next write (a crash before
 * that would lose the put-backs kept only there).
 */
export class ConfigMapPutBackStore implements PutBackStore {
  private readonly api: ConfigMapObjectApi;
  private readonly logger: Pick<Logger, 'warn' | 'info'>;
  private readonly startRetry: { policy: BackoffPolicy; deadlineMs: number };
  private readonly random: () => number;
  private readonly scheduler: Scheduler;
  private readonly watchOptions: PutBackConfigMapWatch | undefined;
  readonly key: string;
  /** The ConfigMap as last read or written (its resourceVersion goes with the next update); null: there is none; undefined: not known. */
  private current: ConfigMapObject | null | undefined;
  /** The put-backs as this process last wrote or read them under the key (the text and what it holds); null before that. */
  private kept: { text: string; pending: PendingPutBack[] } | null = null;
  /** Writes (save, and the watch's repairs) run one at a time: each uses and sets `current`. */
  private writes: Promise<unknown> = Promise.resolve();
  private reflector: Reflector<WatchedConfigMap> | null = null;
  private onRewritten: ((rewrite: PutBackRewrite) => void) | null = null;
  private seen: Seen | null = null;
  /** A repair is queued and has not started: what the watch sees meanwhile needs no other. */
  private repairQueued = false;
  private repairFailures = 0;
  private repairTimer: Cancellable | undefined;
  private watchStopped = false;

  constructor(options: ConfigMapPutBackStoreOptions) {
    this.api = options.api;
    this.logger = options.logger;
    this.key = options.key ?? putBackConfigMapKey;
    this.startRetry = options.startRetry ?? startRetry;
    this.random = options.random ?? Math.random;
    this.scheduler = options.scheduler ?? keepAliveScheduler;
    this.watchOptions = options.watch;
  }

  get where(): string {
    return `ConfigMap ${this.api.namespace}/${this.api.name} (key ${this.key})`;
  }

  /**
   * The put-backs the ConfigMap holds, or null when there is no ConfigMap or it has no such key
   * (one made empty beforehand). Throws ConfigError when the key holds something unusable, and
   * KubernetesApiError when the ConfigMap cannot be read: at once when the API server refuses
   * (401, 403), after `startRetry` when it does not answer.
   */
  async read(): Promise<PendingPutBack[] | null> {
    let object: ConfigMapObject | null;
    try {
      const read = await retry(() => this.api.get(), {
        policy: this.startRetry.policy,
        deadlineMs: this.startRetry.deadlineMs,
        scheduler: this.scheduler,
        random: this.random,
        giveUp: answeredForGood,
        onRetry: (error, failures) => {
          if (failures === 1) this.logger.warn(`cannot read ${this.where} (${messageOf(error)}); retrying for up to ${this.startRetry.deadlineMs / 1000} s`);
        },
      });
      object = read.value;
      if (read.failures > 0) this.logger.info(`${this.where}: read after ${read.failures} failed attempts`);
    } catch (error) {
      const status = error instanceof KubernetesApiError ? error.status : undefined;
      const reason = error instanceof KubernetesApiError ? error.reason : undefined;
      throw new KubernetesApiError(`stateConfigMap: cannot read the pending put-backs from ${this.where}: ${messageOf(error)}`, status, reason);
    }
    this.current = object;
    const text = object?.data?.[this.key];
    if (text === undefined) return null;
    const parsed = parsePutBacks(text);
    if (!parsed.ok) {
      throw new ConfigError([
        `stateConfigMap: ${this.where} ${parsed.problem}; fix the key, or remove it (kubectl edit configmap -n ${this.api.namespace} ${this.api.name}) to start without its put-backs`,
      ]);
    }
    this.kept = { text, pending: parsed.pending };
    return parsed.pending;
  }

  /** At start: the ConfigMap's put-backs; creates it (empty) when there is none, so that a missing permission shows now. */
  async load(): Promise<PendingPutBack[]> {
    const held = await this.read();
    if (held !== null) return held;
    await this.save([]);
    return [];
  }

  async save(pending: readonly PendingPutBack[]): Promise<void> {
    await this.exclusive(() => this.write(pending));
  }

  /**
   * From now on (with `watch` given; else nothing): follows the ConfigMap and, while put-backs
   * are pending, writes them again when someone else deleted it or removed or changed the key;
   * `onRewritten` is told of each such write (the fleet's Event).
   */
  watch(onRewritten: (rewrite: PutBackRewrite) => void): void {
    const options = this.watchOptions;
    if (options === undefined || this.reflector !== null) return;
    this.onRewritten = onRewritten;
    this.watchStopped = false;
    const name = this.api.name;
    this.reflector = new Reflector<WatchedConfigMap>({
      ...options,
      what: this.where,
      handler: {
        replace: (items) => {
          const object = items.find((item) => item.metadata?.name === name);
          this.observed(object === undefined ? { deletedUid: '' } : { object });
        },
        upsert: (object) => {
          if (object.metadata?.name === name) this.observed({ object });
        },
        remove: (object) => {
          if (object.metadata?.name === name) this.observed({ deletedUid: object.metadata.uid ?? '' });
        },
      },
    });
    this.reflector.start();
  }

  /** Ends the watch; resolves once a repair under way has ended. */
  async stop(): Promise<void> {
    this.watchStopped = true;
    this.repairTimer?.cancel();
    await this.reflector?.stop();
    this.reflector = null;
    await this.writes;
  }

  private exclusive<T>(work: () => Promise<T>): Promise<T> {
    const result = this.writes.then(work, work);
    this.writes = result.catch(() => undefined);
    return result;
  }

  /** The watch saw the ConfigMap: a repair is queued when it does not hold what this process last wrote while put-backs are pending. */
  private observed(seen: Seen): void {
    this.seen = seen;
    const kept = this.kept;
    if (this.watchStopped || kept === null || kept.pending.length === 0) return;
    if ('object' in seen && seen.object.data?.[this.key] === kept.text) return;
    this.queueRepair();
  }

  private queueRepair(): void {
    if (this.repairQueued || this.watchStopped) return;
    this.repairQueued = true;
    void this.exclusive(() => this.repair());
  }

  /**
   * Writes the kept put-backs again if the ConfigMap (as the watch last saw it) no longer holds
   * them. A deletion of the object this process last knew goes through the path of every write:
   * the update carrying its UID is refused (409, the UID precondition), the write reads it again,
   * warns and creates it. Anything else is read first (a watch event can be older than this
   * process's last write), then written over. Never throws: a failure is warned and tried again.
   */
  private async repair(): Promise<void> {
    this.repairQueued = false;
    const kept = this.kept;
    const seen = this.seen;
    if (this.watchStopped || kept === null || kept.pending.length === 0 || seen === null) return;
    if ('object' in seen && seen.object.data?.[this.key] === kept.text) return;
    const knownUid = this.current?.metadata.uid as string | undefined;
    // The DELETED event of an earlier object, one this process has made again since: old news.
    if ('deletedUid' in seen && seen.deletedUid !== '' && knownUid !== undefined && seen.deletedUid !== knownUid) return;
    const nodes = kept.pending.map((entry) => entry.node);
    try {
      let change: Removal = 'deleted';
      if (!('deletedUid' in seen && seen.deletedUid !== '' && seen.deletedUid === knownUid)) {
        const object = await this.api.get();
        const text = object?.data?.[this.key];
        this.current = object;
        if (text === kept.text) return;
        change = object === null ? 'deleted' : text === undefined ? 'key_removed' : 'changed';
      }
      const found = await this.write(kept.pending);
      // A write that met the change says so itself (a 409, read again): one warning either way.
      if (found === null) {
        this.logger.warn(
          `${this.where} ${removalText[change]} by someone else while ${pendingText(nodes.length)} (${nodeNames(nodes)}); fabric-ops wrote ${nodes.length === 1 ? 'it' : 'them'} again`,
          { configMap: `${this.api.namespace}/${this.api.name}`, change, pendingPutBacks: nodes.length },
        );
      }
      this.repairFailures = 0;
      this.onRewritten?.({ where: this.where, change: found ?? change, nodes });
    } catch (error) {
      this.repairFailures += 1;
      const delay = backoffDelay(rewriteRetry, this.repairFailures, this.random);
      this.logger.warn(
        `${this.where} no longer holds the ${nodes.length} pending put-back${nodes.length === 1 ? '' : 's'} (${nodeNames(nodes)}) and writing ${nodes.length === 1 ? 'it' : 'them'} again failed: ${messageOf(error)}; trying again in ${Math.round(delay / 1000)} s`,
        { configMap: `${this.api.namespace}/${this.api.name}`, pendingPutBacks: nodes.length },
      );
      if (this.watchStopped) return;
      this.repairTimer?.cancel();
      this.repairTimer = (this.watchOptions?.scheduler ?? realScheduler).setTimeout(() => this.queueRepair(), delay);
    }
  }

  /** One write with its conflict handling; returns what it found someone else had done ('deleted', 'changed'), or null. */
  private async write(pending: readonly PendingPutBack[]): Promise<'deleted' | 'changed' | null> {
    const text = formatPutBacks(pending);
    let found: 'deleted' | 'changed' | null = null;
    for (let attempt = 1; ; attempt += 1) {
      let updating = false;
      try {
        if (this.current === undefined) this.current = await this.api.get();
        const next = this.withPutBacks(this.current, text, pending.length);
        updating = this.current !== null;
        this.current = this.current === null ? await this.api.create(next) : await this.api.update(next);
        this.kept = { text, pending: pending.map((entry) => ({ ...entry, specs: [...entry.specs] })) };
        return found;
      } catch (error) {
        if (error instanceof PutBackPersistError) throw error;
        const status = error instanceof KubernetesApiError ? error.status : undefined;
        // 409: changed (update) or made meanwhile (create); 404 on an update: deleted. (A 404 on a
        // create is a namespace that does not exist: reading again cannot help.)
        if ((status === 409 || (status === 404 && updating)) && attempt < maxWriteAttempts) {
          // Read first, then say what happened: a real API server answers 409 (the UID precondition)
          // to an update of an object deleted meanwhile, as to one changed meanwhile.
          try {
            this.current = await this.api.get();
          } catch (readError) {
            throw new PutBackPersistError(
              `cannot write the pending put-backs to ${this.where}: ${messageOf(error)}; reading it again failed: ${messageOf(readError)}`,
            );
          }
          found = this.current === null ? 'deleted' : 'changed';
          this.logger.warn(
            `${this.where} was ${found} by someone else (${messageOf(error)}); ${this.current === null ? 'creating it again with' : 'writing'} fabric-ops' pending put-backs over the key`,
            { configMap: `${this.api.namespace}/${this.api.name}`, status },
          );
          continue;
        }
        throw new PutBackPersistError(`cannot write the pending put-backs to ${this.where}: ${messageOf(error)}`);
      }
    }
  }

  /** The object to write: the one read with our key set (a new one, labelled, when there is none); refused past 1 MiB. */
  private withPutBacks(current: ConfigMapObject | null, text: string, count: number): ConfigMapObject {
    const next: ConfigMapObject =
      current === null
        ? {
            apiVersion: 'v1',
            kind: 'ConfigMap',
            metadata: { name: this.api.name, namespace: this.api.namespace, labels: { ...putBackConfigMapLabels } },
            data: { [this.key]: text },
          }
        : { ...current, data: { ...current.data, [this.key]: text } };
    const bytes = configMapDataBytes(next);
    if (bytes > maxConfigMapBytes) {
      throw new PutBackPersistError(
        `cannot write the pending put-backs to ${this.where}: ${count} put-backs make its data ${bytes} bytes, more than the ${maxConfigMapBytes} bytes (1 MiB) a ConfigMap may hold; give a stateDirectory alone, or put back (DELETE /fleet/logspec) before setting more`,
      );
    }
    return next;
  }
}

/**
 * Both `stateDirectory` and `stateConfigMap`: every save goes to the file, then to the ConfigMap
 * (a failure of either fails the save, so a write-ahead that fails leaves no node changed). At
 * start the ConfigMap wins when it holds put-backs (it survives a pod's replacement, an emptyDir
 * does not); otherwise the file's are loaded and written to the ConfigMap.
 */
export class FileAndConfigMapPutBackStore implements PutBackStore {
  constructor(
    private readonly file: FilePutBackStore,
    private readonly configMap: ConfigMapPutBackStore,
    private readonly logger: Pick<Logger, 'warn' | 'info'>,
  ) {}

  get where(): string {
    return `${this.file.where} and ${this.configMap.where}`;
  }

  async load(): Promise<PendingPutBack[]> {
    const fromFile = await this.file.load();
    const fromConfigMap = await this.configMap.read();
    if (fromConfigMap !== null) {
      if (JSON.stringify(fromConfigMap) !== JSON.stringify(fromFile)) {
        this.logger.info(
          `pending put-backs: ${fromConfigMap.length} in ${this.configMap.where} are used, not the ${fromFile.length} in ${this.file.where} (the ConfigMap outlives the pod)`,
        );
      }
      return fromConfigMap;
    }
    await this.configMap.save(fromFile);
    return fromFile;
  }

  async save(pending: readonly PendingPutBack[]): Promise<void> {
    await this.file.save(pending);
    await this.configMap.save(pending);
  }

  /** The ConfigMap's watch (the file is this process's own). */
  watch(onRewritten: (rewrite: PutBackRewrite) => void): void {
    this.configMap.watch(onRewritten);
  }

  stop(): Promise<void> {
    return this.configMap.stop();
  }
}
