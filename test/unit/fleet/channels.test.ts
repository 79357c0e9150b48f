/**
 * How lag and stalls are decided (src/fleet/channels.ts): decideStatus, and the tracker over
 * rounds with the project's injected clock (a FakeScheduler, whose time moves only when the test
 * says). Heights as the recorded network's steps have them (heights-<step>.txt): 1, then ch1=4
 * ch2=2, then ch1=6 with peer0.org2 stopped, then all at 6.
 */
import type { CallOutcome } from '../../../src/fleet/client';
import { ChannelTracker, decideStatus, type FleetChannelReport, type NodeHeightsRead } from '../../../src/fleet/channels';
import type { HeightReading } from '../../../src/fleet/channels-read';
import type { RoundReport } from '../../../src/fleet/health';
import type { FleetNode } from '../../../src/fleet/types';
import { FakeScheduler } from '../../support/fake-scheduler';

const node = (name: string, dialect: FleetNode['dialect']): FleetNode => ({
  name,
  dialect,
  group: name.split('.')[1] ?? 'g',
  url: `https://${name}:9443`,
  labels: {},
});
const orderer = node('orderer0.ordererorg', 'orderer');
const peer1 = node('peer0.org1', 'peer');
const peer2 = node('peer0.org2', 'peer');
const other = node('ops.misc', 'unknown');

const round: RoundReport = { started: '2026-11-27T00:00:00.000Z', durationMs: 10, deadlineMs: 5000, cut: 0, notAsked: 0 };

function answered(target: FleetNode, heights: Record<string, number>, dropped = 0): NodeHeightsRead {
  const reading: HeightReading = { heights: new Map(Object.entries(heights)), dropped, bytes: 1000, stoppedEarly: true };
  return { node: target, outcome: { ok: true, status: 200, body: reading, text: '', latencyMs: 3 } };
}

function failed(target: FleetNode, reason: 'unreachable' | 'timeout' | 'bad_response', error: string): NodeHeightsRead {
  const outcome: CallOutcome = { ok: false, reason, error, latencyMs: 2 };
  return { node: target, outcome };
}

/** channel -> node -> [status, height, lag] */
function table(report: FleetChannelReport): Record<string, Record<string, [string, number, number]>> {
  return Object.fromEntries(
    report.channels.map((entry) => [
      entry.channel,
      Object.fromEntries([...entry.orderers, ...entry.peers, ...entry.others].map((n) => [n.name, [n.status, n.height, n.lag] as [string, number, number]])),
    ]),
  );
}

function setup(settings: Partial<{ behindBlocks: number; behindForMs: number; maxChannels: number }> = {}) {
  const clock = new FakeScheduler();
  const tracker = new ChannelTracker({ behindBlocks: 0, behindForMs: 60_000, maxChannels: 500, ...settings }, clock);
  const members = new Set([orderer.name, peer1.name, peer2.name, other.name]);
  const record = (reads: NodeHeightsRead[]): FleetChannelReport => tracker.record(reads, round, (n) => members.has(n.name), 1_800_000_000_000 + clock.now());
  return { clock, tracker, record, members };
}

describe('decideStatus', () => {
  const base = { highestMovedAt: 0, changedAt: 0, laggingSince: null, now: 0, behindBlocks: 2, behindForMs: 60_000 };

  test('within behindBlocks: ok, no lagging time', () => {
    expect(decideStatus({ ...base, height: 8, highest: 10 })).toEqual({ status: 'ok', lag: 2, laggingSince: null });
    expect(decideStatus({ ...base, height: 10, highest: 10, laggingSince: 5 })).toEqual({ status: 'ok', lag: 0, laggingSince: null });
  });

  test('lagging and moving: ok until behindFor has passed since it began lagging, then behind', () => {
    expect(decideStatus({ ...base, height: 7, highest: 10, now: 1000 })).toEqual({ status: 'ok', lag: 3, laggingSince: 1000 });
    expect(decideStatus({ ...base, height: 7, highest: 10, now: 60_999, laggingSince: 1000 })).toEqual({ status: 'ok', lag: 3, laggingSince: 1000 });
    expect(decideStatus({ ...base, height: 7, highest: 10, now: 61_000, laggingSince: 1000 })).toEqual({ status: 'behind', lag: 3, laggingSince: 1000 });
    expect(decideStatus({ ...base, height: 7, highest: 10, now: 0, behindForMs: 0 })).toEqual({ status: 'behind', lag: 3, laggingSince: 0 });
  });

  test('lagging, and its height has not changed since the highest last moved: stalled, without waiting', () => {
    expect(decideStatus({ ...base, height: 7, highest: 10, changedAt: 100, highestMovedAt: 200, now: 200 })).toEqual({
      status: 'stalled',
      lag: 3,
      laggingSince: 200,
    });
    // It moved after the highest did: not stalled.
    expect(decideStatus({ ...base, height: 7, highest: 10, changedAt: 300, highestMovedAt: 200, now: 300 }).status).toBe('ok');
    // Unchanged but within behindBlocks: ok.
    expect(decideStatus({ ...base, height: 9, highest: 10, changedAt: 100, highestMovedAt: 200, now: 200 }).status).toBe('ok');
  });
});

describe('the tracker over rounds', () => {
  test('all nodes at the same height: ok, lag 0, peers and orderers apart, the highest', () => {
    const { record } = setup();
    const report = record([answered(orderer, { ch1: 1, ch2: 1 }), answered(peer1, { ch1: 1, ch2: 1 }), answered(peer2, { ch1: 1, ch2: 1 })]);
    expect(report.channels.map((entry) => [entry.channel, entry.highest, entry.orderers.map((n) => n.name), entry.peers.map((n) => n.name)])).toEqual([
      ['ch1', 1, [orderer.name], [peer1.name, peer2.name]],
      ['ch2', 1, [orderer.name], [peer1.name, peer2.name]],
    ]);
    expect(report.summary).toEqual({ channels: 2, nodes: 3, ok: 6, behind: 0, stalled: 0, unreadable: 0, capped: 0 });
    expect(report.channels[0]?.peers[0]).toEqual({ name: peer1.name, group: 'org1', dialect: 'peer', status: 'ok', height: 1, lag: 0 });
    expect(report.time).toBe(new Date(1_800_000_000_000).toISOString());
  });

  test('a peer stopped while the others move, then back: its reason with its last height while down, behind with the right lag while it catches up, ok after', () => {
    const { clock, record } = setup({ behindBlocks: 0, behindForMs: 0 });
    record([answered(orderer, { ch1: 1, ch2: 1 }), answered(peer1, { ch1: 1, ch2: 1 }), answered(peer2, { ch1: 1, ch2: 1 })]);
    clock.advance(30_000);
    record([answered(orderer, { ch1: 4, ch2: 2 }), answered(peer1, { ch1: 4, ch2: 2 }), answered(peer2, { ch1: 4, ch2: 2 })]);
    clock.advance(30_000);
    const down = record([
      answered(orderer, { ch1: 6, ch2: 2 }),
      answered(peer1, { ch1: 6, ch2: 2 }),
      failed(peer2, 'unreachable', 'ECONNREFUSED: connect ECONNREFUSED 127.0.0.1:7001'),
    ]);
    expect(table(down)).toEqual({
      ch1: { [orderer.name]: ['ok', 6, 0], [peer1.name]: ['ok', 6, 0], [peer2.name]: ['unreachable', 4, 2] },
      ch2: { [orderer.name]: ['ok', 2, 0], [peer1.name]: ['ok', 2, 0], [peer2.name]: ['unreachable', 2, 0] },
    });
    expect(down.channels[0]?.peers[1]?.error).toBe('ECONNREFUSED: connect ECONNREFUSED 127.0.0.1:7001');
    expect(down.summary).toMatchObject({ unreadable: 1, ok: 4 });
    expect(down.nodes.find((n) => n.name === peer2.name)).toMatchObject({ status: 'unreachable', channels: 2 });
    clock.advance(30_000);
    const catching = record([answered(orderer, { ch1: 6, ch2: 2 }), answered(peer1, { ch1: 6, ch2: 2 }), answered(peer2, { ch1: 5, ch2: 2 })]);
    expect(table(catching).ch1?.[peer2.name]).toEqual(['behind', 5, 1]);
    expect(table(catching).ch2?.[peer2.name]).toEqual(['ok', 2, 0]);
    clock.advance(30_000);
    const back = record([answered(orderer, { ch1: 6, ch2: 2 }), answered(peer1, { ch1: 6, ch2: 2 }), answered(peer2, { ch1: 6, ch2: 2 })]);
    expect(table(back).ch1?.[peer2.name]).toEqual(['ok', 6, 0]);
    expect(back.summary).toMatchObject({ ok: 6, behind: 0, stalled: 0, unreadable: 0 });
  });

  test('behindFor: a lagging node that moves is ok (with how long it lags) until behindFor has passed, then behind', () => {
    const { clock, record } = setup({ behindBlocks: 1, behindForMs: 60_000 });
    const heights = (peerHeight: number, top: number) => [answered(orderer, { ch1: top }), answered(peer1, { ch1: peerHeight })];
    record(heights(10, 10));
    clock.advance(30_000);
    let report = record(heights(11, 14));
    expect(report.channels[0]?.peers[0]).toMatchObject({ status: 'ok', lag: 3, laggingMs: 0 });
    clock.advance(30_000);
    report = record(heights(13, 16));
    expect(report.channels[0]?.peers[0]).toMatchObject({ status: 'ok', lag: 3, laggingMs: 30_000 });
    clock.advance(30_000);
    report = record(heights(15, 18));
    expect(report.channels[0]?.peers[0]).toMatchObject({ status: 'behind', lag: 3, laggingMs: 60_000 });
    clock.advance(30_000);
    // Back within behindBlocks: ok, and the lagging time starts again next time.
    report = record(heights(18, 19));
    expect(report.channels[0]?.peers[0]).toEqual({ name: peer1.name, group: 'org1', dialect: 'peer', status: 'ok', height: 18, lag: 1 });
  });

  test('a peer that answers but whose height stops while the others move: stalled, how long unchanged; moving again: not stalled', () => {
    const { clock, record } = setup({ behindBlocks: 0, behindForMs: 60_000 });
    record([answered(orderer, { ch1: 4 }), answered(peer1, { ch1: 4 })]);
    clock.advance(30_000);
    let report = record([answered(orderer, { ch1: 6 }), answered(peer1, { ch1: 4 })]);
    expect(report.channels[0]?.peers[0]).toMatchObject({ status: 'stalled', height: 4, lag: 2, unchangedMs: 30_000 });
    expect(report.summary.stalled).toBe(1);
    clock.advance(30_000);
    // The highest does not move: still no block since it last did.
    report = record([answered(orderer, { ch1: 6 }), answered(peer1, { ch1: 4 })]);
    expect(report.channels[0]?.peers[0]).toMatchObject({ status: 'stalled', unchangedMs: 60_000 });
    clock.advance(30_000);
    report = record([answered(orderer, { ch1: 6 }), answered(peer1, { ch1: 5 })]);
    // Moving, lagging for 60 s of the 60 s behindFor: behind, not stalled.
    expect(report.channels[0]?.peers[0]).toMatchObject({ status: 'behind', lag: 1, laggingMs: 60_000 });
  });

  test('a node back after a failed read with the same height while the highest moved: stalled', () => {
    const { clock, record } = setup({ behindBlocks: 0, behindForMs: 60_000 });
    record([answered(orderer, { ch1: 4 }), answered(peer2, { ch1: 4 })]);
    clock.advance(30_000);
    record([answered(orderer, { ch1: 6 }), failed(peer2, 'timeout', 'no complete answer within 2000 ms')]);
    clock.advance(30_000);
    const report = record([answered(orderer, { ch1: 6 }), answered(peer2, { ch1: 4 })]);
    expect(table(report).ch1?.[peer2.name]).toEqual(['stalled', 4, 2]);
  });

  test('nodes without a channel are not behind on it; unknown dialects go to others; a node never read is only in nodes', () => {
    const { record } = setup({ behindBlocks: 0, behindForMs: 0 });
    const report = record([
      answered(orderer, { ch1: 6, ch2: 2, sys: 9 }),
      answered(peer1, { ch1: 6 }),
      answered(other, {}),
      failed(peer2, 'bad_response', 'not text'),
    ]);
    expect(table(report)).toEqual({
      ch1: { [orderer.name]: ['ok', 6, 0], [peer1.name]: ['ok', 6, 0] },
      ch2: { [orderer.name]: ['ok', 2, 0] },
      sys: { [orderer.name]: ['ok', 9, 0] },
    });
    expect(report.nodes.map((n) => [n.name, n.status, n.channels])).toEqual([
      [orderer.name, 'ok', 3],
      [peer1.name, 'ok', 1],
      [other.name, 'ok', 0],
      [peer2.name, 'bad_response', 0],
    ]);
    const withOther = setup().record([answered(other, { ch1: 3 }), answered(peer1, { ch1: 3 })]);
    expect(withOther.channels[0]?.others.map((n) => n.name)).toEqual([other.name]);
  });

  test('the highest counts the last read of a node not read now; a channel no node has any more is gone; a node that left is forgotten', () => {
    const { clock, record, members, tracker } = setup({ behindBlocks: 0, behindForMs: 0 });
    record([answered(orderer, { ch1: 9, old: 3 }), answered(peer1, { ch1: 9 })]);
    clock.advance(1000);
    let report = record([failed(orderer, 'unreachable', 'down'), answered(peer1, { ch1: 7 })]);
    expect(table(report).ch1).toEqual({ [orderer.name]: ['unreachable', 9, 0], [peer1.name]: ['behind', 7, 2] });
    clock.advance(1000);
    report = record([answered(orderer, { ch1: 9 }), answered(peer1, { ch1: 9 })]);
    expect(report.channels.map((entry) => entry.channel)).toEqual(['ch1']);
    members.delete(orderer.name);
    tracker.forget(orderer.name);
    report = record([answered(orderer, { ch1: 20 }), answered(peer1, { ch1: 9 })]);
    expect(table(report)).toEqual({ ch1: { [peer1.name]: ['ok', 9, 0] } });
    expect(report.nodes.map((n) => n.name)).toEqual([peer1.name]);
  });

  test('a node with channels past maxChannels is counted as capped, with how many were dropped', () => {
    const { record } = setup({ maxChannels: 2 });
    const report = record([answered(orderer, { a: 1, b: 1 }, 4998)]);
    expect(report.summary.capped).toBe(1);
    expect(report.nodes[0]).toMatchObject({ channels: 2, channelsDropped: 4998 });
    expect(report.settings).toEqual({ behindBlocks: 0, behindForMs: 60_000, maxChannels: 2 });
  });
});
