import { fleetConfigFrom } from '../../../src/fleet/config';
import { ConfigError } from '../../../src/errors';
import { lastCallFrom, mapLanes, planLanes, probeSlots, type LastCall } from '../../../src/fleet/pool';

/** Work whose calls end only when the test says: which items started, and how many are in flight. */
function controlledWork() {
  const started: string[] = [];
  const pending = new Map<string, () => void>();
  let inFlight = 0;
  let maxInFlight = 0;
  const work = (item: string): Promise<string> =>
    new Promise<string>((resolve) => {
      started.push(item);
      inFlight += 1;
      maxInFlight = Math.max(maxInFlight, inFlight);
      pending.set(item, () => {
        inFlight -= 1;
        pending.delete(item);
        resolve(`${item}!`);
      });
    });
  const finish = async (...items: string[]): Promise<void> => {
    for (const item of items) {
      const end = pending.get(item);
      if (end === undefined) throw new Error(`${item} is not in flight (in flight: ${[...pending.keys()].join(', ')})`);
      end();
    }
    // Let the workers take their next items.
    await new Promise((resolve) => setImmediate(resolve));
  };
  return { work, finish, started, inFlight: () => [...pending.keys()], maxInFlight: () => maxInFlight };
}

describe('round lanes: mapLanes', () => {
  test('probeSlots: a quarter of the workers, at least one, none for a single worker', () => {
    expect([1, 2, 3, 4, 7, 8, 16, 64, 256].map(probeSlots)).toEqual([0, 1, 1, 1, 1, 2, 4, 16, 64]);
  });

  test('hung probe-lane items hold one of four workers: every main item is asked while they hang', async () => {
    const control = controlledWork();
    const main = ['m1', 'm2', 'm3', 'm4', 'm5', 'm6', 'm7'];
    const probe = ['p1', 'p2', 'p3', 'p4', 'p5', 'p6'];
    const done = mapLanes({ main, probe }, 4, control.work);
    await new Promise((resolve) => setImmediate(resolve));
    // One worker of the probe lane, three of the main lane.
    expect(control.inFlight().sort()).toEqual(['m1', 'm2', 'm3', 'p1']);
    // The main items end one after the other; p1 never does (a hung node): it never holds up a main item.
    await control.finish('m1', 'm2', 'm3');
    expect(control.inFlight().sort()).toEqual(['m4', 'm5', 'm6', 'p1']);
    await control.finish('m4', 'm5', 'm6');
    // The last main item; the two idle main workers help the probe lane.
    expect(control.inFlight().sort()).toEqual(['m7', 'p1', 'p2', 'p3']);
    expect(control.started.filter((item) => item.startsWith('m'))).toEqual(main);
    await control.finish('m7');
    expect(control.inFlight().sort()).toEqual(['p1', 'p2', 'p3', 'p4']);
    await control.finish('p1', 'p2', 'p3', 'p4');
    await control.finish('p5', 'p6');
    expect(await done).toEqual({ main: main.map((item) => `${item}!`), probe: probe.map((item) => `${item}!`) });
    expect(control.maxInFlight()).toBe(4);
    expect(control.started).toHaveLength(main.length + probe.length);
  });

  test('an empty main lane: every worker serves the probe lane (the first round, when nothing is known)', async () => {
    const control = controlledWork();
    const probe = ['p1', 'p2', 'p3', 'p4', 'p5'];
    const done = mapLanes({ main: [], probe }, 4, control.work);
    await new Promise((resolve) => setImmediate(resolve));
    expect(control.inFlight()).toEqual(['p1', 'p2', 'p3', 'p4']);
    await control.finish('p2');
    expect(control.inFlight()).toEqual(['p1', 'p3', 'p4', 'p5']);
    await control.finish('p1', 'p3', 'p4', 'p5');
    expect((await done).probe).toEqual(probe.map((item) => `${item}!`));
  });

  test('a single worker takes the main lane first; fewer items than workers: one worker each', async () => {
    const single = controlledWork();
    const done = mapLanes({ main: ['m1', 'm2'], probe: ['p1'] }, 1, single.work);
    await new Promise((resolve) => setImmediate(resolve));
    await single.finish('m1');
    await single.finish('m2');
    await single.finish('p1');
    await done;
    expect(single.started).toEqual(['m1', 'm2', 'p1']);
    expect(single.maxInFlight()).toBe(1);

    const few = controlledWork();
    const both = mapLanes({ main: ['m1'], probe: ['p1', 'p2'] }, 16, few.work);
    await new Promise((resolve) => setImmediate(resolve));
    expect(few.inFlight().sort()).toEqual(['m1', 'p1', 'p2']);
    await few.finish('m1', 'p1', 'p2');
    expect(await both).toEqual({ main: ['m1!'], probe: ['p1!', 'p2!'] });
  });
});

describe('round lanes: planLanes and lastCallFrom', () => {
  const nodes = ['a', 'b', 'c', 'd', 'e', 'f'].map((name) => ({ name }));

  test('nodes that answered quickly go to the main lane; the others, and nodes never asked, to the probe lane; least recently asked first', () => {
    const history = new Map<string, LastCall>([
      ['a', { quick: true, round: 3 }],
      ['b', { quick: false, round: 3 }],
      ['d', { quick: true, round: 2 }],
      ['e', { quick: false, round: 1 }],
      ['f', { quick: true, round: 3 }],
    ]);
    const lanes = planLanes(nodes, (name) => history.get(name));
    expect({ main: lanes.main.map((node) => node.name), probe: lanes.probe.map((node) => node.name) }).toEqual({
      main: ['d', 'a', 'f'],
      // c was never asked (a deadline came first, or it just joined): before the nodes asked before.
      probe: ['c', 'e', 'b'],
    });
    expect(planLanes(nodes, () => undefined)).toEqual({ main: [], probe: nodes });
  });

  test('what a call tells of its node', () => {
    const state = { asked: true, cut: false, nodeTimeoutMs: 2000, round: 7 };
    const answer = (status: number, latencyMs: number) => ({ ok: true, status, latencyMs });
    const failure = (reason: string, latencyMs: number) => ({ ok: false, reason, latencyMs });
    expect(lastCallFrom(answer(200, 15), state)).toEqual({ quick: true, round: 7 });
    // A node that answers 503 (failing checks), or refuses the handshake, answers: it is no hung node.
    expect(lastCallFrom(answer(503, 15), state)).toEqual({ quick: true, round: 7 });
    expect(lastCallFrom(failure('tls', 15), state)).toEqual({ quick: true, round: 7 });
    expect(lastCallFrom(failure('unauthorized', 15), state)).toEqual({ quick: true, round: 7 });
    // Slow (half of nodeTimeout or more), timed out, unreachable: the probe lane next time.
    expect(lastCallFrom(answer(200, 1000), state)).toEqual({ quick: false, round: 7 });
    expect(lastCallFrom(failure('timeout', 2000), state)).toEqual({ quick: false, round: 7 });
    expect(lastCallFrom(failure('unreachable', 3), state)).toEqual({ quick: false, round: 7 });
    // Not asked, or cut by the deadline before half of nodeTimeout: nothing learnt.
    expect(lastCallFrom(failure('timeout', 0), { ...state, asked: false })).toBeNull();
    expect(lastCallFrom(failure('timeout', 400), { ...state, cut: true })).toBeNull();
    expect(lastCallFrom(failure('timeout', 1500), { ...state, cut: true })).toEqual({ quick: false, round: 7 });
  });
});

describe('fleet configuration: roundTimeout', () => {
  const source = '/etc/fleet/fleet.yaml';
  const minimal = {
    stateDirectory: 'state',
    groups: { g: { tls: { caFiles: ['ca.crt'] } } },
    nodes: [{ name: 'n', url: 'https://10.0.0.5:9443', group: 'g' }],
  };

  test('default: 2 x nodeTimeout + 1s; given: as given', () => {
    expect(fleetConfigFrom(minimal, source).roundTimeoutMs).toBe(5000);
    expect(fleetConfigFrom({ ...minimal, nodeTimeout: '500ms' }, source).roundTimeoutMs).toBe(2000);
    expect(fleetConfigFrom({ ...minimal, roundTimeout: '1m' }, source).roundTimeoutMs).toBe(60_000);
  });

  test('shorter than nodeTimeout, or not a duration: refused, naming the key', () => {
    const problems = (document: object): string[] => {
      try {
        fleetConfigFrom(document, source);
      } catch (error) {
        if (error instanceof ConfigError) return [...error.problems];
        throw error;
      }
      throw new Error('expected a ConfigError');
    };
    expect(problems({ ...minimal, nodeTimeout: '5s', roundTimeout: '4s' })).toEqual([
      `${source}: roundTimeout: must be at least nodeTimeout: a shorter round would cut every call that takes its whole timeout`,
    ]);
    expect(problems({ ...minimal, roundTimeout: 'soon' })).toEqual([`${source}: roundTimeout: "soon" is not a duration (e.g. 10s, 1m30s, 500ms)`]);
  });
});
