/** The fleet's vocabulary: nodes, selectors, per-node outcomes and the events writes report. Types only. */
import type { CompanionSummary } from './certificates';

export const fleetDialects = ['peer', 'orderer', 'unknown'] as const;
export type FleetDialect = (typeof fleetDialects)[number];

/** One operations endpoint: a Fabric peer or orderer, or another fabric-ops. */
export interface FleetNode {
  readonly name: string;
  /** `https://host:port` (or `http://` for a node without TLS), no path. */
  readonly url: string;
  readonly dialect: FleetDialect;
  readonly labels: Readonly<Record<string, string>>;
  readonly group: string;
  /**
   * The name the node's server certificate must carry (SNI and the identity check); absent: the
   * URL's host. Discovery sets it from the source's tlsServerName (a Service reached at its
   * clusterIP, whose certificate names its DNS name).
   */
  readonly tlsServerName?: string;
  /** Its companion (docs/companion.md), when the configuration names one: where the fleet asks /companion/report. */
  readonly companion?: { readonly url: string };
}

/** Every given field must match; an empty selector selects every node. */
export interface NodeSelector {
  names?: readonly string[];
  groups?: readonly string[];
  dialect?: FleetDialect;
  labels?: Readonly<Record<string, string>>;
}

/** Why a node could not be asked (`ok`/`failing` are answers). */
export type CallFailureReason = 'unreachable' | 'tls' | 'unauthorized' | 'timeout' | 'bad_response';

export type NodeHealthStatus = 'ok' | 'failing' | CallFailureReason;

export interface FailedCheck {
  component: string;
  reason: string;
}

export interface NodeHealth {
  name: string;
  group: string;
  dialect: FleetDialect;
  url: string;
  status: NodeHealthStatus;
  latencyMs: number;
  failed_checks: FailedCheck[];
  error?: string;
  /** Its companion's certificates and disk in brief, from the last certificate round (src/fleet/certificates.ts); absent when not known. */
  companion?: CompanionSummary;
}

export type LogSpecChangeResult = 'applied' | 'failed' | 'rolled_back' | 'rollback_failed';
export type PutBackResult = 'restored' | 'skipped_changed' | 'failed' | 'cancelled';

export interface NodeLogSpecChange {
  name: string;
  result: LogSpecChangeResult;
  /** The spec the node had before (when it could be read). */
  previous?: string;
  reason?: CallFailureReason | 'rejected';
  error?: string;
}

export interface NodePutBack {
  name: string;
  result: PutBackResult;
  /** Attempts made for this put-back: on a failure, and on an end that came after failures (absent when the first attempt ended it). */
  attempts?: number;
  /** The spec put back (restored), or the spec found on the node (skipped_changed). */
  spec?: string;
  error?: string;
}

/** What the fleet reports to listeners (FleetService.onEvent): every write and every put-back. */
export type FleetEvent =
  | {
      type: 'fleet.logspec.changed';
      actor: string;
      selector: NodeSelector;
      spec: string;
      ttlMs: number | null;
      allOrNothing: boolean;
      nodes: NodeLogSpecChange[];
    }
  | { type: 'fleet.logspec.putback'; actor: string; trigger: 'ttl' | 'cancel'; nodes: NodePutBack[] }
  /** The put-back ConfigMap was deleted, or its key removed or changed, by someone else while put-backs were pending: fabric-ops wrote them again. */
  | { type: 'fleet.putbacks.rewritten'; actor: string; where: string; change: 'deleted' | 'key_removed' | 'changed'; nodes: string[] };

export type FleetEventListener = (event: FleetEvent) => void;
