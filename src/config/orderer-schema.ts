import type convict from 'convict';
import type { DialectDefinition } from './dialect';
import { booleanSetting, durationSetting, integerSetting, listSetting, stringSetting } from './settings';

/** The sections of an orderer's `orderer.yaml` that fabric-ops reads; every other key is ignored. */
export interface OrdererSettings {
  Operations: {
    ListenAddress: string;
    MaxConnections: string;
    TLS: {
      Enabled: boolean;
      Certificate: string;
      PrivateKey: string;
      ClientAuthRequired: boolean;
      ClientRootCAs: string[];
      RequireDedicatedCA: boolean;
    };
    HealthCheck: {
      Timeout: string;
      ContainerRuntime: { Type: string; Endpoint: string; RequiredConditions: string[] };
    };
    Kubernetes: {
      Events: { Enabled: boolean; CertificateExpiryWarningDays: string };
      LogspecConfigMap: { Name: string; Key: string };
    };
    Companion: CompanionOrdererSettings;
  };
  Metrics: {
    Provider: string;
    Statsd: { Network: string; Address: string; WriteInterval: string; Prefix: string };
  };
  General: {
    TLS: { Enabled: boolean; ClientAuthRequired: boolean; Certificate: string; RootCAs: string[]; ClientRootCAs: string[] };
    Cluster: { ClientCertificate: string; RootCAs: string[] };
    LocalMSPDir: string;
  };
  Admin: { TLS: { Enabled: boolean; Certificate: string; ClientRootCAs: string[] } };
  FileLedger: { Location: string };
  Consensus: { WALDir: string; SnapDir: string };
}

/** Companion mode (docs/companion.md): fabric-ops beside the orderer this orderer.yaml configures. */
export interface CompanionOrdererSettings {
  Enabled: boolean;
  ListenAddress: string;
  MetricsProvider: string;
  TLS: { Enabled: boolean; Certificate: string; PrivateKey: string; ClientAuthRequired: boolean; ClientRootCAs: string[] };
  Node: { Address: string; ServerName: string; RootCAs: string[]; ClientCertificate: string; ClientPrivateKey: string };
  Certificates: { WarningDays: string; PlanningDays: string; RecheckInterval: string };
  Disk: { MinFreePercent: string; MinFreeBytes: string; RecheckInterval: string };
  LogSpec: { Writable: boolean; StateDirectory: string; PollInterval: string };
}

/** Defaults are those of Fabric's sample orderer.yaml (sampleconfig/orderer.yaml in hyperledger/fabric), plus fabric-ops' own keys. */
export const ordererSchema: convict.Schema<OrdererSettings> = {
  Operations: {
    ListenAddress: stringSetting(
      '127.0.0.1:8443',
      '`host:port` of the operations server; `:port` listens on every interface, port 0 picks a free port (the start-up log shows it). On Kubernetes use `0.0.0.0:8443`: `127.0.0.1` is unreachable from other pods',
    ),
    MaxConnections: integerSetting(
      1024,
      'fabric-ops: connections the operations server keeps open at once (a whole number, 1 to 1000000); when all are open, a new one closes the oldest connection with no request in progress (silent, still handshaking or idle) or still waiting for its request body (answered 408); one client address holds at most 15/16 of them; only when none can be closed is the new one closed without an answer and counted in `operations_connections_refused_total`',
    ),
    TLS: {
      Enabled: booleanSetting(false, 'serve the operations API over HTTPS, with the rules of the TLS section'),
      Certificate: stringSetting(
        '',
        'server certificate (PEM), required with TLS; a relative path is against the directory of orderer.yaml, as for every file key',
      ),
      PrivateKey: stringSetting('', 'server private key (PEM), required with TLS'),
      ClientAuthRequired: booleanSetting(false, 'demand a valid client certificate in the TLS handshake on every path, `/healthz` included'),
      ClientRootCAs: listSetting(
        [],
        'CA certificates (PEM) trusted for client certificates; at least one is required when TLS is on (fabric-ops refuses to start without)',
      ),
      RequireDedicatedCA: booleanSetting(false, 'fabric-ops: refuse to start (instead of warning) when the server certificate chains to an organization CA'),
    },
    HealthCheck: {
      Timeout: durationSetting('2s', "fabric-ops: each health checker's timeout (Go duration)"),
      ContainerRuntime: {
        Type: stringSetting('', 'fabric-ops: `docker`, `cri`, `auto` or `none`; empty: none'),
        Endpoint: stringSetting('', "fabric-ops: `unix:///path`, `/path` or (`docker` only) `tcp://host:port`; empty: the runtime type's usual socket"),
        RequiredConditions: listSetting(['RuntimeReady', 'NetworkReady'], 'fabric-ops: CRI conditions that must be true (`cri` checker)'),
      },
    },
    Kubernetes: {
      Events: {
        Enabled: booleanSetting(
          false,
          "fabric-ops: record Kubernetes Events on the service's own Pod (health checks failing and recovering, logging-spec changes, certificate reloads and near expiry); needs `POD_NAME` and `POD_NAMESPACE` (downward API) and a service account allowed to create and patch events",
        ),
        CertificateExpiryWarningDays: integerSetting(
          30,
          'fabric-ops: a Warning Event when the serving certificate expires within this many days (at start, on every reload, and daily); `0`: no such warning',
        ),
      },
      LogspecConfigMap: {
        Name: stringSetting(
          '',
          "fabric-ops: name of a ConfigMap in the pod's namespace whose key (below) is the logging spec, activated whenever it changes (as `PUT /logspec`); in companion mode it is the node's spec, applied again whenever the node's differs (a restarted node; docs/companion.md); empty: not watched",
        ),
        Key: stringSetting('logspec', 'fabric-ops: key of that ConfigMap holding the logging spec'),
      },
    },
    Companion: {
      Enabled: booleanSetting(
        false,
        "fabric-ops: companion mode (docs/companion.md): serve beside the orderer this file configures, on `Operations.Companion.ListenAddress`, reporting the orderer's certificates and health; `Operations.ListenAddress` and `Operations.TLS.*` are then the orderer's endpoint, which fabric-ops calls",
      ),
      ListenAddress: stringSetting(
        '127.0.0.1:9449',
        "fabric-ops: companion mode: `host:port` of fabric-ops' own server (the orderer keeps `Operations.ListenAddress`); on Kubernetes `0.0.0.0:9449`",
      ),
      MetricsProvider: stringSetting(
        'prometheus',
        'fabric-ops: companion mode: `prometheus`, `statsd` or `disabled` for fabric-ops itself (the orderer keeps `Metrics.Provider`)',
      ),
      TLS: {
        Enabled: booleanSetting(false, "fabric-ops: companion mode: serve fabric-ops' own server over HTTPS, with the rules of `Operations.TLS`"),
        Certificate: stringSetting('', "fabric-ops: companion mode: fabric-ops' own server certificate (PEM), required with TLS"),
        PrivateKey: stringSetting('', "fabric-ops: companion mode: fabric-ops' own server private key (PEM; never the orderer's), required with TLS"),
        ClientAuthRequired: booleanSetting(false, 'fabric-ops: companion mode: demand a valid client certificate on every path'),
        ClientRootCAs: listSetting([], 'fabric-ops: companion mode: CA certificates trusted for client certificates; required with TLS'),
      },
      Node: {
        Address: stringSetting(
          '',
          "fabric-ops: companion mode: `host:port` where fabric-ops calls the orderer's operations endpoint; empty: `Operations.ListenAddress`, with 127.0.0.1 for an every-interface host",
        ),
        ServerName: stringSetting('', "fabric-ops: companion mode: the name the orderer's operations certificate must carry; empty: the host called"),
        RootCAs: listSetting(
          [],
          "fabric-ops: companion mode: CA certificates that issued the orderer's operations certificate; required when `Operations.TLS.Enabled`",
        ),
        ClientCertificate: stringSetting(
          '',
          "fabric-ops: companion mode: client certificate fabric-ops presents to the orderer's operations endpoint (required when `Operations.TLS.ClientAuthRequired`)",
        ),
        ClientPrivateKey: stringSetting('', "fabric-ops: companion mode: its private key (fabric-ops' own, never one of the orderer's)"),
      },
      Certificates: {
        WarningDays: integerSetting(
          7,
          "fabric-ops: companion mode: a warning while one of the orderer's certificates expires within this many days (Fabric's own is one week)",
        ),
        PlanningDays: integerSetting(30, 'fabric-ops: companion mode: an earlier, planning notice within this many days; `0`: none'),
        RecheckInterval: durationSetting(
          '1m',
          "fabric-ops: companion mode: how often the orderer's certificate files are read again even when no change was seen (Go duration)",
        ),
      },
      Disk: {
        MinFreePercent: integerSetting(
          10,
          "fabric-ops: companion mode: the `disk` checker fails while a volume holding the orderer's data folders has less than this share free, of its bytes or of its inodes (0 to 99; `0`: no share)",
        ),
        MinFreeBytes: stringSetting(
          '1GiB',
          'fabric-ops: companion mode: the `disk` checker fails while such a volume has fewer bytes free than this, whatever its share (`B`, `KiB`, `MiB`, `GiB`, `TiB`; `0`: no floor)',
        ),
        RecheckInterval: durationSetting(
          '30s',
          "fabric-ops: companion mode: how often the free bytes and inodes of the orderer's data volumes are read for the metrics (the `disk` checker reads them on every run) (Go duration)",
        ),
      },
      LogSpec: {
        Writable: booleanSetting(
          false,
          "fabric-ops: companion mode: `PUT /logspec` on fabric-ops' server sets the orderer's logging spec (with an optional `ttl`); needs `Operations.Companion.TLS.Enabled` (a client certificate from `Operations.Companion.TLS.ClientRootCAs` on every write); false: 403",
        ),
        StateDirectory: stringSetting(
          '',
          "fabric-ops: companion mode: folder (this user's, writable by no one else) where pending put-backs of `ttl` writes are kept, in `companion-putbacks.json`; empty: a `ttl` is refused",
        ),
        PollInterval: durationSetting(
          '2s',
          "fabric-ops: companion mode: how often the orderer's spec is compared with the one declared in the logspec ConfigMap, which is applied again when they differ (a restarted orderer) (Go duration, at least 100ms)",
        ),
      },
    },
  },
  Metrics: {
    Provider: stringSetting('disabled', '`prometheus`, `statsd` or `disabled`'),
    Statsd: {
      Network: stringSetting('udp', '`udp` or `tcp`'),
      Address: stringSetting('127.0.0.1:8125', '`host:port` of the StatsD daemon'),
      WriteInterval: durationSetting('30s', 'how often metrics are pushed to StatsD (Go duration: `500ms`, `10s`, `1m30s`)'),
      Prefix: stringSetting('', 'prepended to every StatsD bucket name, with a trailing `.` added when missing'),
    },
  },
  General: {
    TLS: {
      Enabled: booleanSetting(false, "the orderer's TLS; read only in companion mode (its TLS certificates are reported when true)"),
      ClientAuthRequired: booleanSetting(
        false,
        "the orderer's TLS client authentication; read only in companion mode (its client root CAs, which Fabric uses only then, are reported when true)",
      ),
      Certificate: stringSetting('', "the orderer's TLS server certificate; read only in companion mode"),
      RootCAs: listSetting([], 'organization TLS root CAs; read only for the dedicated-CA rule and in companion mode'),
      ClientRootCAs: listSetting([], 'organization client CAs; read only for the dedicated-CA rule and in companion mode'),
    },
    Cluster: {
      ClientCertificate: stringSetting('', "the orderer's cluster (consensus) client certificate; read only in companion mode"),
      RootCAs: listSetting([], "the orderer's cluster root CAs; read only in companion mode"),
    },
    LocalMSPDir: stringSetting(
      '',
      'local MSP directory; its `cacerts/` and `tlscacerts/` are organization CAs; read for the dedicated-CA rule, and in companion mode for its certificates (never `keystore/`)',
    ),
  },
  Admin: {
    TLS: {
      Enabled: booleanSetting(false, "the orderer's admin endpoint TLS; read only in companion mode"),
      Certificate: stringSetting('', "the admin endpoint's server certificate; read only in companion mode"),
      ClientRootCAs: listSetting([], "the admin endpoint's client root CAs; read only in companion mode"),
    },
  },
  FileLedger: {
    Location: stringSetting('/var/hyperledger/production/orderer', "the orderer's ledger folder; read only in companion mode (disk figures)"),
  },
  Consensus: {
    WALDir: stringSetting(
      '/var/hyperledger/production/orderer/etcdraft/wal',
      "the orderer's etcdraft write-ahead log folder; read only in companion mode (disk figures)",
    ),
    SnapDir: stringSetting(
      '/var/hyperledger/production/orderer/etcdraft/snapshot',
      "the orderer's etcdraft snapshot folder; read only in companion mode (disk figures)",
    ),
  },
};

export const ordererDialect: DialectDefinition = {
  dialect: 'orderer',
  fileName: 'orderer.yaml',
  envPrefix: 'ORDERER',
  schema: ordererSchema,
  topLevelKeys: ['General', 'Operations', 'Metrics', 'FileLedger', 'Consensus', 'Admin', 'ChannelParticipation'],
  keys: {
    listenAddress: 'Operations.ListenAddress',
    maxConnections: 'Operations.MaxConnections',
    tlsEnabled: 'Operations.TLS.Enabled',
    tlsCertFile: 'Operations.TLS.Certificate',
    tlsKeyFile: 'Operations.TLS.PrivateKey',
    tlsClientRootCAs: 'Operations.TLS.ClientRootCAs',
    tlsClientAuthRequired: 'Operations.TLS.ClientAuthRequired',
    tlsRequireDedicatedCA: 'Operations.TLS.RequireDedicatedCA',
    metricsProvider: 'Metrics.Provider',
    statsdNetwork: 'Metrics.Statsd.Network',
    statsdAddress: 'Metrics.Statsd.Address',
    statsdWriteInterval: 'Metrics.Statsd.WriteInterval',
    statsdPrefix: 'Metrics.Statsd.Prefix',
    healthTimeout: 'Operations.HealthCheck.Timeout',
    containerRuntimeType: 'Operations.HealthCheck.ContainerRuntime.Type',
    containerRuntimeEndpoint: 'Operations.HealthCheck.ContainerRuntime.Endpoint',
    containerRuntimeRequiredConditions: 'Operations.HealthCheck.ContainerRuntime.RequiredConditions',
    kubernetesEventsEnabled: 'Operations.Kubernetes.Events.Enabled',
    kubernetesCertificateExpiryWarningDays: 'Operations.Kubernetes.Events.CertificateExpiryWarningDays',
    kubernetesLogspecConfigMapName: 'Operations.Kubernetes.LogspecConfigMap.Name',
    kubernetesLogspecConfigMapKey: 'Operations.Kubernetes.LogspecConfigMap.Key',
  },
  organizationCAFileKeys: ['General.TLS.RootCAs', 'General.TLS.ClientRootCAs'],
  mspDirKey: 'General.LocalMSPDir',
  docker: null,
};
