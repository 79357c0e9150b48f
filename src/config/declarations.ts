import type { Dialect } from './types';
import { metricsProviders, statsdNetworks } from './types';
import { byteSize, duration, hostPort, maxDays, oneOf, wholeNumber, type Format } from './values';
import type { SettingKind, SettingValue } from './settings';

/**
 * Every configuration key fabric-ops reads, declared once: its spelling in each dialect (null
 * where that node has no such key), its kind, its default, its meaning, and, when its text has a
 * syntax of its own, the format that turns the text into the normalised value. From this table
 * come the dialects' convict schemas (./dialect), their environment variables
 * (`CORE_` / `ORDERER_` + the spelling), `--list-keys`, the generated configuration reference
 * (docs/reference/configuration.md), the key names errors quote (NormalisedConfig.keys) and the
 * companion's keys. Adding a key: one entry here, the line of the normaliser that puts its value
 * in NormalisedConfig, and its test.
 *
 * In `doc`, `{name}` is the dialect's spelling of the setting `name`, `{name:section}` the
 * section holding it, `{file}` the dialect's file (core.yaml, orderer.yaml) and `{node}` the node
 * (peer, orderer).
 */
export interface SettingDeclaration {
  readonly peer: string | null;
  readonly orderer: string | null;
  readonly kind: SettingKind;
  /** Per dialect when they differ (Fabric's sample files differ). Integers as numbers. */
  readonly default: SettingValue | number | { readonly peer: SettingValue | number; readonly orderer: SettingValue | number };
  readonly format?: Format<unknown>;
  readonly doc: string | { readonly peer: string; readonly orderer: string };
}

/** The shortest poll of the node's spec (companion mode): a node is not asked more than ten times a second. */
const minLogSpecPollMs = 100;

export const settings = {
  listenAddress: {
    peer: 'operations.listenAddress',
    orderer: 'Operations.ListenAddress',
    kind: 'string',
    default: { peer: '127.0.0.1:9443', orderer: '127.0.0.1:8443' },
    format: hostPort({ minPort: 0 }),
    doc: {
      peer: '`host:port` of the operations server; `:port` listens on every interface, port 0 picks a free port (the start-up log shows it). On Kubernetes use `0.0.0.0:9443`: `127.0.0.1` is unreachable from other pods',
      orderer:
        '`host:port` of the operations server; `:port` listens on every interface, port 0 picks a free port (the start-up log shows it). On Kubernetes use `0.0.0.0:8443`: `127.0.0.1` is unreachable from other pods',
    },
  },
  maxConnections: {
    peer: 'operations.maxConnections',
    orderer: 'Operations.MaxConnections',
    kind: 'integer',
    default: 1024,
    format: wholeNumber({ min: 1, max: 1_000_000 }),
    doc: 'fabric-ops: connections the operations server keeps open at once (a whole number, 1 to 1000000); when all are open, a new one closes the oldest connection with no request in progress (silent, still handshaking or idle) or still waiting for its request body (answered 408); one client address holds at most 15/16 of them; only when none can be closed is the new one closed without an answer and counted in `operations_connections_refused_total`',
  },
  tlsEnabled: {
    peer: 'operations.tls.enabled',
    orderer: 'Operations.TLS.Enabled',
    kind: 'boolean',
    default: false,
    doc: 'serve the operations API over HTTPS, with the rules of the TLS section',
  },
  tlsCertFile: {
    peer: 'operations.tls.cert.file',
    orderer: 'Operations.TLS.Certificate',
    kind: 'string',
    default: '',
    doc: 'server certificate (PEM), required with TLS; a relative path is against the directory of {file}, as for every file key',
  },
  tlsKeyFile: {
    peer: 'operations.tls.key.file',
    orderer: 'Operations.TLS.PrivateKey',
    kind: 'string',
    default: '',
    doc: 'server private key (PEM), required with TLS',
  },
  tlsClientAuthRequired: {
    peer: 'operations.tls.clientAuthRequired',
    orderer: 'Operations.TLS.ClientAuthRequired',
    kind: 'boolean',
    default: false,
    doc: 'demand a valid client certificate in the TLS handshake on every path, `/healthz` included',
  },
  tlsClientRootCAs: {
    peer: 'operations.tls.clientRootCAs.files',
    orderer: 'Operations.TLS.ClientRootCAs',
    kind: 'list',
    default: [],
    doc: 'CA certificates (PEM) trusted for client certificates; at least one is required when TLS is on (fabric-ops refuses to start without)',
  },
  tlsRequireDedicatedCA: {
    peer: 'operations.tls.requireDedicatedCA',
    orderer: 'Operations.TLS.RequireDedicatedCA',
    kind: 'boolean',
    default: false,
    doc: 'fabric-ops: refuse to start (instead of warning) when the server certificate chains to an organization CA',
  },
  healthTimeout: {
    peer: 'operations.healthCheck.timeout',
    orderer: 'Operations.HealthCheck.Timeout',
    kind: 'duration',
    default: '2s',
    format: duration(),
    doc: "fabric-ops: each health checker's timeout (Go duration)",
  },
  containerRuntimeType: {
    peer: 'operations.healthCheck.containerRuntime.type',
    orderer: 'Operations.HealthCheck.ContainerRuntime.Type',
    kind: 'string',
    default: '',
    doc: {
      peer: 'fabric-ops: `docker`, `cri`, `auto` or `none`; empty: `docker` when `{vmEndpoint}` is set (as Fabric), else none',
      orderer: 'fabric-ops: `docker`, `cri`, `auto` or `none`; empty: none',
    },
  },
  containerRuntimeEndpoint: {
    peer: 'operations.healthCheck.containerRuntime.endpoint',
    orderer: 'Operations.HealthCheck.ContainerRuntime.Endpoint',
    kind: 'string',
    default: '',
    doc: "fabric-ops: `unix:///path`, `/path` or (`docker` only) `tcp://host:port`; empty: the runtime type's usual socket",
  },
  containerRuntimeRequiredConditions: {
    peer: 'operations.healthCheck.containerRuntime.requiredConditions',
    orderer: 'Operations.HealthCheck.ContainerRuntime.RequiredConditions',
    kind: 'list',
    default: ['RuntimeReady', 'NetworkReady'],
    doc: 'fabric-ops: CRI conditions that must be true (`cri` checker)',
  },
  kubernetesEventsEnabled: {
    peer: 'operations.kubernetes.events.enabled',
    orderer: 'Operations.Kubernetes.Events.Enabled',
    kind: 'boolean',
    default: false,
    doc: "fabric-ops: record Kubernetes Events on the service's own Pod (health checks failing and recovering, logging-spec changes, certificate reloads and near expiry); needs `POD_NAME` and `POD_NAMESPACE` (downward API) and a service account allowed to create and patch events",
  },
  kubernetesCertificateExpiryWarningDays: {
    peer: 'operations.kubernetes.events.certificateExpiryWarningDays',
    orderer: 'Operations.Kubernetes.Events.CertificateExpiryWarningDays',
    kind: 'integer',
    default: 30,
    format: wholeNumber({ min: 0, max: maxDays, unit: 'days' }),
    doc: 'fabric-ops: a Warning Event when the serving certificate expires within this many days (at start, on every reload, and daily); `0`: no such warning',
  },
  kubernetesLogspecConfigMapName: {
    peer: 'operations.kubernetes.logspecConfigMap.name',
    orderer: 'Operations.Kubernetes.LogspecConfigMap.Name',
    kind: 'string',
    default: '',
    doc: "fabric-ops: name of a ConfigMap in the pod's namespace whose key (below) is the logging spec, activated whenever it changes (as `PUT /logspec`); in companion mode it is the node's spec, applied again whenever the node's differs (a restarted node; docs/companion.md); empty: not watched",
  },
  kubernetesLogspecConfigMapKey: {
    peer: 'operations.kubernetes.logspecConfigMap.key',
    orderer: 'Operations.Kubernetes.LogspecConfigMap.Key',
    kind: 'string',
    default: 'logspec',
    doc: 'fabric-ops: key of that ConfigMap holding the logging spec',
  },
  companionEnabled: {
    peer: 'operations.companion.enabled',
    orderer: 'Operations.Companion.Enabled',
    kind: 'boolean',
    default: false,
    doc: "fabric-ops: companion mode (docs/companion.md): serve beside the {node} this file configures, on `{companionListenAddress}`, reporting the {node}'s certificates and health; `{listenAddress}` and `{tlsEnabled:section}.*` are then the {node}'s endpoint, which fabric-ops calls",
  },
  companionListenAddress: {
    peer: 'operations.companion.listenAddress',
    orderer: 'Operations.Companion.ListenAddress',
    kind: 'string',
    default: '127.0.0.1:9449',
    format: hostPort({ minPort: 0 }),
    doc: "fabric-ops: companion mode: `host:port` of fabric-ops' own server (the {node} keeps `{listenAddress}`); on Kubernetes `0.0.0.0:9449`",
  },
  companionMetricsProvider: {
    peer: 'operations.companion.metricsProvider',
    orderer: 'Operations.Companion.MetricsProvider',
    kind: 'string',
    default: 'prometheus',
    format: oneOf(metricsProviders),
    doc: 'fabric-ops: companion mode: `prometheus`, `statsd` or `disabled` for fabric-ops itself (the {node} keeps `{metricsProvider}`)',
  },
  companionTlsEnabled: {
    peer: 'operations.companion.tls.enabled',
    orderer: 'Operations.Companion.TLS.Enabled',
    kind: 'boolean',
    default: false,
    doc: "fabric-ops: companion mode: serve fabric-ops' own server over HTTPS, with the rules of `{tlsEnabled:section}`",
  },
  companionTlsCertFile: {
    peer: 'operations.companion.tls.cert.file',
    orderer: 'Operations.Companion.TLS.Certificate',
    kind: 'string',
    default: '',
    doc: "fabric-ops: companion mode: fabric-ops' own server certificate (PEM), required with TLS",
  },
  companionTlsKeyFile: {
    peer: 'operations.companion.tls.key.file',
    orderer: 'Operations.Companion.TLS.PrivateKey',
    kind: 'string',
    default: '',
    doc: "fabric-ops: companion mode: fabric-ops' own server private key (PEM; never the {node}'s), required with TLS",
  },
  companionTlsClientAuthRequired: {
    peer: 'operations.companion.tls.clientAuthRequired',
    orderer: 'Operations.Companion.TLS.ClientAuthRequired',
    kind: 'boolean',
    default: false,
    doc: 'fabric-ops: companion mode: demand a valid client certificate on every path',
  },
  companionTlsClientRootCAs: {
    peer: 'operations.companion.tls.clientRootCAs.files',
    orderer: 'Operations.Companion.TLS.ClientRootCAs',
    kind: 'list',
    default: [],
    doc: 'fabric-ops: companion mode: CA certificates trusted for client certificates; required with TLS',
  },
  companionNodeAddress: {
    peer: 'operations.companion.node.address',
    orderer: 'Operations.Companion.Node.Address',
    kind: 'string',
    default: '',
    doc: "fabric-ops: companion mode: `host:port` where fabric-ops calls the {node}'s operations endpoint; empty: `{listenAddress}`, with 127.0.0.1 for an every-interface host",
  },
  companionNodeServerName: {
    peer: 'operations.companion.node.serverName',
    orderer: 'Operations.Companion.Node.ServerName',
    kind: 'string',
    default: '',
    doc: "fabric-ops: companion mode: the name the {node}'s operations certificate must carry; empty: the host called",
  },
  companionNodeRootCAs: {
    peer: 'operations.companion.node.rootCAs.files',
    orderer: 'Operations.Companion.Node.RootCAs',
    kind: 'list',
    default: [],
    doc: "fabric-ops: companion mode: CA certificates that issued the {node}'s operations certificate; required when `{tlsEnabled}`",
  },
  companionNodeClientCertFile: {
    peer: 'operations.companion.node.clientCert.file',
    orderer: 'Operations.Companion.Node.ClientCertificate',
    kind: 'string',
    default: '',
    doc: "fabric-ops: companion mode: client certificate fabric-ops presents to the {node}'s operations endpoint (required when `{tlsClientAuthRequired}`)",
  },
  companionNodeClientKeyFile: {
    peer: 'operations.companion.node.clientKey.file',
    orderer: 'Operations.Companion.Node.ClientPrivateKey',
    kind: 'string',
    default: '',
    doc: "fabric-ops: companion mode: its private key (fabric-ops' own, never one of the {node}'s)",
  },
  companionWarningDays: {
    peer: 'operations.companion.certificates.warningDays',
    orderer: 'Operations.Companion.Certificates.WarningDays',
    kind: 'integer',
    default: 7,
    format: wholeNumber({ min: 0, max: maxDays, unit: 'days' }),
    doc: "fabric-ops: companion mode: a warning while one of the {node}'s certificates expires within this many days (Fabric's own is one week)",
  },
  companionPlanningDays: {
    peer: 'operations.companion.certificates.planningDays',
    orderer: 'Operations.Companion.Certificates.PlanningDays',
    kind: 'integer',
    default: 30,
    format: wholeNumber({ min: 0, max: maxDays, unit: 'days' }),
    doc: 'fabric-ops: companion mode: an earlier, planning notice within this many days; `0`: none',
  },
  companionCertificatesRecheckInterval: {
    peer: 'operations.companion.certificates.recheckInterval',
    orderer: 'Operations.Companion.Certificates.RecheckInterval',
    kind: 'duration',
    default: '1m',
    format: duration(),
    doc: "fabric-ops: companion mode: how often the {node}'s certificate files are read again even when no change was seen (Go duration)",
  },
  companionDiskMinFreePercent: {
    peer: 'operations.companion.disk.minFreePercent',
    orderer: 'Operations.Companion.Disk.MinFreePercent',
    kind: 'integer',
    default: 10,
    format: wholeNumber({ min: 0, max: 99, unit: 'percent' }),
    doc: "fabric-ops: companion mode: the `disk` checker fails while a volume holding the {node}'s data folders has less than this share free, of its bytes or of its inodes (0 to 99; `0`: no share)",
  },
  companionDiskMinFreeBytes: {
    peer: 'operations.companion.disk.minFreeBytes',
    orderer: 'Operations.Companion.Disk.MinFreeBytes',
    kind: 'string',
    default: '1GiB',
    format: byteSize,
    doc: 'fabric-ops: companion mode: the `disk` checker fails while such a volume has fewer bytes free than this, whatever its share (`B`, `KiB`, `MiB`, `GiB`, `TiB`; `0`: no floor)',
  },
  companionDiskRecheckInterval: {
    peer: 'operations.companion.disk.recheckInterval',
    orderer: 'Operations.Companion.Disk.RecheckInterval',
    kind: 'duration',
    default: '30s',
    format: duration(),
    doc: "fabric-ops: companion mode: how often the free bytes and inodes of the {node}'s data volumes are read for the metrics (the `disk` checker reads them on every run) (Go duration)",
  },
  companionLogspecWritable: {
    peer: 'operations.companion.logspec.writable',
    orderer: 'Operations.Companion.LogSpec.Writable',
    kind: 'boolean',
    default: false,
    doc: "fabric-ops: companion mode: `PUT /logspec` on fabric-ops' server sets the {node}'s logging spec (with an optional `ttl`); needs `{companionTlsEnabled}` (a client certificate from `{companionTlsClientRootCAs}` on every write); false: 403",
  },
  companionLogspecStateDirectory: {
    peer: 'operations.companion.logspec.stateDirectory',
    orderer: 'Operations.Companion.LogSpec.StateDirectory',
    kind: 'string',
    default: '',
    doc: "fabric-ops: companion mode: folder (this user's, writable by no one else) where pending put-backs of `ttl` writes are kept, in `companion-putbacks.json`; empty: a `ttl` is refused",
  },
  companionLogspecPollInterval: {
    peer: 'operations.companion.logspec.pollInterval',
    orderer: 'Operations.Companion.LogSpec.PollInterval',
    kind: 'duration',
    default: '2s',
    format: duration({ minMs: minLogSpecPollMs }),
    doc: "fabric-ops: companion mode: how often the {node}'s spec is compared with the one declared in the logspec ConfigMap, which is applied again when they differ (a restarted {node}) (Go duration, at least 100ms)",
  },
  metricsProvider: {
    peer: 'metrics.provider',
    orderer: 'Metrics.Provider',
    kind: 'string',
    default: 'disabled',
    format: oneOf(metricsProviders),
    doc: '`prometheus`, `statsd` or `disabled`',
  },
  statsdNetwork: {
    peer: 'metrics.statsd.network',
    orderer: 'Metrics.Statsd.Network',
    kind: 'string',
    default: 'udp',
    format: oneOf(statsdNetworks, { sorted: true }),
    doc: '`udp` or `tcp`',
  },
  statsdAddress: {
    peer: 'metrics.statsd.address',
    orderer: 'Metrics.Statsd.Address',
    kind: 'string',
    default: '127.0.0.1:8125',
    format: hostPort({ minPort: 1 }),
    doc: '`host:port` of the StatsD daemon',
  },
  statsdWriteInterval: {
    peer: 'metrics.statsd.writeInterval',
    orderer: 'Metrics.Statsd.WriteInterval',
    kind: 'duration',
    default: { peer: '10s', orderer: '30s' },
    format: duration(),
    doc: 'how often metrics are pushed to StatsD (Go duration: `500ms`, `10s`, `1m30s`)',
  },
  statsdPrefix: {
    peer: 'metrics.statsd.prefix',
    orderer: 'Metrics.Statsd.Prefix',
    kind: 'string',
    default: '',
    doc: 'prepended to every StatsD bucket name, with a trailing `.` added when missing',
  },
  vmEndpoint: {
    peer: 'vm.endpoint',
    orderer: null,
    kind: 'string',
    default: '',
    doc: "Docker endpoint (Fabric's sample {file} sets `unix:///var/run/docker.sock`); when set, the docker health checker pings it, as Fabric registers it",
  },
  dockerTlsEnabled: { peer: 'vm.docker.tls.enabled', orderer: null, kind: 'boolean', default: false, doc: 'talk TLS to the Docker daemon (docker checker)' },
  dockerTlsCaFile: { peer: 'vm.docker.tls.ca.file', orderer: null, kind: 'string', default: '', doc: 'CA certificate of the Docker daemon' },
  dockerTlsCertFile: { peer: 'vm.docker.tls.cert.file', orderer: null, kind: 'string', default: '', doc: 'client certificate for the Docker daemon' },
  dockerTlsKeyFile: { peer: 'vm.docker.tls.key.file', orderer: null, kind: 'string', default: '', doc: 'client key for the Docker daemon' },
  nodeTlsEnabled: {
    peer: 'peer.tls.enabled',
    orderer: 'General.TLS.Enabled',
    kind: 'boolean',
    default: false,
    doc: "the {node}'s TLS; read only in companion mode (its TLS certificates are reported when true)",
  },
  nodeTlsClientAuthRequired: {
    peer: 'peer.tls.clientAuthRequired',
    orderer: 'General.TLS.ClientAuthRequired',
    kind: 'boolean',
    default: false,
    doc: {
      peer: "the {node}'s TLS client authentication; read only in companion mode (its client certificate and client root CAs, which Fabric uses only then, are reported when true)",
      orderer: "the {node}'s TLS client authentication; read only in companion mode (its client root CAs, which Fabric uses only then, are reported when true)",
    },
  },
  nodeTlsCertFile: {
    peer: 'peer.tls.cert.file',
    orderer: 'General.TLS.Certificate',
    kind: 'string',
    default: '',
    doc: "the {node}'s TLS server certificate; read only in companion mode",
  },
  peerTlsRootCertFile: {
    peer: 'peer.tls.rootcert.file',
    orderer: null,
    kind: 'string',
    default: '',
    doc: 'organization TLS root CA; read only for the dedicated-CA rule and in companion mode',
  },
  ordererTlsRootCAs: {
    peer: null,
    orderer: 'General.TLS.RootCAs',
    kind: 'list',
    default: [],
    doc: 'organization TLS root CAs; read only for the dedicated-CA rule and in companion mode',
  },
  peerTlsClientCertFile: {
    peer: 'peer.tls.clientCert.file',
    orderer: null,
    kind: 'string',
    default: '',
    doc: "the {node}'s TLS client certificate; read only in companion mode",
  },
  nodeTlsClientRootCAs: {
    peer: 'peer.tls.clientRootCAs.files',
    orderer: 'General.TLS.ClientRootCAs',
    kind: 'list',
    default: [],
    doc: 'organization client CAs; read only for the dedicated-CA rule and in companion mode',
  },
  clusterClientCertFile: {
    peer: null,
    orderer: 'General.Cluster.ClientCertificate',
    kind: 'string',
    default: '',
    doc: "the {node}'s cluster (consensus) client certificate; read only in companion mode",
  },
  clusterRootCAs: {
    peer: null,
    orderer: 'General.Cluster.RootCAs',
    kind: 'list',
    default: [],
    doc: "the {node}'s cluster root CAs; read only in companion mode",
  },
  mspDir: {
    peer: 'peer.mspConfigPath',
    orderer: 'General.LocalMSPDir',
    kind: 'string',
    default: '',
    doc: 'local MSP directory; its `cacerts/` and `tlscacerts/` are organization CAs; read for the dedicated-CA rule, and in companion mode for its certificates (never `keystore/`)',
  },
  peerFileSystemPath: {
    peer: 'peer.fileSystemPath',
    orderer: null,
    kind: 'string',
    default: '/var/hyperledger/production',
    doc: "the {node}'s data folder; read only in companion mode (disk figures)",
  },
  peerSnapshotsDir: {
    peer: 'ledger.snapshots.rootDir',
    orderer: null,
    kind: 'string',
    default: '/var/hyperledger/production/snapshots',
    doc: "the {node}'s ledger snapshots folder; read only in companion mode (disk figures)",
  },
  adminTlsEnabled: {
    peer: null,
    orderer: 'Admin.TLS.Enabled',
    kind: 'boolean',
    default: false,
    doc: "the {node}'s admin endpoint TLS; read only in companion mode",
  },
  adminTlsCertFile: {
    peer: null,
    orderer: 'Admin.TLS.Certificate',
    kind: 'string',
    default: '',
    doc: "the admin endpoint's server certificate; read only in companion mode",
  },
  adminTlsClientRootCAs: {
    peer: null,
    orderer: 'Admin.TLS.ClientRootCAs',
    kind: 'list',
    default: [],
    doc: "the admin endpoint's client root CAs; read only in companion mode",
  },
  fileLedgerLocation: {
    peer: null,
    orderer: 'FileLedger.Location',
    kind: 'string',
    default: '/var/hyperledger/production/orderer',
    doc: "the {node}'s ledger folder; read only in companion mode (disk figures)",
  },
  consensusWalDir: {
    peer: null,
    orderer: 'Consensus.WALDir',
    kind: 'string',
    default: '/var/hyperledger/production/orderer/etcdraft/wal',
    doc: "the {node}'s etcdraft write-ahead log folder; read only in companion mode (disk figures)",
  },
  consensusSnapDir: {
    peer: null,
    orderer: 'Consensus.SnapDir',
    kind: 'string',
    default: '/var/hyperledger/production/orderer/etcdraft/snapshot',
    doc: "the {node}'s etcdraft snapshot folder; read only in companion mode (disk figures)",
  },
} as const satisfies Record<string, SettingDeclaration>;

export type SettingName = keyof typeof settings;

/** The settings that declare a format, and the value each becomes. */
export type FormattedSetting = { [N in SettingName]: (typeof settings)[N] extends { format: Format<unknown> } ? N : never }[SettingName];
export type FormattedValue<N extends FormattedSetting> = (typeof settings)[N]['format'] extends Format<infer T> ? T : never;

const settingNames = Object.keys(settings) as SettingName[];

/** The dialect's spelling of a setting; an internal error when the dialect has no such key. */
export function spelling(dialect: Dialect, name: SettingName): string {
  const key = settings[name][dialect];
  if (key === null) throw new Error(`internal error: the ${dialect} dialect has no key for the setting ${name}`);
  return key;
}

/** The names of the settings a dialect reads, in declaration order. */
export function settingsOf(dialect: Dialect): SettingName[] {
  return settingNames.filter((name) => settings[name][dialect] !== null);
}

function perDialect<T>(value: T | { readonly peer: T; readonly orderer: T }, dialect: Dialect): T {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && 'peer' in value && 'orderer' in value ? value[dialect] : value;
}

/** A setting's default in a dialect, as its leaf holds it (integers as text, the normaliser parses them). */
export function defaultOf(dialect: Dialect, name: SettingName): SettingValue {
  const value = perDialect<SettingValue | number>(settings[name].default, dialect);
  return typeof value === 'number' ? String(value) : Array.isArray(value) ? [...(value as readonly string[])] : value;
}

const fileNames: Readonly<Record<Dialect, string>> = { peer: 'core.yaml', orderer: 'orderer.yaml' };

/** A setting's meaning in a dialect, its references to other settings spelled as that dialect spells them. */
export function docOf(dialect: Dialect, name: SettingName): string {
  return perDialect(settings[name].doc, dialect).replace(/\{(\w+)(:section)?\}/g, (whole, reference: string, section: string | undefined) => {
    if (reference === 'file') return fileNames[dialect];
    if (reference === 'node') return dialect;
    if (!(reference in settings)) throw new Error(`internal error: the doc of ${name} names ${whole}, which is not a setting`);
    const key = spelling(dialect, reference as SettingName);
    return section === undefined ? key : key.slice(0, key.lastIndexOf('.'));
  });
}
