/** Fleet mode: one fabric-ops that sees and steers many nodes' operations endpoints (README, "Fleet"). */
import type { HttpExtension } from '../system';
import { bindWriterIssuers, type FleetConfig } from './config';
import { fleetRouter } from './http';
import { ConfigError } from '../errors';
import { maxBodyBytes } from '../http/limits';
import { FleetService, fleetServerProblems, type FleetHost, type FleetServiceOptions } from './service';
import type { KubernetesConnection } from '../kubernetes/connection';
import { createConfigMapObjectApi } from '../kubernetes/configmap-object';
import { createConfigMapApi } from '../kubernetes/client';
import type { Logger } from '../logging/types';
import { ConfigMapPutBackStore, FileAndConfigMapPutBackStore } from './putback-configmap';
import { FilePutBackStore, type PutBackStore } from './putback-store';

export { loadFleetConfig, fleetConfigFrom, fleetConfigEnvironmentVariable, type FleetConfig } from './config';
export { FleetService, fleetServerProblems, type FleetHost, type FleetEnvironment, type FleetServiceOptions } from './service';
export type { FleetHealthReport } from './health';
export type { FleetVersionReport } from './versions';
export type { FleetChannelReport, ChannelEntry, ChannelNodeHeight, ChannelNodeStatus, NodeChannelsRead } from './channels';
export type { FleetCertificateReport, FleetCertificate, NodeCertificates, CompanionSummary } from './certificates';
export type { SetLogSpecRequest, SetLogSpecAnswer, NodeLogSpec } from './logspec';
export type { PendingPutBack, PutBackStore } from './putback-store';
export { describeFleetEventForKubernetes, FleetEventRelay } from './kubernetes-events';
export type * from './types';

export interface FleetExtensionOptions extends FleetServiceOptions {
  /** Called with the service once it exists (to subscribe to its events, say). */
  onCreated?(fleet: FleetService): void;
  /** Kubernetes credentials (KUBECONFIG, or the pod's service account) and POD_NAMESPACE; default process.env. */
  env?: NodeJS.ProcessEnv;
}

/** Does this configuration talk to the Kubernetes API (discovery or a put-back ConfigMap)? */
function fleetNeedsKubernetes(config: FleetConfig): boolean {
  return config.discovery.kubernetes.length > 0 || config.stateConfigMap !== null;
}

/**
 * Where pending put-backs are kept: the file under `stateDirectory`, the ConfigMap `stateConfigMap`
 * in fabric-ops' namespace, or both (README, "Fleet": what survives what).
 */
function putBackStoreFor(config: FleetConfig, kubernetes: KubernetesConnection | undefined, logger: Logger): PutBackStore {
  const file = config.stateDirectory === null ? null : new FilePutBackStore(config.stateDirectory);
  if (config.stateConfigMap === null) {
    if (file === null) throw new ConfigError([`${config.source}: stateDirectory or stateConfigMap: one of them is needed to keep pending put-backs`]);
    return file;
  }
  if (kubernetes === undefined)
    throw new ConfigError([`${config.source}: stateConfigMap: needs the Kubernetes API (KUBECONFIG, or the pod's service account)`]);
  const configMap = new ConfigMapPutBackStore({
    api: createConfigMapObjectApi(kubernetes.transport, kubernetes.namespace, config.stateConfigMap),
    logger,
    // The fleet watches what it owns: a deleted ConfigMap is made again at once (FleetLogSpec.start calls watch).
    watch: { api: createConfigMapApi(kubernetes.transport, kubernetes.namespace, config.stateConfigMap), logger },
  });
  return file === null ? configMap : new FileAndConfigMapPutBackStore(file, configMap, logger);
}

/** What fleetExtension uses of the operations system: FleetHost, and the server's request-body limit when it has one (OperationsSystem does). */
export type FleetExtensionHost = FleetHost & { readonly httpLimits?: { readonly maxBodyBytes: number } };

/**
 * For startOperationsSystem({ extensions: [fleetExtension(config)] }): checks that the server
 * can serve fleet mode (TLS, client CAs; ConfigError otherwise), reads every group's credentials,
 * loads the pending put-backs, and mounts /fleet.
 */
export function fleetExtension(config: FleetConfig, options: FleetExtensionOptions = {}): (host: FleetExtensionHost) => Promise<HttpExtension> {
  return async (host) => {
    const problems = fleetServerProblems(host.config);
    if (problems.length > 0) throw new ConfigError(problems);
    // Writers pinned to a client root CA by fingerprint: that CA's certificate checks their certificates.
    const bound = bindWriterIssuers(config, host.config.operations.tls.clientRootCAFiles, host.config.keys.tlsClientRootCAs);
    let kubernetes = options.kubernetes;
    if (kubernetes === undefined && fleetNeedsKubernetes(config)) {
      // client-node loads only for a configuration that needs the API.
      // eslint-disable-next-line @typescript-eslint/no-require-imports -- Kubernetes only when configured (start time)
      const { connectKubernetes } = require('../kubernetes/connection') as typeof import('../kubernetes/connection');
      kubernetes = await connectKubernetes(options.env ?? process.env);
    }
    const logger = host.getLogger('operations.fleet');
    const store = options.store ?? putBackStoreFor(config, kubernetes, logger);
    const fleet = new FleetService(bound, { logger, metrics: host.metrics }, { ...options, store, ...(kubernetes ? { kubernetes } : {}) });
    // Listeners before start: the overdue put-backs start runs are reported too.
    options.onCreated?.(fleet);
    try {
      await fleet.start();
    } catch (error) {
      // Discovery may have started before the put-backs failed to load: nothing keeps running.
      await fleet.stop().catch(() => undefined);
      throw error;
    }
    const limits = host.httpLimits ?? { maxBodyBytes };
    return { path: '/fleet', handler: fleetRouter(fleet, logger, { maxBodyBytes: limits.maxBodyBytes }), stop: () => fleet.stop() };
  };
}
