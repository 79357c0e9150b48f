import { NodeDirectory, type Collision, type DirectoryChange } from '../../../src/fleet/directory';
import type { FleetNode } from '../../../src/fleet/types';

const node = (name: string, url = `https://${name}:9443`, labels: Record<string, string> = {}): FleetNode => ({
  name,
  url,
  dialect: 'peer',
  group: 'org1',
  labels,
});

describe('the node directory: static nodes plus each source', () => {
  test('without sources: synced at once, the static nodes, never a change', async () => {
    const directory = new NodeDirectory([node('a')]);
    expect(directory.synced).toBe(true);
    expect(directory.dynamic).toBe(false);
    await expect(directory.whenSynced()).resolves.toBeUndefined();
    expect(directory.nodes().map((n) => n.name)).toEqual(['a']);
  });

  test('synced once every source has listed; replace is the whole list (what it does not name has left)', async () => {
    const directory = new NodeDirectory([node('static')], ['s1', 's2']);
    const changes: DirectoryChange[][] = [];
    directory.onChange((batch) => changes.push([...batch]));
    let synced = false;
    void directory.whenSynced().then(() => (synced = true));
    directory.replaceSource('s1', [node('b'), node('a')]);
    expect(directory.synced).toBe(false);
    expect(directory.status()).toEqual([
      { source: 's1', synced: true },
      { source: 's2', synced: false },
    ]);
    expect(directory.describeUnsynced()).toBe('discovery has not listed s2 yet');
    directory.replaceSource('s2', []);
    await Promise.resolve();
    expect(synced).toBe(true);
    // Static first, then each source's nodes by name.
    expect(directory.nodes().map((n) => n.name)).toEqual(['static', 'a', 'b']);
    directory.replaceSource('s1', [node('b')]);
    expect(changes.map((batch) => batch.map((change) => `${change.type} ${change.node.name}`))).toEqual([['joined a', 'joined b'], ['left a']]);
  });

  test('upsert: a new node joins, the same node again is no change, another URL or labels is a change; remove leaves', () => {
    const directory = new NodeDirectory([], ['s']);
    const changes: string[] = [];
    directory.onChange((batch) => changes.push(...batch.map((change) => `${change.type} ${change.node.name} ${change.node.url}`)));
    directory.replaceSource('s', []);
    directory.upsert('s', node('a'));
    directory.upsert('s', node('a'));
    directory.upsert('s', node('a', 'https://10.0.0.2:9443'));
    directory.upsert('s', node('a', 'https://10.0.0.2:9443', { org: 'org1' }));
    directory.remove('s', 'a');
    directory.remove('s', 'a');
    expect(changes).toEqual(['joined a https://a:9443', 'changed a https://10.0.0.2:9443', 'changed a https://10.0.0.2:9443', 'left a https://10.0.0.2:9443']);
    expect(directory.byName('a')).toBeUndefined();
  });

  test('a name is one node: the configuration, then the earlier source, keep it; the collision is reported once until it ends', () => {
    const collisions: Collision[] = [];
    const directory = new NodeDirectory([node('x', 'https://static:1')], ['s1', 's2'], (collision) => collisions.push(collision));
    directory.replaceSource('s1', [node('x', 'https://s1:1'), node('y', 'https://s1:2')]);
    directory.replaceSource('s2', [node('y', 'https://s2:2')]);
    directory.upsert('s2', node('z'));
    expect(directory.byName('x')?.url).toBe('https://static:1');
    expect(directory.byName('y')?.url).toBe('https://s1:2');
    expect(collisions.map((c) => `${c.source} ${c.node.name} held by ${c.heldBy}`)).toEqual(['s1 x held by the configuration (nodes)', 's2 y held by s1']);
    // s1 lets y go: s2's y takes the name (a change of URL), and a later collision is reported again.
    directory.remove('s1', 'y');
    expect(directory.byName('y')?.url).toBe('https://s2:2');
    directory.upsert('s1', node('y', 'https://s1:2'));
    expect(collisions).toHaveLength(3);
  });

  test('an unknown source is a programming error, named', () => {
    expect(() => new NodeDirectory([], ['s']).upsert('t', node('a'))).toThrow('no discovery source "t" (sources: s)');
  });
});
