import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { NodeLogSpec, normaliseNodeSpec, ttlProblem, putBackFileName, type NodeLogSpecWriter } from '../../../src/companion/logspec';
import { parseNodeLogSpecBody } from '../../../src/companion/logspec-http';
import { ConfigError, LogSpecError } from '../../../src/errors';
import type { CallOutcome } from '../../../src/fleet/client';
import { FilePutBackStore } from '../../../src/fleet/putback-store';
import type { FleetNode } from '../../../src/fleet/types';
import type { Counter } from '../../../src/metrics/types';
import { CaptureLoggers } from '../../support/capture-logger';
import { FakeScheduler } from '../../support/fake-scheduler';

/**
 * The companion's logic for the node's log level, with time in the test's hands. The node is a
 * double of Fabric's /logspec (GET answers its spec, PUT 204, a stopped node refuses the
 * connection, a restarted one is back at its own spec); the same paths run against the recorded
 * peer's double over mTLS in test/integration/companion/logspec*.test.ts.
 */
class NodeDouble {
  spec = 'info';
  down = false;
  calls: string[] = [];

  restart(): void {
    this.spec = 'info';
  }
}

const node: FleetNode = { name: '127.0.0.1:9443', url: 'https://127.0.0.1:9443', dialect: 'peer', group: 'node', labels: {} };
const operator: NodeLogSpecWriter = { actor: 'O=org1,CN=operator', fields: {} };

function setup(options: { stateDir?: string; holdEvents?: boolean } = {}) {
  const scheduler = new FakeScheduler();
  const double = new NodeDouble();
  const client = {
    call: (_node: FleetNode, method: 'GET' | 'PUT', _path: string, body?: unknown): Promise<CallOutcome> => {
      double.calls.push(method);
      if (double.down) return Promise.resolve({ ok: false, reason: 'unreachable', error: 'ECONNREFUSED', latencyMs: 0 });
      if (method === 'GET') return Promise.resolve({ ok: true, status: 200, body: { spec: double.spec }, text: '', latencyMs: 0 });
      double.spec = (body as { spec: string }).spec;
      return Promise.resolve({ ok: true, status: 204, body: undefined, text: '', latencyMs: 0 });
    },
  };
  const dir = options.stateDir ?? mkdtempSync(path.join(tmpdir(), 'companion-logspec-'));
  const loggers = new CaptureLoggers();
  const counted: string[] = [];
  const writes = { with: (labels: Record<string, string>) => ({ add: () => void counted.push(`${labels.trigger}/${labels.result}`) }) } as unknown as Counter;
  const events: string[] = [];
  const make = () =>
    new NodeLogSpec({
      node,
      client,
      store: new FilePutBackStore(dir, { fileName: putBackFileName }),
      keys: { stateDirectory: 'operations.companion.logspec.stateDirectory' },
      scheduler,
      logger: loggers.getLogger('companion.logspec'),
      pollIntervalMs: 2000,
      writes,
      holdEvents: options.holdEvents ?? false,
      random: () => 0.5,
    });
  const logspec = make();
  const settle = async (which: NodeLogSpec = logspec) => {
    for (let i = 0; i < 20; i += 1) await Promise.resolve();
    await which.idle();
    for (let i = 0; i < 20; i += 1) await Promise.resolve();
  };
  const record = (type: string, reason: string, message: string) => void events.push(`${type} ${reason}: ${message}`);
  return { scheduler, double, logspec, make, dir, loggers, counted, events, settle, record };
}

describe('TTL writes and their put-back', () => {
  test('a second TTL keeps the spec from before the first: the put-back never restores debug', async () => {
    const { scheduler, double, logspec, settle } = setup();
    await logspec.start();
    expect(await logspec.set('debug', 60_000, operator)).toMatchObject({ ok: true, previous: 'info', spec: 'debug' });
    scheduler.advance(30_000);
    await logspec.set('gossip=debug:info', 60_000, operator);
    expect(logspec.pendingPutBack()).toMatchObject({ previous: 'info', specs: ['debug', 'gossip=debug:info'] });
    scheduler.advance(59_000);
    await settle();
    expect(double.spec).toBe('gossip=debug:info');
    scheduler.advance(1_000);
    await settle();
    expect(double.spec).toBe('info');
    expect(logspec.pendingPutBack()).toBeNull();
  });

  test('a spec someone else set meanwhile is left alone', async () => {
    const { scheduler, double, logspec, settle, loggers } = setup();
    await logspec.start();
    await logspec.set('debug', 10_000, operator);
    double.spec = 'warn';
    scheduler.advance(10_000);
    await settle();
    expect(double.spec).toBe('warn');
    expect(double.calls.slice(-1)).toEqual(['GET']);
    expect(loggers.find('info', /left at 'warn', not put back to 'info': it was changed since/)).toHaveLength(1);
  });

  test('a write without TTL makes the spec permanent: the earlier put-back is dropped', async () => {
    const { scheduler, double, logspec, settle, dir } = setup();
    await logspec.start();
    await logspec.set('debug', 10_000, operator);
    await logspec.set('warning', null, operator);
    expect(logspec.pendingPutBack()).toBeNull();
    expect(JSON.parse(readFileSync(path.join(dir, putBackFileName), 'utf8'))).toEqual({ version: 1, pending: [] });
    scheduler.advance(20_000);
    await settle();
    expect(double.spec).toBe('warn');
  });

  test('a node unreachable when the TTL ends is tried again with backoff; reported when it starts failing and when it ends', async () => {
    const { scheduler, double, logspec, settle, loggers, counted } = setup();
    await logspec.start();
    await logspec.set('debug', 10_000, operator);
    double.down = true;
    scheduler.advance(10_000);
    await settle();
    scheduler.advance(1_000);
    await settle();
    scheduler.advance(2_000);
    await settle();
    expect(logspec.pendingPutBack()).not.toBeNull();
    double.down = false;
    scheduler.advance(4_000);
    await settle();
    expect(double.spec).toBe('info');
    expect(
      loggers.entries
        .filter((entry) => entry.fields.audit === 'companion.logspec.putback')
        .map((entry) => [entry.level, entry.fields.result, entry.fields.attempts]),
    ).toEqual([
      ['warn', 'failed', 1],
      ['info', 'restored', 4],
    ]);
    expect(counted.filter((count) => count.startsWith('putback/'))).toEqual(['putback/failed', 'putback/failed', 'putback/failed', 'putback/applied']);
  });

  test('written ahead: the next instance loads the put-back and runs it when due (at once when overdue)', async () => {
    const { scheduler, double, logspec, make, settle, dir } = setup();
    await logspec.start();
    await logspec.set('debug', 10_000, operator);
    expect(JSON.parse(readFileSync(path.join(dir, putBackFileName), 'utf8'))).toMatchObject({
      version: 1,
      pending: [{ node: node.name, previous: 'info', specs: ['debug'], actor: operator.actor }],
    });
    await logspec.stop();
    scheduler.advance(60_000);
    expect(double.spec).toBe('debug');
    const next = make();
    await next.start();
    scheduler.advance(0);
    await settle(next);
    expect(double.spec).toBe('info');
    await next.stop();
  });

  test('a put-back for another node (the companion now beside another one) is dropped at start, with a warning', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'companion-logspec-'));
    writeFileSync(
      path.join(dir, putBackFileName),
      JSON.stringify({ version: 1, pending: [{ node: '10.0.0.9:9443', previous: 'info', specs: ['debug'], dueAt: 5000, actor: 'x' }] }),
      { mode: 0o600 },
    );
    const { logspec, loggers, double } = setup({ stateDir: dir });
    await logspec.start();
    expect(logspec.pendingPutBack()).toBeNull();
    expect(
      loggers.find('warn', /pending put-back .* for node 10\.0\.0\.9:9443, which is not this companion's node \(127\.0\.0\.1:9443\); dropped/),
    ).toHaveLength(1);
    expect(double.calls).toEqual([]);
  });

  test('an unusable state file stops the start, naming the companion key', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'companion-logspec-'));
    writeFileSync(path.join(dir, putBackFileName), 'not json', { mode: 0o600 });
    const { logspec } = setup({ stateDir: dir });
    const start = logspec.start();
    await expect(start).rejects.toBeInstanceOf(ConfigError);
    await expect(start).rejects.toThrow(/^operations\.companion\.logspec\.stateDirectory: .*companion-putbacks\.json is not JSON/);
  });

  test('bad requests are refused before the node is asked', async () => {
    const { logspec, double } = setup();
    await logspec.start();
    await expect(logspec.set('Loud', null, operator)).rejects.toBeInstanceOf(LogSpecError);
    await expect(logspec.set('debug', 500, operator)).rejects.toThrow('ttl: 500 ms is shorter than the minimum, 1s');
    await expect(logspec.set('debug', 8 * 24 * 3_600_000, operator)).rejects.toThrow(/longer than the maximum, 168h/);
    expect(double.calls).toEqual([]);
  });
});

describe('the declared spec, held on the node', () => {
  test('applied when declared; a restarted node (its own spec again) gets it again at the next poll', async () => {
    const { scheduler, double, logspec, settle, counted } = setup();
    await logspec.start();
    logspec.declare('gossip=debug:info', 'configmap fabric/peer0-logspec');
    await settle();
    expect(double.spec).toBe('gossip=debug:info');
    expect(logspec.declared()).toBe('gossip=debug:info');
    scheduler.advance(2000);
    await settle();
    expect(double.calls.slice(-1)).toEqual(['GET']);
    double.restart();
    scheduler.advance(2000);
    await settle();
    expect(double.spec).toBe('gossip=debug:info');
    expect(counted).toEqual(['declared/applied', 'restart/applied']);
  });

  test('a node that was unreachable is given the declared spec once it answers', async () => {
    const { scheduler, double, logspec, settle, loggers } = setup();
    await logspec.start();
    logspec.declare('debug', 'configmap fabric/x');
    await settle();
    double.down = true;
    scheduler.advance(2000);
    await settle();
    scheduler.advance(2000);
    await settle();
    // Said once while it lasts.
    expect(loggers.find('warn', /cannot be read/)).toHaveLength(1);
    double.down = false;
    double.restart();
    scheduler.advance(2000);
    await settle();
    expect(double.spec).toBe('debug');
    expect(
      loggers.find('info', /the node answers again, with 'info' \(a restart\): the declared specification 'debug' from configmap fabric\/x is applied again/),
    ).toHaveLength(1);
  });

  test('a write through the companion holds until the node restarts', async () => {
    const { scheduler, double, logspec, settle } = setup();
    await logspec.start();
    logspec.declare('warn', 'configmap fabric/x');
    await settle();
    await logspec.set('debug', null, operator);
    scheduler.advance(2000);
    await settle();
    expect(double.spec).toBe('debug');
    double.restart();
    scheduler.advance(2000);
    await settle();
    expect(double.spec).toBe('warn');
  });

  test('declared during a TTL write: the write holds until its end, and is put back to the declared spec', async () => {
    const { scheduler, double, logspec, settle } = setup();
    await logspec.start();
    await logspec.set('debug', 10_000, operator);
    logspec.declare('gossip=warn:info', 'configmap fabric/x');
    await settle();
    scheduler.advance(4000);
    await settle();
    expect(double.spec).toBe('debug');
    scheduler.advance(6000);
    await settle();
    expect(double.spec).toBe('gossip=warn:info');
    expect(logspec.pendingPutBack()).toBeNull();
  });

  test('an invalid declaration throws LogSpecError and changes nothing; its Warning Event is held until Events are connected', async () => {
    const { double, logspec, settle, events, record } = setup({ holdEvents: true });
    await logspec.start();
    logspec.declare('info', 'configmap fabric/x');
    await settle();
    expect(() => logspec.declare('Loud', 'configmap fabric/x')).toThrow(LogSpecError);
    expect(logspec.declared()).toBe('info');
    expect(double.calls).toEqual(['GET']);
    expect(events).toEqual([]);
    logspec.recordEventsWith(record);
    expect(events).toEqual([
      "Warning NodeLogSpecRefused: invalid logging specification 'Loud': bad segment 'Loud' (from configmap fabric/x); the node's declared specification stays 'info'",
    ]);
  });
});

describe('pure parts', () => {
  test("the node's spec is read as fabric-ops writes specs: flogging's Level(-2) is payload", () => {
    expect(normaliseNodeSpec('Level(-2)')).toBe('payload');
    expect(normaliseNodeSpec('gossip=Level(-2):info')).toBe('gossip=payload:info');
    expect(normaliseNodeSpec('grpc=warn:gossip=debug:info')).toBe('gossip=debug:grpc=warn:info');
    expect(normaliseNodeSpec('not a spec!')).toBe('not a spec!');
  });

  test('TTL bounds', () => {
    expect(ttlProblem(1000)).toBeNull();
    expect(ttlProblem(7 * 24 * 3_600_000)).toBeNull();
    expect(ttlProblem(999)).toMatch(/shorter than the minimum/);
  });

  test('PUT bodies: spec, and an optional ttl; anything else named', () => {
    expect(parseNodeLogSpecBody('{"spec":"debug"}')).toEqual({ ok: true, spec: 'debug' });
    expect(parseNodeLogSpecBody('{"spec":"debug","ttl":"15m"}')).toEqual({ ok: true, spec: 'debug', ttl: '15m' });
    expect(parseNodeLogSpecBody('')).toMatchObject({ ok: false, problem: expect.stringMatching(/^request body is empty/) as string });
    expect(parseNodeLogSpecBody('[]')).toMatchObject({ ok: false, problem: expect.stringMatching(/got an array$/) as string });
    expect(parseNodeLogSpecBody('{"ttl":"1m"}')).toEqual({ ok: false, problem: 'request body has no "spec" property' });
    expect(parseNodeLogSpecBody('{"spec":"debug","ttl":60}')).toEqual({ ok: false, problem: '"ttl" must be a Go duration string such as "15m"; got 60' });
    expect(parseNodeLogSpecBody('{"spec":5}')).toEqual({ ok: false, problem: '"spec" must be a string; got 5' });
  });
});
