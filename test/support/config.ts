import { peerDialect } from '../../src/config/dialect';
import type { NormalisedConfig } from '../../src/config/types';

type DeepPartial<T> = T extends readonly unknown[] ? T : T extends object ? { [K in keyof T]?: DeepPartial<T[K]> } : T;

/** A peer-dialect NormalisedConfig with everything off, listening on 127.0.0.1 and a free port. */
export function baseTestConfig(): NormalisedConfig {
  return {
    dialect: 'peer',
    configFile: null,
    operations: {
      listen: { host: '127.0.0.1', port: 0 },
      tls: {
        enabled: false,
        certFile: '',
        keyFile: '',
        clientAuthRequired: false,
        clientRootCAFiles: [],
        requireDedicatedCA: false,
      },
    },
    organizationCAs: { files: [], dirs: [] },
    metrics: {
      provider: 'disabled',
      statsd: { network: 'udp', address: { host: '127.0.0.1', port: 8125 }, writeIntervalMs: 10000, prefix: '' },
    },
    health: {
      timeoutMs: 2000,
      containerRuntime: {
        type: 'none',
        endpoint: '',
        requiredConditions: ['RuntimeReady', 'NetworkReady'],
        dockerTls: { enabled: false, caFile: '', certFile: '', keyFile: '' },
      },
    },
    keys: { ...peerDialect.keys },
  };
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function merge(base: Record<string, unknown>, overrides: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...base };
  for (const [key, value] of Object.entries(overrides)) {
    if (value === undefined) continue;
    const current = out[key];
    out[key] = isPlainObject(current) && isPlainObject(value) ? merge(current, value) : value;
  }
  return out;
}

/** baseTestConfig() deep-merged with overrides (arrays replace). */
export function testConfig(overrides: DeepPartial<NormalisedConfig> = {}): NormalisedConfig {
  return merge(baseTestConfig(), overrides) as unknown as NormalisedConfig;
}

/** A container-runtime section: the Docker checker on the default endpoint, plus overrides. */
export function containerRuntimeConfig(
  overrides: Partial<NormalisedConfig['health']['containerRuntime']> = {},
): NormalisedConfig['health']['containerRuntime'] {
  return { ...baseTestConfig().health.containerRuntime, type: 'docker', ...overrides };
}
