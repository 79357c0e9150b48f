import { parseRestoreRequest, parseSetRequest } from '../../../src/fleet/request';
import { matches, parseLabelSelector, select, unknownLabelKeys } from '../../../src/fleet/selector';
import type { FleetNode, NodeSelector } from '../../../src/fleet/types';

const peer: FleetNode = { name: 'peer0', url: 'https://10.0.0.5:9443', dialect: 'peer', group: 'org1', labels: { role: 'peer', org: 'org1' } };
const orderer: FleetNode = { name: 'orderer0', url: 'https://10.0.0.6:9443', dialect: 'orderer', group: 'org1', labels: { role: 'orderer' } };
const nodes = [peer, orderer];

/** The selector a request body gives, as the HTTP layer parses it. */
function selectorOf(body: string): NodeSelector | string {
  const parsed = parseSetRequest(body);
  return parsed.ok ? parsed.value.selector : parsed.problem;
}

describe('fleet selectors', () => {
  test('labels select on a node own labels only', () => {
    expect(select({ labels: { role: 'peer' } }, nodes)).toEqual([peer]);
    expect(select({ labels: { role: 'peer', org: 'org2' } }, nodes)).toEqual([]);
    expect(select({}, nodes)).toEqual(nodes);
    // What every object inherits is not a label.
    for (const key of ['constructor', 'toString', 'hasOwnProperty', '__proto__']) {
      const labels = JSON.parse(`{"${key}": "x"}`) as Record<string, string>;
      expect([key, matches({ labels }, peer)]).toEqual([key, false]);
    }
  });

  test('a node that does carry a label named constructor is selected by it', () => {
    const odd: FleetNode = { ...peer, name: 'odd', labels: { constructor: 'x' } };
    const labels = selectorOf('{"spec": "debug", "selector": {"labels": {"constructor": "x"}}}');
    expect(typeof labels).toBe('object');
    expect(select(labels as NodeSelector, [peer, odd])).toEqual([odd]);
    expect(unknownLabelKeys(labels as NodeSelector, [peer, odd])).toEqual([]);
  });

  test('the label keys of a selector that no node carries are named (the fleet answers 400)', () => {
    expect(unknownLabelKeys({ labels: { role: 'peer' } }, nodes)).toEqual([]);
    expect(
      unknownLabelKeys(selectorOf('{"spec": "debug", "selector": {"labels": {"constructor": "x", "toString": "y", "role": "peer"}}}') as NodeSelector, nodes),
    ).toEqual(['constructor', 'toString']);
  });

  test('a request whose labels hold __proto__ is refused naming it, not read as a selector of every node', () => {
    expect(selectorOf('{"spec": "debug", "selector": {"labels": {"__proto__": "x"}}}')).toMatch(
      /^selector\.labels: "__proto__" is not a label key \(A-Z a-z 0-9 \. _ \/ -, starting with a letter or digit\)/,
    );
    expect(selectorOf('{"spec": "debug", "selector": {"labels": {"__proto__": {"role": "peer"}}}}')).toMatch(
      /^selector\.labels: "__proto__" is not a label key/,
    );
    expect(selectorOf('{"spec": "debug", "selector": {"__proto__": {"labels": {}}}}')).toMatch(/^selector: Unrecognized key: "__proto__"/);
    const restore = parseRestoreRequest('{"selector": {"labels": {"__proto__": "x"}}}');
    expect(restore.ok ? restore.value : restore.problem).toMatch(/^selector\.labels: "__proto__" is not a label key/);
  });

  test('label values must be strings, labels an object', () => {
    expect(selectorOf('{"spec": "debug", "selector": {"labels": {"role": 1}}}')).toMatch(/^selector\.labels: "role": the value must be a string/);
    expect(selectorOf('{"spec": "debug", "selector": {"labels": ["role"]}}')).toMatch(/^selector\.labels: an object of label keys and values/);
    expect(selectorOf('{"spec": "debug", "selector": {"labels": {"role": "peer"}}}')).toEqual({ labels: { role: 'peer' } });
  });

  test('parseLabelSelector: role=peer,org=org1 as labels without prototype', () => {
    const labels = parseLabelSelector('role=peer,org=org1');
    expect(labels).toEqual({ role: 'peer', org: 'org1' });
    expect(Object.getPrototypeOf(labels)).toBeNull();
    expect(parseLabelSelector('__proto__=x')).toBe('"__proto__=x" is not key=value (e.g. role=peer,org=org1)');
  });
});
