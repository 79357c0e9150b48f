/** Fleet mode: one fabric-ops that sees and steers many nodes' operations endpoints (README, "Fleet"). */
import type { HttpExtension } from '../system';
import type { FleetConfig } from './config';
import { fleetRouter } from './http';
import { ConfigError } from '../errors';
import { FleetService, fleetServerProblems, type FleetHost, type FleetServiceOptions } from './service';

export { loadFleetConfig, fleetConfigFrom, fleetConfigEnvironmentVariable, type FleetConfig } from './config';
export { FleetService, fleetServerProblems, type FleetHost, type FleetEnvironment, type FleetServiceOptions } from './service';
export type { FleetHealthReport } from './health';
export type { FleetVersionReport } from './versions';
export type { SetLogSpecRequest, SetLogSpecAnswer, NodeLogSpec } from './logspec';
export type { PendingPutBack } from './putback-store';
export type * from './types';

export interface FleetExtensionOptions extends FleetServiceOptions {
  /** Called with the service once it exists (to subscribe to its events, say). */
  onCreated?(fleet: FleetService): void;
  /** Kubernetes credentials (KUBECONFIG, or the pod's service account) and POD_NAMESPACE; default process.env. */
  env?: NodeJS.ProcessEnv;
}

/** Does this configuration talk to the Kubernetes API (discovery or a put-back ConfigMap)? */
export function fleetNeedsKubernetes(config: FleetConfig): boolean {
  return config.discovery.kubernetes.length > 0 || config.stateConfigMap !== null;
}

/**
 * For startOperationsSystem({ extensions: [fleetExtension(config)] }): checks that the server
 * can serve fleet mode (TLS, client CAs; ConfigError otherwise), reads every group's credentials,
 * loads the pending put-backs, and mounts /fleet.
 */
export function fleetExtension(config: FleetConfig, options: FleetExtensionOptions = {}): (host: FleetHost) => Promise<HttpExtension> {
  return async (host) => {
    const problems = fleetServerProblems(host.config);
    if (problems.length > 0) throw new ConfigError(problems);
    let kubernetes = options.kubernetes;
    if (kubernetes === undefined && fleetNeedsKubernetes(config)) {
      // client-node loads only for a configuration that needs the API.
      // eslint-disable-next-line @typescript-eslint/no-require-imports -- Kubernetes only when configured (start time)
      const { connectKubernetes } = require('../kubernetes/connection') as typeof import('../kubernetes/connection');
      kubernetes = await connectKubernetes(options.env ?? process.env);
    }
    const fleet = new FleetService(
      config,
      { logger: host.getLogger('operations.fleet'), metrics: host.metrics },
      { ...options, ...(kubernetes ? { kubernetes } : {}) },
    );
    await fleet.start();
    options.onCreated?.(fleet);
    return { path: '/fleet', handler: fleetRouter(fleet, host.getLogger('operations.fleet')), stop: () => fleet.stop() };
  };
}
