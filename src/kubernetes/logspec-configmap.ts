import type { Logger } from '../logging/types';
import { statusCodeOf } from './recorder';

export interface ConfigMapLike {
  metadata?: { name?: string; namespace?: string; resourceVersion?: string };
  data?: Record<string, string>;
}

/** One watch connection: events until the connection ends (resolves) or fails (rejects). */
export interface WatchConnection {
  /** Resolves when the server or the network ended the stream; rejects on an error answer. */
  readonly ended: Promise<void>;
  abort(): void;
}

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';

/** list and watch of one ConfigMap (fieldSelector metadata.name=<name>), as the Kubernetes API offers them. */
export interface ConfigMapApi {
  list(): Promise<{ resourceVersion: string; items: ConfigMapLike[] }>;
  watch(resourceVersion: string, onEvent: (type: WatchEventType, object: ConfigMapLike & { code?: number }) => void): Promise<WatchConnection>;
}

export interface LogSpecConfigMapOptions {
  api: ConfigMapApi;
  namespace: string;
  name: string;
  key: string;
  /** Activates a spec as PUT /logspec does; throws LogSpecError when invalid. */
  setLogSpec: (spec: string, actor: string) => void;
  logger: Logger;
  backoffInitialMs?: number;
  backoffMaxMs?: number;
}

class Gone extends Error {}

/**
 * Watches one key of one ConfigMap and activates its value as the logging spec when it changes.
 * Only a change of the ConfigMap's value activates it: a re-list after a reconnect that finds
 * the same value leaves a later PUT /logspec in force. A deleted ConfigMap or key changes nothing.
 */
export class LogSpecConfigMapWatcher {
  private readonly options: LogSpecConfigMapOptions;
  private readonly actor: string;
  private resourceVersion = '';
  /** The value last seen in the ConfigMap (applied or refused); undefined before the first. */
  private lastValue: string | undefined;
  private stopped = false;
  private connection: WatchConnection | null = null;
  private sleepTimer: NodeJS.Timeout | undefined;
  private wakeSleep: (() => void) | null = null;
  private outage: string | null = null;
  private loop: Promise<void> | null = null;

  constructor(options: LogSpecConfigMapOptions) {
    this.options = options;
    this.actor = `configmap ${options.namespace}/${options.name}`;
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

  private async run(): Promise<void> {
    const initial = this.options.backoffInitialMs ?? 500;
    const max = this.options.backoffMaxMs ?? 30_000;
    let backoffMs = initial;
    while (!this.stopped) {
      try {
        if (this.resourceVersion === '') {
          const list = await this.options.api.list();
          const item = list.items.find((candidate) => candidate.metadata?.name === this.options.name);
          if (item) this.apply(item);
          this.resourceVersion = list.resourceVersion;
        }
        let delivered = false;
        this.connection = await this.options.api.watch(this.resourceVersion, (type, object) => {
          delivered = true;
          this.onWatchEvent(type, object);
        });
        if (this.stopped) this.connection.abort();
        this.recovered();
        await this.connection.ended;
        this.connection = null;
        // A stream that ended at once, with nothing in it, is retried after a pause.
        if (!delivered) {
          await this.sleep(backoffMs);
          backoffMs = Math.min(backoffMs * 2, max);
        } else {
          backoffMs = initial;
        }
      } catch (error) {
        this.connection = null;
        if (this.stopped) break;
        if (error instanceof Gone || statusCodeOf(error) === 410) {
          this.options.logger.debug(`ConfigMap ${this.options.namespace}/${this.options.name}: resourceVersion ${this.resourceVersion} is gone; listing again`);
          this.resourceVersion = '';
          continue;
        }
        this.failed(error);
        await this.sleep(backoffMs);
        backoffMs = Math.min(backoffMs * 2, max);
      }
    }
  }

  private onWatchEvent(type: WatchEventType, object: ConfigMapLike & { code?: number }): void {
    if (type === 'ERROR') {
      // A Status in the stream; 410 Gone: the resourceVersion is too old, list again.
      if (object.code === 410) {
        this.resourceVersion = '';
        this.connection?.abort();
      }
      return;
    }
    const version = object.metadata?.resourceVersion;
    if (version) this.resourceVersion = version;
    if (type === 'ADDED' || type === 'MODIFIED') {
      if (object.metadata?.name === this.options.name) this.apply(object);
    } else if (type === 'DELETED' && object.metadata?.name === this.options.name) {
      this.options.logger.info(
        `ConfigMap ${this.options.namespace}/${this.options.name} was deleted; the logging specification stays '${this.lastValue ?? ''}'`,
      );
    }
  }

  private apply(configMap: ConfigMapLike): void {
    const raw = configMap.data?.[this.options.key];
    if (raw === undefined) {
      if (this.lastValue !== undefined || configMap.data !== undefined) {
        this.options.logger.warn(
          `ConfigMap ${this.options.namespace}/${this.options.name} has no key ${this.options.key}; the logging specification is unchanged`,
        );
      }
      return;
    }
    // A value written from a file ends with a newline; the spec grammar has no blanks.
    const value = raw.trim();
    if (value === this.lastValue) return;
    this.lastValue = value;
    try {
      this.options.setLogSpec(value, this.actor);
    } catch (error) {
      this.options.logger.warn(
        `ConfigMap ${this.options.namespace}/${this.options.name} key ${this.options.key}: ${error instanceof Error ? error.message : String(error)}; the active specification stays`,
        {
          configMap: `${this.options.namespace}/${this.options.name}`,
          key: this.options.key,
          value,
        },
      );
    }
  }

  private failed(error: unknown): void {
    const status = statusCodeOf(error);
    const problem = status === undefined ? (error instanceof Error ? error.message : String(error)) : `HTTP ${status}`;
    if (this.outage !== null) return;
    this.outage = problem;
    this.options.logger.warn(`cannot watch ConfigMap ${this.options.namespace}/${this.options.name} (${problem}); retrying with backoff`, { problem, status });
  }

  private recovered(): void {
    if (this.outage === null) return;
    this.outage = null;
    this.options.logger.info(`watching ConfigMap ${this.options.namespace}/${this.options.name} again`);
  }

  private sleep(ms: number): Promise<void> {
    if (this.stopped) return Promise.resolve();
    return new Promise((resolve) => {
      this.wakeSleep = () => {
        this.wakeSleep = null;
        resolve();
      };
      this.sleepTimer = setTimeout(() => this.wakeSleep?.(), ms);
      this.sleepTimer.unref();
    });
  }
}

export { Gone as ResourceVersionGone };
