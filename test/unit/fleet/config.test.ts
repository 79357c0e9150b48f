import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ConfigError } from '../../../src/errors';
import { fleetConfigFrom, loadFleetConfig } from '../../../src/fleet/config';
import { evaluateHealth, requiredHealthy } from '../../../src/fleet/health';
import { parseRestoreRequest, parseSetRequest } from '../../../src/fleet/request';
import { matches, parseLabelSelector } from '../../../src/fleet/selector';
import type { FleetNode, NodeHealth } from '../../../src/fleet/types';
import { groupVersions } from '../../../src/fleet/versions';

const source = '/etc/fleet/fleet.yaml';
const minimal = {
  stateDirectory: 'state',
  groups: { org1: { tls: { caFiles: ['ca.crt'], certFile: 'c.crt', keyFile: 'c.key' } } },
  nodes: [{ name: 'peer0', url: 'https://10.0.0.5:9443', group: 'org1', labels: { role: 'peer' } }],
};

function problems(document: unknown): string[] {
  try {
    fleetConfigFrom(document, source);
  } catch (error) {
    if (error instanceof ConfigError) return [...error.problems];
    throw error;
  }
  throw new Error('expected a ConfigError');
}

describe('fleet configuration', () => {
  test('defaults, and relative files read from the configuration file folder', () => {
    const config = fleetConfigFrom(minimal, source);
    expect(config).toMatchObject({
      stateDirectory: '/etc/fleet/state',
      nodeTimeoutMs: 2000,
      concurrency: 16,
      maxResponseBytes: 65536,
      pollIntervalMs: 30_000,
      healthy: { minShare: 1 },
      writers: [],
      groups: { org1: { tls: { caFiles: ['/etc/fleet/ca.crt'], certFile: '/etc/fleet/c.crt', keyFile: '/etc/fleet/c.key' } } },
      nodes: [{ name: 'peer0', url: 'https://10.0.0.5:9443', dialect: 'unknown', group: 'org1', labels: { role: 'peer' } }],
    });
  });

  test('every problem names its key', () => {
    expect(
      problems({
        ...minimal,
        nodeTimeout: 'soon',
        concurrency: 0,
        healthy: { minShare: 0.5, minCount: 2 },
        nodes: [
          { name: 'a', url: 'https://h:1/path', group: 'org1' },
          { name: 'b', url: 'ftp://h:1', group: 'org1' },
        ],
      }),
    ).toEqual([
      `${source}: nodeTimeout: "soon" is not a duration (e.g. 10s, 1m30s, 500ms)`,
      `${source}: concurrency: Too small: expected number to be >=1`,
      `${source}: healthy: give exactly one of minShare (0..1) or minCount`,
      `${source}: nodes[0].url: "https://h:1/path": give scheme, host and port only (no path, query or credentials)`,
      `${source}: nodes[1].url: "ftp://h:1": the scheme must be https or http`,
    ]);
    expect(problems({ ...minimal, nodes: [minimal.nodes[0], { ...minimal.nodes[0], group: 'org9' }] })).toEqual([
      `${source}: nodes[1].name: "peer0" is used by an earlier node; names must be unique`,
      `${source}: nodes[1].group: no group "org9" (groups: org1)`,
    ]);
    expect(problems({ ...minimal, groups: { org1: { tls: { caFiles: ['ca'], certFile: 'c' } } } })).toEqual([
      `${source}: groups.org1.tls: certFile and keyFile go together: give both or neither`,
    ]);
    expect(problems({ ...minimal, extra: 1 })[0]).toContain('extra');
  });

  test('a file that cannot be read or parsed is named', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'fleet-config-'));
    expect(() => loadFleetConfig(path.join(dir, 'missing.yaml'))).toThrow(/missing\.yaml: cannot read/);
    writeFileSync(path.join(dir, 'bad.yaml'), 'nodes: [\n');
    expect(() => loadFleetConfig(path.join(dir, 'bad.yaml'))).toThrow(/bad\.yaml: not valid YAML/);
  });
});

const node = (name: string, extra: Partial<FleetNode> = {}): FleetNode => ({ name, url: 'https://x:1', dialect: 'peer', group: 'org1', labels: {}, ...extra });

describe('selectors', () => {
  test('every given field must match; empty selects all', () => {
    const peer = node('p', { labels: { role: 'peer', org: 'org1' } });
    expect(matches({}, peer)).toBe(true);
    expect(matches({ labels: { role: 'peer' }, groups: ['org1', 'org2'], dialect: 'peer', names: ['p'] }, peer)).toBe(true);
    expect(matches({ labels: { role: 'peer', org: 'org2' } }, peer)).toBe(false);
    expect(matches({ dialect: 'orderer' }, peer)).toBe(false);
    expect(matches({ names: ['q'] }, peer)).toBe(false);
  });

  test('label selector text', () => {
    expect(parseLabelSelector('role=peer, org==org1')).toEqual({ role: 'peer', org: 'org1' });
    expect(parseLabelSelector('role')).toMatch(/"role" is not key=value/);
  });
});

describe('health rule', () => {
  test('share rounds up; count is absolute', () => {
    expect(requiredHealthy({ minShare: 0.5 }, 5)).toBe(3);
    expect(requiredHealthy({ minShare: 1 }, 500)).toBe(500);
    expect(requiredHealthy({ minShare: 0.3 }, 10)).toBe(3);
    expect(requiredHealthy({ minCount: 2 }, 10)).toBe(2);
  });

  test('200 only when enough nodes are ok', () => {
    const entry = (status: NodeHealth['status']): NodeHealth => ({
      name: status,
      group: 'g',
      dialect: 'peer',
      url: 'u',
      status,
      latencyMs: 1,
      failed_checks: [],
    });
    expect(evaluateHealth([entry('ok'), entry('failing')], { minShare: 1 }, 0).status).toBe('Service Unavailable');
    expect(evaluateHealth([entry('ok'), entry('timeout')], { minShare: 0.5 }, 0).status).toBe('OK');
  });
});

describe('versions', () => {
  test('grouped, skew flagged, failures listed', () => {
    const ok = (Version: string, CommitSHA: string) => ({ ok: true as const, status: 200, body: { Version, CommitSHA }, text: '', latencyMs: 1 });
    const report = groupVersions([
      { node: node('a'), outcome: ok('2.5.12', 'af0b647') },
      { node: node('b'), outcome: ok('3.0.0', '94590aa') },
      { node: node('c'), outcome: ok('2.5.12', 'af0b647') },
      { node: node('d'), outcome: { ok: false, reason: 'timeout', error: 'no answer', latencyMs: 2000 } },
    ]);
    expect(report).toEqual({
      skew: true,
      versions: [
        { version: '2.5.12', commit: 'af0b647', nodes: ['a', 'c'] },
        { version: '3.0.0', commit: '94590aa', nodes: ['b'] },
      ],
      unreachable: [{ name: 'd', reason: 'timeout', error: 'no answer' }],
    });
    expect(groupVersions([{ node: node('a'), outcome: ok('2.5.12', 'x') }]).skew).toBe(false);
  });
});

describe('request bodies', () => {
  test('PUT: spec, selector, ttl, allOrNothing; problems named', () => {
    expect(parseSetRequest('{"spec":"debug","selector":{"labels":{"role":"peer"}},"ttl":"15m","allOrNothing":true}')).toEqual({
      ok: true,
      value: { spec: 'debug', selector: { labels: { role: 'peer' } }, ttlMs: 900_000, allOrNothing: true },
    });
    expect(parseSetRequest('{"spec":"debug"}')).toMatchObject({ ok: false, problem: expect.stringContaining('selector:') as unknown });
    expect(parseSetRequest('{"spec":"debug","selector":{},"ttl":"later"}')).toEqual({
      ok: false,
      problem: 'ttl: "later" is not a duration (e.g. 10s, 1m30s, 500ms)',
    });
    expect(parseSetRequest('{"spec":"debug","selector":{"dialect":"ca"}}')).toMatchObject({
      ok: false,
      problem: expect.stringContaining('selector.dialect') as unknown,
    });
    expect(parseSetRequest('')).toMatchObject({ ok: false, problem: expect.stringContaining('empty') as unknown });
  });

  test('DELETE: no body is every put-back', () => {
    expect(parseRestoreRequest('')).toEqual({ ok: true, value: {} });
    expect(parseRestoreRequest('{"selector":{"names":["a"]}}')).toEqual({ ok: true, value: { names: ['a'] } });
    expect(parseRestoreRequest('{"names":["a"]}')).toMatchObject({ ok: false });
  });
});
