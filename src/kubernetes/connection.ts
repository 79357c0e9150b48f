import { readEnvironment } from '../config/environment';
import { loadClientNode, loadKubeConfig } from './client';
import { createTransport } from './transport';
// The types from ./transport-options, so that these declarations do not import client-node's.
import type { KubernetesTransport, TransportOptions } from './transport-options';

/** The Kubernetes API for a part of fabric-ops other than the node's own integration (fleet mode). */
export interface KubernetesConnection {
  transport: KubernetesTransport;
  /** The API server's URL, for messages. */
  server: string;
  /** The namespace fabric-ops runs in: POD_NAMESPACE, else the kubeconfig context's, else `default` (as kubectl). */
  namespace: string;
}

/**
 * Credentials as kubectl finds them (KUBECONFIG, else the pod's service account); loads
 * client-node (only then). Throws KubernetesSetupError when there are none; an API server that
 * cannot be reached is not an error here (every caller retries).
 */
export async function connectKubernetes(env: NodeJS.ProcessEnv = process.env, options: TransportOptions = {}): Promise<KubernetesConnection> {
  const k8s = await loadClientNode();
  const kubeConfig = loadKubeConfig(k8s, env);
  const context = kubeConfig.getContextObject(kubeConfig.getCurrentContext());
  const namespace = readEnvironment(env, ['podNamespace']).podNamespace || context?.namespace || 'default';
  return { transport: createTransport(kubeConfig, options), server: kubeConfig.getCurrentCluster()?.server ?? '', namespace };
}
