/** The fleet's vocabulary: nodes, selectors, per-node outcomes and the events writes report. Types only. */

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
  | { type: 'fleet.logspec.putback'; actor: string; trigger: 'ttl' | 'cancel'; nodes: NodePutBack[] };

export type FleetEventListener = (event: FleetEvent) => void;
