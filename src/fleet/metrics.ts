import type { Counter, Gauge, MetricsProvider } from '../metrics/types';
import { boundVersionText, type FleetVersionReport } from './versions';
import type { FleetHealthReport } from './health';
import type { FleetNode } from './types';
import { FleetChannelMetrics } from './channels-metrics';

/** The fleet's metrics (README, "Fleet metrics"). Updated by every health and version round. */
export class FleetMetrics {
  readonly logspecChanges: Counter;
  readonly logspecPutBacks: Counter;
  private readonly known: Gauge;
  private readonly up: Gauge;
  private readonly healthy: Gauge;
  private readonly nodeUp: Gauge;
  private readonly nodeHealthy: Gauge;
  private readonly versionInfo: Gauge;
  private readonly certificateExpiry: Gauge;
  private readonly versionOf = new Map<string, { version: string; commit: string }>();

  /** The chains' series, set by the channel rounds (src/fleet/channels-metrics.ts). */
  readonly channels: FleetChannelMetrics;

  constructor(provider: MetricsProvider) {
    const gauge = (name: string, help: string, labelNames: string[] = []): Gauge =>
      provider.newGauge({ namespace: 'fleet', name, help, labelNames, statsdFormat: ['%{#fqname}', ...labelNames.map((label) => `%{${label}}`)].join('.') });
    this.known = gauge('nodes_known', 'Nodes in the fleet now: configured and discovered.');
    this.up = gauge('nodes_up', 'Nodes whose /healthz gave an HTTP answer in the last round.');
    this.healthy = gauge('nodes_healthy', 'Nodes whose /healthz answered 200 in the last round.');
    this.nodeUp = gauge('node_up', '1 when the node gave an HTTP answer in the last health round.', ['node', 'group']);
    this.nodeHealthy = gauge('node_healthy', '1 when the node answered /healthz 200 in the last health round.', ['node', 'group']);
    this.versionInfo = gauge('node_version_info', '1 for the version and commit the node last reported on /version.', ['node', 'version', 'commit']);
    this.certificateExpiry = gauge(
      'node_certificate_expiry_timestamp_seconds',
      "notAfter of the node's operations server certificate, from the last TLS handshake (seconds since the epoch).",
      ['node'],
    );
    this.logspecChanges = provider.newCounter({
      namespace: 'fleet',
      name: 'logspec_changes',
      help: 'Per-node results of fleet logspec writes (applied, failed, rolled_back, rollback_failed).',
      labelNames: ['result'],
      statsdFormat: '%{#fqname}.%{result}',
    });
    this.logspecPutBacks = provider.newCounter({
      namespace: 'fleet',
      name: 'logspec_putbacks',
      help: 'Per-node results of fleet logspec put-backs (restored, skipped_changed, failed).',
      labelNames: ['result'],
      statsdFormat: '%{#fqname}.%{result}',
    });
    this.channels = new FleetChannelMetrics(provider);
  }

  /** The fleet's size now (at start and whenever a node joins or leaves). */
  setKnown(count: number): void {
    this.known.set(count);
  }

  /** A node that left (or moved to another group): its series go, so no dashboard shows it as up or down any more. */
  forget(node: FleetNode): void {
    this.channels.forget(node);
    this.nodeUp.remove?.({ node: node.name, group: node.group });
    this.nodeHealthy.remove?.({ node: node.name, group: node.group });
    this.certificateExpiry.remove?.({ node: node.name });
    const version = this.versionOf.get(node.name);
    if (version !== undefined) this.versionInfo.remove?.({ node: node.name, ...version });
    this.versionOf.delete(node.name);
  }

  /** `current`: whether the node is still in the fleet (a round that began before it left does not bring its series back). */
  recordHealth(report: FleetHealthReport, current: (node: { name: string; group: string }) => boolean = () => true): void {
    let up = 0;
    for (const node of report.nodes) {
      const answered = node.status === 'ok' || node.status === 'failing';
      if (answered) up += 1;
      if (!current(node)) continue;
      this.nodeUp.with({ node: node.name, group: node.group }).set(answered ? 1 : 0);
      this.nodeHealthy.with({ node: node.name, group: node.group }).set(node.status === 'ok' ? 1 : 0);
    }
    this.up.set(up);
    this.healthy.set(report.healthy);
  }

  recordVersions(report: FleetVersionReport, current: (name: string) => boolean = () => true): void {
    for (const answered of report.versions) {
      // Labels are bounded and escaped whoever built the report (groupVersions already does).
      const group = { ...answered, version: boundVersionText(answered.version), commit: boundVersionText(answered.commit) };
      for (const name of group.nodes) {
        if (!current(name)) continue;
        const previous = this.versionOf.get(name);
        if (previous !== undefined && (previous.version !== group.version || previous.commit !== group.commit)) {
          // A node that changed version: its old series goes (to 0 where the provider cannot remove one).
          const old = this.versionInfo.with({ node: name, ...previous });
          if (this.versionInfo.remove !== undefined) this.versionInfo.remove({ node: name, ...previous });
          else old.set(0);
        }
        this.versionOf.set(name, { version: group.version, commit: group.commit });
        this.versionInfo.with({ node: name, version: group.version, commit: group.commit }).set(1);
      }
    }
  }

  recordCertificate(node: FleetNode, notAfterMs: number): void {
    this.certificateExpiry.with({ node: node.name }).set(Math.floor(notAfterMs / 1000));
  }
}
