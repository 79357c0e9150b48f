import type { z } from 'zod';
import type { HostPortSchema, NormalisedConfigSchema, TlsConfigSchema } from './schema';

/**
 * The one configuration object the rest of fabric-ops reads, whatever dialect it came
 * from. Produced by the config normaliser (src/config/normalise.ts); its zod schema is in
 * ./schema (loaded only by what validates, so that starting the service does not load zod).
 * File paths in it are absolute.
 */

export const dialects = ['peer', 'orderer'] as const;
export type Dialect = (typeof dialects)[number];

export type HostPort = z.infer<typeof HostPortSchema>;

export const metricsProviders = ['prometheus', 'statsd', 'disabled'] as const;
export type MetricsProviderName = (typeof metricsProviders)[number];

export const statsdNetworks = ['udp', 'tcp'] as const;
export type StatsdNetwork = (typeof statsdNetworks)[number];

export const containerRuntimeTypes = ['none', 'docker', 'cri', 'auto'] as const;
export type ContainerRuntimeType = (typeof containerRuntimeTypes)[number];

export const criConditions = ['RuntimeReady', 'NetworkReady'] as const;

export type TlsConfig = z.infer<typeof TlsConfigSchema>;
export type NormalisedConfig = z.infer<typeof NormalisedConfigSchema>;
export type ConfigKeyName = keyof NormalisedConfig['keys'];
