import type { NormalisedConfig } from '../config/types';
import type { LoggerFactory } from '../logging/types';
import { DisabledProvider } from './disabled/provider';
import type * as PrometheusModule from './prometheus/provider';
import type * as StatsdModule from './statsd/system';
import type { StatsdTuning } from './statsd/system';
import type { MetricsProvider, MetricsSystem, ScrapeEndpoint } from './types';

export interface MetricsSystemDeps {
  loggers: LoggerFactory;
  /** StatsD internals (timers, backoff, limits); the defaults suit production. */
  statsd?: Partial<StatsdTuning>;
}

/** A provider without a lifecycle (prometheus, disabled). */
class StaticMetricsSystem implements MetricsSystem {
  constructor(
    readonly provider: MetricsProvider,
    readonly scrape: ScrapeEndpoint | null,
  ) {}

  start(): Promise<void> {
    return Promise.resolve();
  }

  stop(): Promise<void> {
    return Promise.resolve();
  }
}

/**
 * The configured provider. An address with an empty host (`:8125`) means this machine,
 * as in Fabric (Go dials the local system). Each provider's module (prom-client, hot-shots)
 * is loaded only when it is the one configured: a process pays for what it uses at start.
 */
export function createMetricsSystem(config: NormalisedConfig['metrics'], deps: MetricsSystemDeps): MetricsSystem {
  switch (config.provider) {
    case 'prometheus': {
      // eslint-disable-next-line @typescript-eslint/no-require-imports -- only the configured provider's module is loaded (see above)
      const { PrometheusProvider } = require('./prometheus/provider') as typeof PrometheusModule;
      const provider = new PrometheusProvider();
      return new StaticMetricsSystem(provider, provider.scrape);
    }
    case 'statsd': {
      // eslint-disable-next-line @typescript-eslint/no-require-imports -- only the configured provider's module is loaded (see above)
      const { StatsdMetricsSystem } = require('./statsd/system') as typeof StatsdModule;
      return new StatsdMetricsSystem({
        ...deps.statsd,
        network: config.statsd.network,
        host: config.statsd.address.host === '' ? '127.0.0.1' : config.statsd.address.host,
        port: config.statsd.address.port,
        writeIntervalMs: config.statsd.writeIntervalMs,
        prefix: config.statsd.prefix,
        loggers: deps.loggers,
      });
    }
    case 'disabled':
      return new StaticMetricsSystem(new DisabledProvider(), null);
  }
}
