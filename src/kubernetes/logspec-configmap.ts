import { createHash } from 'node:crypto';
import { messageOf } from '../errors';
import { formatLogSpec, parseLogSpec } from '../logging/spec';
import { bounded } from './api-error';
import { Reflector, type ListWatchApi, type ReflectorOptions } from './reflector';
import type { WatchStream } from './transport-options';

export { refusedBackoff, unreachableBackoff, type WatchEventType } from './reflector';

export interface ConfigMapLike {
  metadata?: { name?: string; namespace?: string; resourceVersion?: string };
  data?: Record<string, string>;
}

/** One watch connection (see transport.ts): `connected` once the server answered 200, `ended` when the stream ended. */
export type WatchConnection = WatchStream;

/** list and watch of one ConfigMap (fieldSelector metadata.name=<name>), as the Kubernetes API offers them. */
export type ConfigMapApi = ListWatchApi<ConfigMapLike>;

/** The Reflector's own settings, passed through (backoffs, cycle limit, logger, randomness, clock and timers). */
type ReflectorSettings = Pick<
  ReflectorOptions<ConfigMapLike>,
  'logger' | 'unreachableBackoff' | 'refusedBackoff' | 'cycleBurst' | 'cycleIntervalMs' | 'random' | 'scheduler'
>;

export interface LogSpecConfigMapOptions extends ReflectorSettings {
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
}

/**
 * Longest value taken from the ConfigMap: what a PUT /logspec body can carry (16 KiB, less the
 * `{"spec":""}` around it), so a spec the ConfigMap can set, PUT can set too.
 */
const maxConfigMapSpecBytes = 16 * 1024 - '{"spec":""}'.length;

function digest(value: string): string {
  return createHash('sha256').update(value).digest('base64');
}

/**
 * Watches one key of one ConfigMap and activates its value as the logging spec when it changes.
 * Only a change of the ConfigMap's value activates it: a re-list after a reconnect that finds
 * the same value leaves a later PUT /logspec in force. A deleted ConfigMap or key changes nothing.
 * The list-and-watch loop (backoff, 410, outage lines) is the Reflector's (./reflector.ts).
 */
export class LogSpecConfigMapWatcher {
  private readonly options: LogSpecConfigMapOptions;
  private readonly actor: string;
  private readonly reflector: Reflector<ConfigMapLike>;
  /** Digest of the value last seen in the ConfigMap (applied, refused or equal to the active one). */
  private lastValue: string | undefined;

  constructor(options: LogSpecConfigMapOptions) {
    this.options = options;
    this.actor = `configmap ${options.namespace}/${options.name}`;
    const { api, logger, unreachableBackoff, refusedBackoff, cycleBurst, cycleIntervalMs, random, scheduler } = options;
    this.reflector = new Reflector<ConfigMapLike>({
      api,
      logger,
      what: this.where,
      handler: {
        replace: (items) => {
          const item = items.find((candidate) => candidate.metadata?.name === options.name);
          if (item) this.apply(item);
        },
        upsert: (object) => {
          if (object.metadata?.name === options.name) this.apply(object);
        },
        remove: (object) => {
          if (object.metadata?.name !== options.name) return;
          logger.info(`${this.where} was deleted; the logging specification stays '${bounded(options.getLogSpec())}'`);
        },
      },
      unreachableBackoff,
      refusedBackoff,
      cycleBurst,
      cycleIntervalMs,
      random,
      scheduler,
    });
  }

  start(): void {
    this.reflector.start();
  }

  async stop(): Promise<void> {
    await this.reflector.stop();
  }

  private get where(): string {
    return `ConfigMap ${this.options.namespace}/${this.options.name}`;
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
}
