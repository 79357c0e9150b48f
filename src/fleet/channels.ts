/**
 * The fleet's view of the chains (GET /fleet/channels, docs/fleet-channels.md): every node's
 * `ledger_blockchain_height` per channel, the highest height of each channel, each node's lag,
 * and whether it keeps up: `ok`, `behind` (more than `behindBlocks` below the highest for at
 * least `behindFor`), `stalled` (more than `behindBlocks` below, and its height has not moved
 * since the highest last did), or why its /metrics could not be read (the fleet's reasons).
 * The tracker remembers, per node and channel, the height and when it last changed, so that a
 * round's decision takes the rounds before it into account; the clock is injected.
 */
import type { Clock } from '../time';
import type { CallOutcome, NodeClient } from './client';
import type { FleetChannelSettings } from './config';
import { HeightReader, metricsHeadProblem, type HeightReading } from './channels-read';
import type { DiscoveryStatus, RoundReport } from './health';
import type { CallFailureReason, FleetDialect, FleetNode } from './types';

/** A node on a channel: keeping up, lagging for long, not moving, or not read (the fleet's reasons). */
export type ChannelNodeStatus = 'ok' | 'behind' | 'stalled' | CallFailureReason;

/** The Accept of a /metrics read: the classic text format (what Fabric's promhttp sends by default). */
const metricsAccept = 'text/plain;version=0.0.4;q=1,*/*;q=0.1';

export interface ChannelNodeHeight {
  name: string;
  group: string;
  dialect: FleetDialect;
  status: ChannelNodeStatus;
  /** Its height: read this round; when its /metrics was not read this round, the last read. */
  height: number;
  /** The channel's highest height minus its height. */
  lag: number;
  /** How long it has lagged by more than behindBlocks, in ms (present while it does). */
  laggingMs?: number;
  /** How long its height has not changed, in ms (present when stalled). */
  unchangedMs?: number;
  /** Why it was not read (with a reason status). */
  error?: string;
}

export interface ChannelEntry {
  channel: string;
  /** The highest height of any node of the fleet on this channel (the last read of a node not read this round counts). */
  highest: number;
  peers: ChannelNodeHeight[];
  orderers: ChannelNodeHeight[];
  /** Nodes of dialect `unknown`. */
  others: ChannelNodeHeight[];
}

/** What the round got from each node's /metrics. */
export interface NodeChannelsRead {
  name: string;
  group: string;
  dialect: FleetDialect;
  url: string;
  status: 'ok' | CallFailureReason;
  /** Channels it has: read this round, or known from the last read. */
  channels: number;
  /** Height samples past channels.maxChannels: their channels are not known to the fleet. */
  channelsDropped: number;
  /** Bytes of /metrics read (the read stops once the height family has ended). */
  bytesRead?: number;
  latencyMs: number;
  error?: string;
}

export interface FleetChannelReport {
  /** When the round ended (ISO 8601). */
  time: string;
  round: RoundReport;
  settings: { behindBlocks: number; behindForMs: number; maxChannels: number };
  /** ok, behind, stalled: entries (a node on a channel); unreadable, capped: nodes (not read; with channels past maxChannels). */
  summary: { channels: number; nodes: number; ok: number; behind: number; stalled: number; unreadable: number; capped: number };
  channels: ChannelEntry[];
  nodes: NodeChannelsRead[];
  discovery?: DiscoveryStatus[];
  reason?: string;
}

/** One node's read in a round: the node and the call's outcome (`body` a HeightReading when ok). */
export interface NodeHeightsRead {
  node: FleetNode;
  outcome: CallOutcome;
}

/** Reads a node's heights from its /metrics, streamed and bounded (channels-read.ts), for FleetService's rounds. */
export async function readNodeHeights(
  client: NodeClient,
  node: FleetNode,
  signal: AbortSignal,
  settings: Pick<FleetChannelSettings, 'maxChannels' | 'maxMetricsBytes'>,
): Promise<{ result: NodeHeightsRead; outcome: CallOutcome }> {
  const reader = new HeightReader({ maxBytes: settings.maxMetricsBytes, maxChannels: settings.maxChannels });
  const outcome = await client.call(node, 'GET', '/metrics', undefined, signal, {
    accept: metricsAccept,
    reader: {
      head: metricsHeadProblem,
      write: (chunk) => reader.write(chunk),
      end: () => {
        const ended = reader.end();
        return 'problem' in ended ? ended : { value: ended };
      },
    },
  });
  return { result: { node, outcome }, outcome };
}

/** What the tracker keeps of a node on a channel. */
export interface HeightState {
  height: number;
  /** When its height was first read or last changed (the tracker's clock). */
  changedAt: number;
  /** Since when it has lagged by more than behindBlocks; null when it does not. */
  laggingSince: number | null;
}

/**
 * Pure: a read node's status on a channel. Lagging is more than `behindBlocks` below the
 * highest. A lagging node whose height has not changed since the highest last moved is
 * `stalled` (two reads, the highest moving between them, are the evidence: no duration); a
 * lagging node that moves is `behind` once it has lagged for `behindForMs`, `ok` before.
 */
export function decideStatus(input: {
  height: number;
  highest: number;
  /** When the channel's highest height last grew. */
  highestMovedAt: number;
  changedAt: number;
  laggingSince: number | null;
  now: number;
  behindBlocks: number;
  behindForMs: number;
}): { status: 'ok' | 'behind' | 'stalled'; lag: number; laggingSince: number | null } {
  const lag = Math.max(0, input.highest - input.height);
  if (lag <= input.behindBlocks) return { status: 'ok', lag, laggingSince: null };
  const laggingSince = input.laggingSince ?? input.now;
  if (input.highestMovedAt > input.changedAt) return { status: 'stalled', lag, laggingSince };
  return { status: input.now - laggingSince >= input.behindForMs ? 'behind' : 'ok', lag, laggingSince };
}

interface NodeState {
  group: string;
  dialect: FleetDialect;
  channels: Map<string, HeightState>;
}

/**
 * Heights between rounds: per node (in the fleet now) and channel, the last height and when it
 * changed; per channel, the highest and when it last grew. A node that left is forgotten; a
 * channel no node has any more is gone. Memory: nodes x channels (each node's at most maxChannels).
 */
export class ChannelTracker {
  private readonly nodes = new Map<string, NodeState>();
  private readonly highest = new Map<string, { height: number; movedAt: number }>();

  constructor(
    private readonly settings: Pick<FleetChannelSettings, 'behindBlocks' | 'behindForMs' | 'maxChannels'>,
    private readonly clock: Clock,
  ) {}

  /** A node that left the fleet: its heights no longer count. */
  forget(name: string): void {
    this.nodes.delete(name);
  }

  /**
   * The round's reads: each node's state updated (a node not read keeps its last heights), the
   * nodes not in the fleet any more dropped (`current`), and the report. `wallNow`: the time
   * the report names.
   */
  record(reads: readonly NodeHeightsRead[], round: RoundReport, current: (node: FleetNode) => boolean, wallNow: number): FleetChannelReport {
    const now = this.clock.now();
    const { behindBlocks, behindForMs, maxChannels } = this.settings;
    const inRound = new Set<string>();
    const nodeReports: NodeChannelsRead[] = [];
    for (const { node, outcome } of reads) {
      if (!current(node)) continue;
      inRound.add(node.name);
      let state = this.nodes.get(node.name);
      if (state === undefined || state.group !== node.group || state.dialect !== node.dialect) {
        state = { group: node.group, dialect: node.dialect, channels: state?.channels ?? new Map<string, HeightState>() };
        this.nodes.set(node.name, state);
      }
      const base = { name: node.name, group: node.group, dialect: node.dialect, url: node.url, latencyMs: Math.round(outcome.latencyMs) };
      if (!outcome.ok) {
        nodeReports.push({ ...base, status: outcome.reason, channels: state.channels.size, channelsDropped: 0, error: outcome.error });
        continue;
      }
      const reading = outcome.body as HeightReading;
      for (const channel of [...state.channels.keys()]) if (!reading.heights.has(channel)) state.channels.delete(channel);
      for (const [channel, height] of reading.heights) {
        const known = state.channels.get(channel);
        if (known === undefined) state.channels.set(channel, { height, changedAt: now, laggingSince: null });
        else if (known.height !== height) {
          known.height = height;
          known.changedAt = now;
        }
      }
      nodeReports.push({ ...base, status: 'ok', channels: reading.heights.size, channelsDropped: reading.dropped, bytesRead: reading.bytes });
    }
    // The round's nodes are the fleet's (the directory when it began): the others left.
    for (const name of [...this.nodes.keys()]) if (!inRound.has(name)) this.nodes.delete(name);

    const highestNow = new Map<string, number>();
    for (const state of this.nodes.values()) {
      for (const [channel, { height }] of state.channels) highestNow.set(channel, Math.max(height, highestNow.get(channel) ?? 0));
    }
    for (const channel of [...this.highest.keys()]) if (!highestNow.has(channel)) this.highest.delete(channel);
    for (const [channel, height] of highestNow) {
      const known = this.highest.get(channel);
      if (known === undefined) this.highest.set(channel, { height, movedAt: now });
      else if (height > known.height) this.highest.set(channel, { height, movedAt: now });
      // Lower: the node that had the highest left; the chain did not move.
      else known.height = height;
    }

    const readStatus = new Map(nodeReports.map((entry) => [entry.name, entry]));
    const entries = new Map<string, ChannelEntry>();
    const counts = { ok: 0, behind: 0, stalled: 0 };
    for (const name of inRound) {
      const state = this.nodes.get(name);
      const read = readStatus.get(name);
      if (state === undefined || read === undefined) continue;
      for (const [channel, heightState] of state.channels) {
        const top = this.highest.get(channel) ?? { height: heightState.height, movedAt: now };
        let entry: ChannelNodeHeight;
        const base = { name, group: state.group, dialect: state.dialect };
        if (read.status !== 'ok') {
          entry = { ...base, status: read.status, height: heightState.height, lag: Math.max(0, top.height - heightState.height), error: read.error ?? '' };
        } else {
          const decided = decideStatus({
            height: heightState.height,
            highest: top.height,
            highestMovedAt: top.movedAt,
            changedAt: heightState.changedAt,
            laggingSince: heightState.laggingSince,
            now,
            behindBlocks,
            behindForMs,
          });
          heightState.laggingSince = decided.laggingSince;
          entry = { ...base, status: decided.status, height: heightState.height, lag: decided.lag };
          if (decided.laggingSince !== null) entry.laggingMs = Math.round(now - decided.laggingSince);
          if (decided.status === 'stalled') entry.unchangedMs = Math.round(now - heightState.changedAt);
          counts[decided.status] += 1;
        }
        let channelEntry = entries.get(channel);
        if (channelEntry === undefined) {
          channelEntry = { channel, highest: top.height, peers: [], orderers: [], others: [] };
          entries.set(channel, channelEntry);
        }
        (state.dialect === 'peer' ? channelEntry.peers : state.dialect === 'orderer' ? channelEntry.orderers : channelEntry.others).push(entry);
      }
    }
    const channels = [...entries.values()].sort((a, b) => (a.channel < b.channel ? -1 : a.channel > b.channel ? 1 : 0));
    return {
      time: new Date(wallNow).toISOString(),
      round,
      settings: { behindBlocks, behindForMs, maxChannels },
      summary: {
        channels: channels.length,
        nodes: nodeReports.length,
        ...counts,
        unreadable: nodeReports.filter((entry) => entry.status !== 'ok').length,
        capped: nodeReports.filter((entry) => entry.channelsDropped > 0).length,
      },
      channels,
      nodes: nodeReports,
    };
  }
}
