/**
 * The one configuration object the rest of fabric-ops reads, whatever dialect it came
 * from. Produced by the config normaliser (src/config/normalise.ts). File paths in it are
 * absolute.
 *
 * Plain TypeScript on purpose (type aliases, as the zod-inferred types were, so that they stay
 * assignable to Record<string, unknown>): these types are public (`NormalisedConfig`, `Dialect`), and a
 * library user's compiler must not need zod's declarations to read them (without
 * esModuleInterop they fail to compile). The ranges and syntaxes of the values are the formats
 * declared with each setting (./declarations); the normaliser builds this shape, checked by the compiler.
 */

export const dialects = ['peer', 'orderer'] as const;
export type Dialect = (typeof dialects)[number];

export type HostPort = {
  /** '' means every interface. */
  host: string;
  /** 0 means "pick a free port". */
  port: number;
};

export const metricsProviders = ['prometheus', 'statsd', 'disabled'] as const;
export type MetricsProviderName = (typeof metricsProviders)[number];

export const statsdNetworks = ['udp', 'tcp'] as const;
export type StatsdNetwork = (typeof statsdNetworks)[number];

export const containerRuntimeTypes = ['none', 'docker', 'cri', 'auto'] as const;
export type ContainerRuntimeType = (typeof containerRuntimeTypes)[number];

export const criConditions = ['RuntimeReady', 'NetworkReady'] as const;

export type TlsConfig = {
  enabled: boolean;
  /** Absolute path, '' when not set. */
  certFile: string;
  keyFile: string;
  clientAuthRequired: boolean;
  clientRootCAFiles: string[];
  /** Refuse to start (instead of warning) when the server certificate chains to an organization CA. */
  requireDedicatedCA: boolean;
};

/** One place the node's configuration names certificates (companion mode): a file, or a folder whose every file is one. */
export type CompanionCertificateSource = {
  /** The node's own key naming it, e.g. `peer.tls.cert.file` (or `peer.mspConfigPath` for an MSP folder). */
  key: string;
  /** What the certificates are to the node: `msp_signcert`, `tls_server`, `operations_server`, ... */
  kind: string;
  form: 'file' | 'folder';
  /** Absolute. */
  path: string;
};

/** Companion mode (docs/companion.md): what fabric-ops reads of the node it serves beside. */
export type CompanionConfig = {
  node: {
    /** Where the node's operations endpoint is called (never an every-interface host). */
    address: HostPort;
    /** The key the address came from. */
    addressKey: string;
    tls: {
      enabled: boolean;
      /** CAs that issued the node's operations server certificate. Absolute paths. */
      rootCAFiles: string[];
      /** fabric-ops' own client certificate and key for the node ('' when none). */
      certFile: string;
      keyFile: string;
      /** SNI and the identity the node's certificate must carry. */
      serverName: string;
    };
  };
  certificates: {
    sources: CompanionCertificateSource[];
    warningDays: number;
    /** 0: no planning notice. */
    planningDays: number;
    recheckIntervalMs: number;
  };
  /** The node's data folders (disk figures). Absolute. */
  dataFolders: Array<{ key: string; path: string }>;
  /** The `disk` checker's thresholds (docs/companion.md, "Disk"), and how often the figures are read for the metrics. */
  disk: {
    /** 0 to 99; 0: no share. Applies to bytes and to inodes. */
    minFreePercent: number;
    /** 0: no floor. */
    minFreeBytes: number;
    recheckIntervalMs: number;
  };
  /** The node's log level through the companion (docs/companion.md, "The node's log level"). */
  logspec: {
    /** PUT /logspec on fabric-ops' server sets the node's spec (only with fabric-ops' own TLS, a client certificate on every write). */
    writable: boolean;
    /** Where pending put-backs of TTL writes are kept; '' : none (a TTL is refused). Absolute. */
    stateDirectory: string;
    /** How often the node's spec is compared with the declared one (the logspec ConfigMap's). */
    pollIntervalMs: number;
  };
};

export type NormalisedConfig = {
  dialect: Dialect;
  /** Absolute path of the file read, or null for the embedded defaults. */
  configFile: string | null;
  operations: {
    listen: HostPort;
    tls: TlsConfig;
    /**
     * Connections open at once; past it a new one evicts the oldest connection with no request in
     * progress, and is refused (operations_connections_refused_total) only when all are busy. The normaliser always sets it; absent (a config built
     * by hand before the key existed) means the default, 1024.
     */
    maxConnections?: number | undefined;
  };
  /**
   * CAs the node itself uses for organizations (the dedicated-CA rule).
   * peer: peer.tls.rootcert.file, peer.tls.clientRootCAs.files; orderer: General.TLS.RootCAs,
   * General.TLS.ClientRootCAs. Dirs: <MSP dir>/cacerts and <MSP dir>/tlscacerts (peer.mspConfigPath,
   * General.LocalMSPDir). Absolute paths; a listed file or dir that does not exist is skipped.
   */
  organizationCAs: {
    files: string[];
    dirs: string[];
  };
  metrics: {
    provider: MetricsProviderName;
    statsd: {
      network: StatsdNetwork;
      address: HostPort;
      writeIntervalMs: number;
      /** '' or ending in '.'. */
      prefix: string;
    };
  };
  health: {
    /** Per-checker timeout. */
    timeoutMs: number;
    containerRuntime: {
      type: ContainerRuntimeType;
      /** unix:///path, /path, tcp://host:port; '' when type is none. */
      endpoint: string;
      /** CRI conditions that must be true for the cri checker to pass. */
      requiredConditions: string[];
      /** Docker over TCP with TLS (peer: vm.docker.tls.*). Absolute paths or ''. */
      dockerTls: {
        enabled: boolean;
        caFile: string;
        certFile: string;
        keyFile: string;
      };
    };
  };
  /**
   * The Kubernetes integration (src/kubernetes), off by default. The normaliser always sets it;
   * absent (a config built by hand) means off.
   */
  kubernetes?:
    | {
        events: {
          enabled: boolean;
          /** 0: no near-expiry warning. */
          certificateExpiryWarningDays: number;
        };
        /** name '' means no ConfigMap is watched. */
        logspecConfigMap: { name: string; key: string };
      }
    | undefined;
  /**
   * Companion mode, when it is on (docs/companion.md): `operations` is then fabric-ops' own server
   * and `keys` name the companion's keys for it; this is the node's side.
   */
  companion?: CompanionConfig | undefined;
  /**
   * The dialect's own key names for the settings above, so that errors found after
   * normalisation (an unreadable certificate, say) can name the key the user wrote.
   */
  keys: {
    listenAddress: string;
    maxConnections: string;
    tlsEnabled: string;
    tlsCertFile: string;
    tlsKeyFile: string;
    tlsClientRootCAs: string;
    tlsClientAuthRequired: string;
    tlsRequireDedicatedCA: string;
    metricsProvider: string;
    statsdNetwork: string;
    statsdAddress: string;
    statsdWriteInterval: string;
    statsdPrefix: string;
    healthTimeout: string;
    containerRuntimeType: string;
    containerRuntimeEndpoint: string;
    containerRuntimeRequiredConditions: string;
    kubernetesEventsEnabled: string;
    kubernetesCertificateExpiryWarningDays: string;
    kubernetesLogspecConfigMapName: string;
    kubernetesLogspecConfigMapKey: string;
  };
};
