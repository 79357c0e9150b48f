import type { Logger } from '../../logging/types';
import type { KubernetesDiscoverySource } from '../config';
import type { NodeDirectory } from '../directory';
import type { DiscoveryStatus } from '../health';
import { discoveredName, nodeFromObject, type KubernetesObject } from './kubernetes-mapping';

/** What a source's list+watch calls with the objects it sees (the shape of src/kubernetes' ReflectorHandler). */
export interface ObjectHandler {
  /** The complete list (the first list, and every re-list: after a 410, a restart of the API server). */
  replace(objects: readonly unknown[]): void;
  upsert(object: unknown): void;
  remove(object: unknown): void;
}

/** One source's list+watch (a Reflector of src/kubernetes): it keeps itself going until stop(). */
export interface SourceWatch {
  start(): void;
  stop(): Promise<void> | void;
  /** The source has listed once. */
  readonly synced: boolean;
  /** Why its last list or watch failed (the API server's message), null when it works. */
  readonly problem: string | null;
}

export interface WatchSpec {
  resource: 'services' | 'pods';
  /** null: every namespace (the source's '*'). */
  namespace: string | null;
  labelSelector: string;
  /** The source's name, for messages. */
  source: string;
}

export type SourceWatchFactory = (spec: WatchSpec, handler: ObjectHandler) => SourceWatch;

/** The name of a source in messages, statuses and the directory: its key, kind, selector and namespace. */
export function sourceName(source: KubernetesDiscoverySource, index: number, defaultNamespace: string | null): string {
  const namespace =
    source.namespace === '*'
      ? 'every namespace'
      : source.namespace !== null || defaultNamespace !== null
        ? `namespace ${source.namespace ?? defaultNamespace}`
        : "fabric-ops' namespace";
  return `discovery.kubernetes[${index}] (${source.kind}s ${source.selector} in ${namespace})`;
}

/**
 * Kubernetes discovery: one list+watch per source, each object mapped to a node (or why it is
 * none) and handed to the directory. A node is logged when it joins or leaves (by the directory's
 * listener), not at every watch event; an object that cannot be a node is warned about once,
 * until the reason changes, not at every event.
 */
export class KubernetesDiscovery {
  private readonly watches: Array<{ name: string; watch: SourceWatch }> = [];
  private readonly warned = new Map<string, string>();

  constructor(
    sources: readonly KubernetesDiscoverySource[],
    names: readonly string[],
    defaultNamespace: string,
    private readonly directory: NodeDirectory,
    private readonly logger: Logger,
    factory: SourceWatchFactory,
    staticNames: ReadonlySet<string>,
  ) {
    sources.forEach((source, index) => {
      const name = names[index] as string;
      const namespace = source.namespace === '*' ? null : (source.namespace ?? defaultNamespace);
      const handler = this.handler(source, name, staticNames);
      this.watches.push({
        name,
        watch: factory({ resource: source.kind === 'Service' ? 'services' : 'pods', namespace, labelSelector: source.selector, source: name }, handler),
      });
    });
  }

  start(): void {
    for (const { watch } of this.watches) watch.start();
  }

  async stop(): Promise<void> {
    await Promise.all(this.watches.map(async ({ watch }) => watch.stop()));
  }

  status(): DiscoveryStatus[] {
    return this.watches.map(({ name, watch }) => ({
      source: name,
      synced: this.directory.status().find((s) => s.source === name)?.synced ?? false,
      problem: watch.problem,
    }));
  }

  private handler(source: KubernetesDiscoverySource, name: string, staticNames: ReadonlySet<string>): ObjectHandler {
    const keyOf = (object: KubernetesObject): string => `${name}\u0000${discoveredName(object) ?? '?'}`;
    const map = (raw: unknown) => {
      const object = raw as KubernetesObject;
      const mapped = nodeFromObject(source, object, staticNames);
      const key = keyOf(object);
      if ('node' in mapped) {
        this.warned.delete(key);
        return mapped.node;
      }
      const objectName = `${source.kind} ${object.metadata?.namespace ?? '?'}/${object.metadata?.name ?? '?'}`;
      if (this.warned.get(key) !== mapped.reason) {
        this.warned.set(key, mapped.reason);
        if (mapped.kind === 'unusable')
          this.logger.warn(`fleet discovery: ${objectName} is not a node: ${mapped.reason}`, { source: name, object: objectName });
        else this.logger.debug(`fleet discovery: ${objectName} is not a node: ${mapped.reason}`, { source: name, object: objectName });
      }
      return null;
    };
    return {
      replace: (objects) => {
        const nodes = objects.map(map).filter((node) => node !== null);
        // A re-list (after a 410, say) warns again only about objects it had not warned about.
        const present = new Set(objects.map((object) => keyOf(object as KubernetesObject)));
        for (const key of [...this.warned.keys()]) if (key.startsWith(`${name}\u0000`) && !present.has(key)) this.warned.delete(key);
        this.directory.replaceSource(name, nodes);
      },
      upsert: (object) => {
        const node = map(object);
        const nodeName = discoveredName(object as KubernetesObject);
        if (node !== null) this.directory.upsert(name, node);
        else if (nodeName !== null) this.directory.remove(name, nodeName);
      },
      remove: (object) => {
        this.warned.delete(keyOf(object as KubernetesObject));
        const nodeName = discoveredName(object as KubernetesObject);
        if (nodeName !== null) this.directory.remove(name, nodeName);
      },
    };
  }
}
