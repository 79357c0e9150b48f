import { z } from 'zod';
import {
  containerRuntimeTypes,
  dialects,
  metricsProviders,
  statsdNetworks,
  type CompanionConfig,
  type HostPort,
  type NormalisedConfig,
  type TlsConfig,
} from './types';
import { maxTimerDelayMs } from './values';

/**
 * The zod schema of the normalised configuration. The normaliser's output is checked against it
 * by the tests; a running service never loads it. The public types are plain TypeScript in
 * ./types (so that a library user's compiler never reads zod); the assertions at the end keep
 * this schema and those types the same, field for field.
 */

export const HostPortSchema = z.object({
  /** '' means every interface. */
  host: z.string(),
  /** 0 means "pick a free port". */
  port: z.number().int().min(0).max(65535),
});

export const TlsConfigSchema = z.object({
  enabled: z.boolean(),
  /** Absolute path, '' when not set. */
  certFile: z.string(),
  keyFile: z.string(),
  clientAuthRequired: z.boolean(),
  clientRootCAFiles: z.array(z.string()),
  /** Refuse to start (instead of warning) when the server certificate chains to an organization CA. */
  requireDedicatedCA: z.boolean(),
});

export const CompanionConfigSchema = z.object({
  node: z.object({
    address: HostPortSchema,
    addressKey: z.string(),
    tls: z.object({
      enabled: z.boolean(),
      rootCAFiles: z.array(z.string()),
      certFile: z.string(),
      keyFile: z.string(),
      serverName: z.string(),
    }),
  }),
  certificates: z.object({
    sources: z.array(z.object({ key: z.string(), kind: z.string(), form: z.enum(['file', 'folder']), path: z.string() })),
    warningDays: z.number().int().min(0),
    planningDays: z.number().int().min(0),
    recheckIntervalMs: z.number().int().positive().max(maxTimerDelayMs),
  }),
  dataFolders: z.array(z.object({ key: z.string(), path: z.string() })),
  disk: z.object({
    minFreePercent: z.number().int().min(0).max(99),
    minFreeBytes: z.number().int().min(0),
    recheckIntervalMs: z.number().int().positive().max(maxTimerDelayMs),
  }),
  logspec: z.object({
    writable: z.boolean(),
    stateDirectory: z.string(),
    pollIntervalMs: z.number().int().min(100).max(maxTimerDelayMs),
  }),
});

export const NormalisedConfigSchema = z.object({
  dialect: z.enum(dialects),
  /** Absolute path of the file read, or null for the embedded defaults. */
  configFile: z.string().nullable(),
  operations: z.object({
    listen: HostPortSchema,
    tls: TlsConfigSchema,
    /**
     * Connections open at once; past it a new one evicts the oldest connection with no request in
     * progress, and is refused (operations_connections_refused_total) only when all are busy. The normaliser always sets it; absent (a config built by
     * hand before the key existed) means the default, 1024.
     */
    maxConnections: z.number().int().positive().optional(),
  }),
  /**
   * CAs the node itself uses for organizations (the dedicated-CA rule: README, TLS, "Dedicated CA").
   * peer: peer.tls.rootcert.file, peer.tls.clientRootCAs.files; orderer: General.TLS.RootCAs,
   * General.TLS.ClientRootCAs. Dirs: <MSP dir>/cacerts and <MSP dir>/tlscacerts (peer.mspConfigPath,
   * General.LocalMSPDir). Absolute paths; a listed file or dir that does not exist is skipped.
   */
  organizationCAs: z.object({
    files: z.array(z.string()),
    dirs: z.array(z.string()),
  }),
  metrics: z.object({
    provider: z.enum(metricsProviders),
    statsd: z.object({
      network: z.enum(statsdNetworks),
      address: HostPortSchema,
      writeIntervalMs: z.number().int().positive().max(maxTimerDelayMs),
      /** '' or ending in '.'. */
      prefix: z.string(),
    }),
  }),
  health: z.object({
    /** Per-checker timeout. */
    timeoutMs: z.number().int().positive().max(maxTimerDelayMs),
    containerRuntime: z.object({
      type: z.enum(containerRuntimeTypes),
      /** unix:///path, /path, tcp://host:port; '' when type is none. */
      endpoint: z.string(),
      /** CRI conditions that must be true for the cri checker to pass. */
      requiredConditions: z.array(z.string()),
      /** Docker over TCP with TLS (peer: vm.docker.tls.*). Absolute paths or ''. */
      dockerTls: z.object({
        enabled: z.boolean(),
        caFile: z.string(),
        certFile: z.string(),
        keyFile: z.string(),
      }),
    }),
  }),
  /**
   * The Kubernetes integration (src/kubernetes), off by default. The normaliser always sets it;
   * absent (a config built by hand) means off.
   */
  kubernetes: z
    .object({
      events: z.object({
        enabled: z.boolean(),
        /** 0: no near-expiry warning. */
        certificateExpiryWarningDays: z.number().int().min(0),
      }),
      /** name '' means no ConfigMap is watched. */
      logspecConfigMap: z.object({ name: z.string(), key: z.string() }),
    })
    .optional(),
  /** Companion mode, when on (docs/companion.md): the node's side; `operations` is then fabric-ops' own server. */
  companion: CompanionConfigSchema.optional(),
  /**
   * The dialect's own key names for the settings above, so that errors found after
   * normalisation (an unreadable certificate, say) can name the key the user wrote.
   */
  keys: z.object({
    listenAddress: z.string(),
    maxConnections: z.string(),
    tlsEnabled: z.string(),
    tlsCertFile: z.string(),
    tlsKeyFile: z.string(),
    tlsClientRootCAs: z.string(),
    tlsClientAuthRequired: z.string(),
    tlsRequireDedicatedCA: z.string(),
    metricsProvider: z.string(),
    statsdNetwork: z.string(),
    statsdAddress: z.string(),
    statsdWriteInterval: z.string(),
    statsdPrefix: z.string(),
    healthTimeout: z.string(),
    containerRuntimeType: z.string(),
    containerRuntimeEndpoint: z.string(),
    containerRuntimeRequiredConditions: z.string(),
    kubernetesEventsEnabled: z.string(),
    kubernetesCertificateExpiryWarningDays: z.string(),
    kubernetesLogspecConfigMapName: z.string(),
    kubernetesLogspecConfigMapKey: z.string(),
  }),
});

/** true when A and B are the same type (not merely assignable either way: optional and readonly count). */
type Same<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;

/** Compile-time only: tsc fails here when the schema and the types in ./types drift apart. */
export const schemaMatchesTypes: [
  Same<z.infer<typeof HostPortSchema>, HostPort>,
  Same<z.infer<typeof TlsConfigSchema>, TlsConfig>,
  Same<z.infer<typeof NormalisedConfigSchema>, NormalisedConfig>,
  Same<z.infer<typeof CompanionConfigSchema>, CompanionConfig>,
] = [true, true, true, true];
