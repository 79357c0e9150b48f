import type { Gauge, LabelValues, MetricOptions, MetricsProvider } from '../metrics/types';
import type { FleetChannelReport } from './channels';
import type { FleetNode } from './types';

/**
 * The fleet's metrics of the chains (docs/fleet-channels.md, "Metrics"), set by every channel
 * round. Bounded: a series per channel and node of the fleet (each node's channels at most
 * channels.maxChannels); the series of a node that left, or of a channel a node no longer has,
 * are removed at once (a node that left) or by the next round.
 */
export const channelMetricOptions = {
  height: {
    namespace: 'fleet',
    name: 'channel_height',
    help: "The node's ledger height on the channel (blocks), from its /metrics; the last read while it cannot be read.",
    labelNames: ['channel', 'node', 'dialect'],
  },
  lag: {
    namespace: 'fleet',
    name: 'channel_lag',
    help: "Blocks between the channel's highest height in the fleet and the node's height.",
    labelNames: ['channel', 'node', 'dialect'],
  },
  highest: {
    namespace: 'fleet',
    name: 'channel_highest_height',
    help: 'The highest ledger height of any node of the fleet on the channel (blocks).',
    labelNames: ['channel'],
  },
  behindBlocks: {
    namespace: 'fleet',
    name: 'channel_behind_threshold_blocks',
    help: 'channels.behindBlocks: a node lagging by more than this many blocks is behind (or stalled).',
    labelNames: [],
  },
  read: {
    namespace: 'fleet',
    name: 'node_channels_read',
    help: "1 when the last channel round read the heights on the node's /metrics, 0 when it could not.",
    labelNames: ['node', 'group'],
  },
} as const satisfies Record<string, MetricOptions & { namespace: string; labelNames: readonly string[] }>;

function statsdFormat(labelNames: readonly string[]): string {
  return ['%{#fqname}', ...labelNames.map((label) => `%{${label}}`)].join('.');
}

export class FleetChannelMetrics {
  private readonly height: Gauge;
  private readonly lag: Gauge;
  private readonly highest: Gauge;
  private readonly read: Gauge;
  private readonly behindBlocks: Gauge;
  /** The series set now, to remove those the next round no longer has. */
  private readonly pairs = new Map<string, LabelValues>();
  private readonly channels = new Set<string>();
  private readonly readOf = new Map<string, string>();

  constructor(provider: MetricsProvider) {
    const gauge = (options: MetricOptions & { labelNames: readonly string[] }): Gauge =>
      provider.newGauge({ ...options, labelNames: [...options.labelNames], statsdFormat: statsdFormat(options.labelNames) });
    this.height = gauge(channelMetricOptions.height);
    this.lag = gauge(channelMetricOptions.lag);
    this.highest = gauge(channelMetricOptions.highest);
    this.read = gauge(channelMetricOptions.read);
    this.behindBlocks = gauge(channelMetricOptions.behindBlocks);
  }

  /** channels.behindBlocks, exported for the alert rules. */
  setBehindBlocks(blocks: number): void {
    this.behindBlocks.set(blocks);
  }

  /** A node that left (or changed group): its series go now. */
  forget(node: Pick<FleetNode, 'name' | 'group'>): void {
    for (const [key, labels] of [...this.pairs]) {
      if (labels.node !== node.name) continue;
      this.height.remove?.(labels);
      this.lag.remove?.(labels);
      this.pairs.delete(key);
    }
    if (this.readOf.get(node.name) === node.group) {
      this.read.remove?.({ node: node.name, group: node.group });
      this.readOf.delete(node.name);
    }
  }

  /** `current`: whether the node is still in the fleet (a round that began before it left does not bring its series back). */
  record(report: FleetChannelReport, current: (node: { name: string; group: string }) => boolean): void {
    const pairs = new Map<string, LabelValues>();
    const channels = new Set<string>();
    for (const entry of report.channels) {
      let any = false;
      for (const node of [...entry.orderers, ...entry.peers, ...entry.others]) {
        if (!current(node)) continue;
        any = true;
        const labels = { channel: entry.channel, node: node.name, dialect: node.dialect };
        pairs.set(`${entry.channel}\u0000${node.name}\u0000${node.dialect}`, labels);
        this.height.with(labels).set(node.height);
        this.lag.with(labels).set(node.lag);
      }
      if (any) {
        channels.add(entry.channel);
        this.highest.with({ channel: entry.channel }).set(entry.highest);
      }
    }
    for (const [key, labels] of this.pairs) {
      if (pairs.has(key)) continue;
      this.height.remove?.(labels);
      this.lag.remove?.(labels);
    }
    this.pairs.clear();
    for (const [key, labels] of pairs) this.pairs.set(key, labels);
    for (const channel of this.channels) if (!channels.has(channel)) this.highest.remove?.({ channel });
    this.channels.clear();
    for (const channel of channels) this.channels.add(channel);

    const seen = new Set<string>();
    for (const node of report.nodes) {
      if (!current(node)) continue;
      seen.add(node.name);
      const previous = this.readOf.get(node.name);
      if (previous !== undefined && previous !== node.group) this.read.remove?.({ node: node.name, group: previous });
      this.readOf.set(node.name, node.group);
      this.read.with({ node: node.name, group: node.group }).set(node.status === 'ok' ? 1 : 0);
    }
    for (const [name, group] of [...this.readOf]) {
      if (seen.has(name)) continue;
      this.read.remove?.({ node: name, group });
      this.readOf.delete(name);
    }
  }
}
