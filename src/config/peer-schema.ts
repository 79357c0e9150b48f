import type convict from 'convict';
import type { DialectDefinition } from './dialect';
import { booleanSetting, durationSetting, integerSetting, listSetting, stringSetting } from './settings';

/** The sections of a peer's `core.yaml` that fabric-ops reads; every other key is ignored. */
export interface PeerSettings {
  operations: {
    listenAddress: string;
    maxConnections: string;
    tls: {
      enabled: boolean;
      cert: { file: string };
      key: { file: string };
      clientAuthRequired: boolean;
      clientRootCAs: { files: string[] };
      requireDedicatedCA: boolean;
    };
    healthCheck: {
      timeout: string;
      containerRuntime: { type: string; endpoint: string; requiredConditions: string[] };
    };
    kubernetes: {
      events: { enabled: boolean; certificateExpiryWarningDays: string };
      logspecConfigMap: { name: string; key: string };
    };
    companion: CompanionPeerSettings;
  };
  metrics: {
    provider: string;
    statsd: { network: string; address: string; writeInterval: string; prefix: string };
  };
  vm: {
    endpoint: string;
    docker: { tls: { enabled: boolean; ca: { file: string }; cert: { file: string }; key: { file: string } } };
  };
  peer: {
    tls: {
      enabled: boolean;
      clientAuthRequired: boolean;
      cert: { file: string };
      rootcert: { file: string };
      clientCert: { file: string };
      clientRootCAs: { files: string[] };
    };
    mspConfigPath: string;
    fileSystemPath: string;
  };
  ledger: { snapshots: { rootDir: string } };
}

/** Companion mode (docs/companion.md): fabric-ops beside the peer this core.yaml configures. */
export interface CompanionPeerSettings {
  enabled: boolean;
  listenAddress: string;
  metricsProvider: string;
  tls: { enabled: boolean; cert: { file: string }; key: { file: string }; clientAuthRequired: boolean; clientRootCAs: { files: string[] } };
  node: { address: string; serverName: string; rootCAs: { files: string[] }; clientCert: { file: string }; clientKey: { file: string } };
  certificates: { warningDays: string; planningDays: string; recheckInterval: string };
  disk: { minFreePercent: string; minFreeBytes: string; recheckInterval: string };
  logspec: { writable: boolean; stateDirectory: string; pollInterval: string };
}

/** Defaults are those of Fabric's sample core.yaml (sampleconfig/core.yaml in hyperledger/fabric), plus fabric-ops' own keys. */
export const peerSchema: convict.Schema<PeerSettings> = {
  operations: {
    listenAddress: stringSetting(
      '127.0.0.1:9443',
      '`host:port` of the operations server; `:port` listens on every interface, port 0 picks a free port (the start-up log shows it). On Kubernetes use `0.0.0.0:9443`: `127.0.0.1` is unreachable from other pods',
    ),
    maxConnections: integerSetting(
      1024,
      'fabric-ops: connections the operations server keeps open at once (a whole number, 1 to 1000000); when all are open, a new one closes the oldest connection with no request in progress (silent, still handshaking or idle) or still waiting for its request body (answered 408); one client address holds at most 15/16 of them; only when none can be closed is the new one closed without an answer and counted in `operations_connections_refused_total`',
    ),
    tls: {
      enabled: booleanSetting(false, 'serve the operations API over HTTPS, with the rules of the TLS section'),
      cert: {
        file: stringSetting('', 'server certificate (PEM), required with TLS; a relative path is against the directory of core.yaml, as for every file key'),
      },
      key: { file: stringSetting('', 'server private key (PEM), required with TLS') },
      clientAuthRequired: booleanSetting(false, 'demand a valid client certificate in the TLS handshake on every path, `/healthz` included'),
      clientRootCAs: {
        files: listSetting(
          [],
          'CA certificates (PEM) trusted for client certificates; at least one is required when TLS is on (fabric-ops refuses to start without)',
        ),
      },
      requireDedicatedCA: booleanSetting(false, 'fabric-ops: refuse to start (instead of warning) when the server certificate chains to an organization CA'),
    },
    healthCheck: {
      timeout: durationSetting('2s', "fabric-ops: each health checker's timeout (Go duration)"),
      containerRuntime: {
        type: stringSetting('', 'fabric-ops: `docker`, `cri`, `auto` or `none`; empty: `docker` when `vm.endpoint` is set (as Fabric), else none'),
        endpoint: stringSetting('', "fabric-ops: `unix:///path`, `/path` or (`docker` only) `tcp://host:port`; empty: the runtime type's usual socket"),
        requiredConditions: listSetting(['RuntimeReady', 'NetworkReady'], 'fabric-ops: CRI conditions that must be true (`cri` checker)'),
      },
    },
    kubernetes: {
      events: {
        enabled: booleanSetting(
          false,
          "fabric-ops: record Kubernetes Events on the service's own Pod (health checks failing and recovering, logging-spec changes, certificate reloads and near expiry); needs `POD_NAME` and `POD_NAMESPACE` (downward API) and a service account allowed to create and patch events",
        ),
        certificateExpiryWarningDays: integerSetting(
          30,
          'fabric-ops: a Warning Event when the serving certificate expires within this many days (at start, on every reload, and daily); `0`: no such warning',
        ),
      },
      logspecConfigMap: {
        name: stringSetting(
          '',
          "fabric-ops: name of a ConfigMap in the pod's namespace whose key (below) is the logging spec, activated whenever it changes (as `PUT /logspec`); in companion mode it is the node's spec, applied again whenever the node's differs (a restarted node; docs/companion.md); empty: not watched",
        ),
        key: stringSetting('logspec', 'fabric-ops: key of that ConfigMap holding the logging spec'),
      },
    },
    companion: {
      enabled: booleanSetting(
        false,
        "fabric-ops: companion mode (docs/companion.md): serve beside the peer this file configures, on `operations.companion.listenAddress`, reporting the peer's certificates and health; `operations.listenAddress` and `operations.tls.*` are then the peer's endpoint, which fabric-ops calls",
      ),
      listenAddress: stringSetting(
        '127.0.0.1:9449',
        "fabric-ops: companion mode: `host:port` of fabric-ops' own server (the peer keeps `operations.listenAddress`); on Kubernetes `0.0.0.0:9449`",
      ),
      metricsProvider: stringSetting(
        'prometheus',
        'fabric-ops: companion mode: `prometheus`, `statsd` or `disabled` for fabric-ops itself (the peer keeps `metrics.provider`)',
      ),
      tls: {
        enabled: booleanSetting(false, "fabric-ops: companion mode: serve fabric-ops' own server over HTTPS, with the rules of `operations.tls`"),
        cert: { file: stringSetting('', "fabric-ops: companion mode: fabric-ops' own server certificate (PEM), required with TLS") },
        key: { file: stringSetting('', "fabric-ops: companion mode: fabric-ops' own server private key (PEM; never the peer's), required with TLS") },
        clientAuthRequired: booleanSetting(false, 'fabric-ops: companion mode: demand a valid client certificate on every path'),
        clientRootCAs: { files: listSetting([], 'fabric-ops: companion mode: CA certificates trusted for client certificates; required with TLS') },
      },
      node: {
        address: stringSetting(
          '',
          "fabric-ops: companion mode: `host:port` where fabric-ops calls the peer's operations endpoint; empty: `operations.listenAddress`, with 127.0.0.1 for an every-interface host",
        ),
        serverName: stringSetting('', "fabric-ops: companion mode: the name the peer's operations certificate must carry; empty: the host called"),
        rootCAs: {
          files: listSetting(
            [],
            "fabric-ops: companion mode: CA certificates that issued the peer's operations certificate; required when `operations.tls.enabled`",
          ),
        },
        clientCert: {
          file: stringSetting(
            '',
            "fabric-ops: companion mode: client certificate fabric-ops presents to the peer's operations endpoint (required when `operations.tls.clientAuthRequired`)",
          ),
        },
        clientKey: { file: stringSetting('', "fabric-ops: companion mode: its private key (fabric-ops' own, never one of the peer's)") },
      },
      certificates: {
        warningDays: integerSetting(
          7,
          "fabric-ops: companion mode: a warning while one of the peer's certificates expires within this many days (Fabric's own is one week)",
        ),
        planningDays: integerSetting(30, 'fabric-ops: companion mode: an earlier, planning notice within this many days; `0`: none'),
        recheckInterval: durationSetting(
          '1m',
          "fabric-ops: companion mode: how often the peer's certificate files are read again even when no change was seen (Go duration)",
        ),
      },
      disk: {
        minFreePercent: integerSetting(
          10,
          "fabric-ops: companion mode: the `disk` checker fails while a volume holding the peer's data folders has less than this share free, of its bytes or of its inodes (0 to 99; `0`: no share)",
        ),
        minFreeBytes: stringSetting(
          '1GiB',
          'fabric-ops: companion mode: the `disk` checker fails while such a volume has fewer bytes free than this, whatever its share (`B`, `KiB`, `MiB`, `GiB`, `TiB`; `0`: no floor)',
        ),
        recheckInterval: durationSetting(
          '30s',
          "fabric-ops: companion mode: how often the free bytes and inodes of the peer's data volumes are read for the metrics (the `disk` checker reads them on every run) (Go duration)",
        ),
      },
      logspec: {
        writable: booleanSetting(
          false,
          "fabric-ops: companion mode: `PUT /logspec` on fabric-ops' server sets the peer's logging spec (with an optional `ttl`); needs `operations.companion.tls.enabled` (a client certificate from `operations.companion.tls.clientRootCAs.files` on every write); false: 403",
        ),
        stateDirectory: stringSetting(
          '',
          "fabric-ops: companion mode: folder (this user's, writable by no one else) where pending put-backs of `ttl` writes are kept, in `companion-putbacks.json`; empty: a `ttl` is refused",
        ),
        pollInterval: durationSetting(
          '2s',
          "fabric-ops: companion mode: how often the peer's spec is compared with the one declared in the logspec ConfigMap, which is applied again when they differ (a restarted peer) (Go duration, at least 100ms)",
        ),
      },
    },
  },
  metrics: {
    provider: stringSetting('disabled', '`prometheus`, `statsd` or `disabled`'),
    statsd: {
      network: stringSetting('udp', '`udp` or `tcp`'),
      address: stringSetting('127.0.0.1:8125', '`host:port` of the StatsD daemon'),
      writeInterval: durationSetting('10s', 'how often metrics are pushed to StatsD (Go duration: `500ms`, `10s`, `1m30s`)'),
      prefix: stringSetting('', 'prepended to every StatsD bucket name, with a trailing `.` added when missing'),
    },
  },
  vm: {
    endpoint: stringSetting(
      '',
      "Docker endpoint (Fabric's sample core.yaml sets `unix:///var/run/docker.sock`); when set, the docker health checker pings it, as Fabric registers it",
    ),
    docker: {
      tls: {
        enabled: booleanSetting(false, 'talk TLS to the Docker daemon (docker checker)'),
        ca: { file: stringSetting('', 'CA certificate of the Docker daemon') },
        cert: { file: stringSetting('', 'client certificate for the Docker daemon') },
        key: { file: stringSetting('', 'client key for the Docker daemon') },
      },
    },
  },
  peer: {
    tls: {
      enabled: booleanSetting(false, "the peer's TLS; read only in companion mode (its TLS certificates are reported when true)"),
      clientAuthRequired: booleanSetting(
        false,
        "the peer's TLS client authentication; read only in companion mode (its client certificate and client root CAs, which Fabric uses only then, are reported when true)",
      ),
      cert: { file: stringSetting('', "the peer's TLS server certificate; read only in companion mode") },
      rootcert: { file: stringSetting('', 'organization TLS root CA; read only for the dedicated-CA rule and in companion mode') },
      clientCert: { file: stringSetting('', "the peer's TLS client certificate; read only in companion mode") },
      clientRootCAs: { files: listSetting([], 'organization client CAs; read only for the dedicated-CA rule and in companion mode') },
    },
    mspConfigPath: stringSetting(
      '',
      'local MSP directory; its `cacerts/` and `tlscacerts/` are organization CAs; read for the dedicated-CA rule, and in companion mode for its certificates (never `keystore/`)',
    ),
    fileSystemPath: stringSetting('/var/hyperledger/production', "the peer's data folder; read only in companion mode (disk figures)"),
  },
  ledger: {
    snapshots: {
      rootDir: stringSetting('/var/hyperledger/production/snapshots', "the peer's ledger snapshots folder; read only in companion mode (disk figures)"),
    },
  },
};

export const peerDialect: DialectDefinition = {
  dialect: 'peer',
  fileName: 'core.yaml',
  envPrefix: 'CORE',
  schema: peerSchema,
  topLevelKeys: ['peer', 'operations', 'metrics', 'vm', 'chaincode', 'ledger'],
  keys: {
    listenAddress: 'operations.listenAddress',
    maxConnections: 'operations.maxConnections',
    tlsEnabled: 'operations.tls.enabled',
    tlsCertFile: 'operations.tls.cert.file',
    tlsKeyFile: 'operations.tls.key.file',
    tlsClientRootCAs: 'operations.tls.clientRootCAs.files',
    tlsClientAuthRequired: 'operations.tls.clientAuthRequired',
    tlsRequireDedicatedCA: 'operations.tls.requireDedicatedCA',
    metricsProvider: 'metrics.provider',
    statsdNetwork: 'metrics.statsd.network',
    statsdAddress: 'metrics.statsd.address',
    statsdWriteInterval: 'metrics.statsd.writeInterval',
    statsdPrefix: 'metrics.statsd.prefix',
    healthTimeout: 'operations.healthCheck.timeout',
    containerRuntimeType: 'operations.healthCheck.containerRuntime.type',
    containerRuntimeEndpoint: 'operations.healthCheck.containerRuntime.endpoint',
    containerRuntimeRequiredConditions: 'operations.healthCheck.containerRuntime.requiredConditions',
    kubernetesEventsEnabled: 'operations.kubernetes.events.enabled',
    kubernetesCertificateExpiryWarningDays: 'operations.kubernetes.events.certificateExpiryWarningDays',
    kubernetesLogspecConfigMapName: 'operations.kubernetes.logspecConfigMap.name',
    kubernetesLogspecConfigMapKey: 'operations.kubernetes.logspecConfigMap.key',
  },
  organizationCAFileKeys: ['peer.tls.rootcert.file', 'peer.tls.clientRootCAs.files'],
  mspDirKey: 'peer.mspConfigPath',
  docker: {
    endpointKey: 'vm.endpoint',
    tlsEnabledKey: 'vm.docker.tls.enabled',
    tlsCaFileKey: 'vm.docker.tls.ca.file',
    tlsCertFileKey: 'vm.docker.tls.cert.file',
    tlsKeyFileKey: 'vm.docker.tls.key.file',
  },
};
