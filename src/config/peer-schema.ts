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
    tls: { rootcert: { file: string }; clientRootCAs: { files: string[] } };
    mspConfigPath: string;
  };
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
      'fabric-ops: connections the operations server keeps open at once (a whole number, 1 to 1000000); when all are open, a new one closes the oldest connection with no request in progress (silent, still handshaking or idle); only when every one has a request in progress is the new one closed without an answer and counted in `operations_connections_refused_total`',
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
          "fabric-ops: name of a ConfigMap in the pod's namespace whose key (below) is the logging spec, activated whenever it changes (as `PUT /logspec`); empty: not watched",
        ),
        key: stringSetting('logspec', 'fabric-ops: key of that ConfigMap holding the logging spec'),
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
      rootcert: { file: stringSetting('', 'organization TLS root CA; read only for the dedicated-CA rule') },
      clientRootCAs: { files: listSetting([], 'organization client CAs; read only for the dedicated-CA rule') },
    },
    mspConfigPath: stringSetting('', 'local MSP directory; its `cacerts/` and `tlscacerts/` are organization CAs; read only for the dedicated-CA rule'),
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
