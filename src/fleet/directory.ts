import type { FleetNode } from './types';

/** How the fleet changed: a node joined, left, or is the same name with another URL, group, dialect or labels. */
export type DirectoryChange =
  | { type: 'joined'; node: FleetNode; source: string }
  | { type: 'left'; node: FleetNode; source: string }
  | { type: 'changed'; node: FleetNode; previous: FleetNode; source: string };

export interface SourceStatus {
  source: string;
  /** The source has listed once: its nodes are known. */
  synced: boolean;
}

export type DirectoryListener = (changes: readonly DirectoryChange[]) => void;

/** A discovered name that another source (or the configuration) already holds. */
export type Collision = { source: string; node: FleetNode; heldBy: string };

const staticSource = 'nodes';

function sameNode(a: FleetNode, b: FleetNode): boolean {
  if (a.url !== b.url || a.group !== b.group || a.dialect !== b.dialect || a.tlsServerName !== b.tlsServerName) return false;
  const keys = Object.keys(a.labels);
  if (keys.length !== Object.keys(b.labels).length) return false;
  return keys.every((key) => a.labels[key] === b.labels[key]);
}

/**
 * The nodes of the fleet now: the static ones (the configuration's `nodes`, which never change),
 * then each discovery source's, in the order of the sources. A name is one node: a name a static
 * node or an earlier source holds is not taken by a later source (reported through onCollision,
 * once per name until it is resolved). Every round, selector and write reads `nodes()` when it
 * starts; listeners hear of each change of membership (not of every watch event).
 */
export class NodeDirectory {
  private readonly staticNodes: readonly FleetNode[];
  private readonly bySource = new Map<string, Map<string, FleetNode>>();
  private readonly syncedSources = new Set<string>();
  private readonly listeners = new Set<DirectoryListener>();
  private current: FleetNode[];
  private index: Map<string, { node: FleetNode; source: string }>;
  private readonly collisions = new Set<string>();
  private readonly syncWaiters: Array<() => void> = [];

  /** `sources`: every discovery source, by the name its status and messages use. */
  constructor(
    staticNodes: readonly FleetNode[],
    readonly sources: readonly string[] = [],
    private readonly onCollision: (collision: Collision) => void = () => undefined,
  ) {
    this.staticNodes = [...staticNodes];
    for (const source of sources) this.bySource.set(source, new Map());
    this.current = [...staticNodes];
    this.index = new Map(staticNodes.map((node) => [node.name, { node, source: staticSource }]));
  }

  /** True when nodes can come and go (any discovery source). */
  get dynamic(): boolean {
    return this.sources.length > 0;
  }

  /** Every source has listed once. */
  get synced(): boolean {
    return this.syncedSources.size === this.sources.length;
  }

  /** Resolves once every source has listed (at once without discovery). */
  whenSynced(): Promise<void> {
    if (this.synced) return Promise.resolve();
    return new Promise((resolve) => this.syncWaiters.push(resolve));
  }

  describeUnsynced(): string {
    return `discovery has not listed ${this.status()
      .filter((status) => !status.synced)
      .map((status) => status.source)
      .join(', ')} yet`;
  }

  status(): SourceStatus[] {
    return this.sources.map((source) => ({ source, synced: this.syncedSources.has(source) }));
  }

  nodes(): readonly FleetNode[] {
    return this.current;
  }

  byName(name: string): FleetNode | undefined {
    return this.index.get(name)?.node;
  }

  onChange(listener: DirectoryListener): () => void {
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
    };
  }

  /** A source's complete list (a list, or a re-list after a 410): what it does not name has left. The source is synced from now on. */
  replaceSource(source: string, nodes: readonly FleetNode[]): void {
    const map = this.sourceMap(source);
    map.clear();
    for (const node of nodes) map.set(node.name, node);
    this.syncedSources.add(source);
    this.rebuild();
    if (this.synced) for (const resolve of this.syncWaiters.splice(0)) resolve();
  }

  upsert(source: string, node: FleetNode): void {
    const map = this.sourceMap(source);
    const known = map.get(node.name);
    if (known !== undefined && sameNode(known, node)) return;
    map.set(node.name, node);
    this.rebuild();
  }

  remove(source: string, name: string): void {
    if (this.sourceMap(source).delete(name)) this.rebuild();
  }

  private sourceMap(source: string): Map<string, FleetNode> {
    const map = this.bySource.get(source);
    if (map === undefined) throw new Error(`no discovery source "${source}" (sources: ${this.sources.join(', ')})`);
    return map;
  }

  private rebuild(): void {
    const next: FleetNode[] = [...this.staticNodes];
    const index = new Map<string, { node: FleetNode; source: string }>(this.staticNodes.map((node) => [node.name, { node, source: staticSource }]));
    const collisions = new Set<string>();
    for (const source of this.sources) {
      const nodes = [...(this.bySource.get(source) as Map<string, FleetNode>).values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
      for (const node of nodes) {
        const holder = index.get(node.name);
        if (holder !== undefined) {
          const key = `${source}\u0000${node.name}`;
          collisions.add(key);
          if (!this.collisions.has(key))
            this.onCollision({ source, node, heldBy: holder.source === staticSource ? 'the configuration (nodes)' : holder.source });
          continue;
        }
        index.set(node.name, { node, source });
        next.push(node);
      }
    }
    this.collisions.clear();
    for (const key of collisions) this.collisions.add(key);
    const changes: DirectoryChange[] = [];
    for (const [name, { node, source }] of this.index) {
      const now = index.get(name);
      if (now === undefined) changes.push({ type: 'left', node, source });
      else if (!sameNode(node, now.node)) changes.push({ type: 'changed', node: now.node, previous: node, source: now.source });
    }
    for (const [name, { node, source }] of index) if (!this.index.has(name)) changes.push({ type: 'joined', node, source });
    this.current = next;
    this.index = index;
    if (changes.length === 0) return;
    for (const listener of [...this.listeners]) listener(changes);
  }
}
