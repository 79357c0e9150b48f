import type * as K8s from '@kubernetes/client-node' with { 'resolution-mode': 'import' };
import { existsSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { readEnvironment } from '../config/environment';
import { KubernetesSetupError, messageOf } from '../errors';
import { readRegularFileSync, type FileBound } from '../tls/files';
import { requireAccess } from './access';
import type { ConfigMapApi, ConfigMapLike } from './logspec-configmap';
import { watchTimeoutSeconds } from './list-watch-api';
import type { WatchEventType } from './reflector';
import type { KubernetesTransport } from './transport-options';
import type { CoreEventBody, EventPatch, EventSink } from './recorder';

type ClientNode = typeof K8s;

/**
 * The package's own copy of client-node, bundled at build (scripts/bundle.js) beside the compiled
 * library: dist/kubernetes-client.mjs, from dist/kubernetes/client.js.
 */
const bundledClientNode = path.join(__dirname, '..', 'kubernetes-client.mjs');

/**
 * @kubernetes/client-node takes about a second to load: only processes that configured the
 * integration pay for it. (It is ESM only; `import()` loads it from CommonJS.) The library loads the
 * copy bundled in the package, so that a user of the library or of fabric-ops/chaincode installs
 * none of client-node's 62 MB (issue 30 item 13); the command's bundle maps the import below to
 * that same file; a source checkout (the tests) loads the installed package (a devDependency).
 */
export async function loadClientNode(): Promise<ClientNode> {
  if (existsSync(bundledClientNode)) return (await import(pathToFileURL(bundledClientNode).href)) as ClientNode;
  return import('@kubernetes/client-node');
}

/**
 * Credentials as kubectl and client-go find them: `KUBECONFIG`, else the pod's service account
 * (`KUBERNETES_SERVICE_HOST`/`_PORT`, token and CA under /var/run/secrets/kubernetes.io/serviceaccount,
 * below FABRIC_OPS_SERVICEACCOUNT_ROOT when set).
 */
export function loadKubeConfig(k8s: ClientNode, env: NodeJS.ProcessEnv): K8s.KubeConfig {
  const config = new k8s.KubeConfig();
  try {
    if (env.KUBECONFIG) {
      const file = env.KUBECONFIG.split(':')[0] ?? env.KUBECONFIG;
      // Read once, as certificates and core.yaml are (a FIFO fails at once, a size cap), for
      // client-node and for the fields it drops; then its paths made absolute as loadFromFile does.
      const text = readBounded(file, kubeconfigBound);
      config.loadFromString(text);
      config.makePathsAbsolute(path.dirname(file));
      applyKubectlUserFields(config, file, text);
    } else if (env.KUBERNETES_SERVICE_HOST && env.KUBERNETES_SERVICE_PORT) {
      const root = readEnvironment(env, ['serviceAccountRoot']).serviceAccountRoot.replace(/\/+$/, '');
      config.loadFromCluster(root);
    } else {
      throw new Error('neither KUBECONFIG nor KUBERNETES_SERVICE_HOST/KUBERNETES_SERVICE_PORT (in-cluster service account) is set');
    }
  } catch (error) {
    throw new KubernetesSetupError(`cannot load Kubernetes credentials: ${messageOf(error)}`);
  }
  if (!config.getCurrentCluster()) throw new KubernetesSetupError('cannot load Kubernetes credentials: the kubeconfig has no current cluster');
  return config;
}

/**
 * The credential fields of a kubeconfig user that kubectl reads (client-go's `AuthInfo`). client-node
 * reads all of them but `tokenFile` (it reads a non-standard `token-file`) and the impersonation
 * fields other than `as`; `tokenFile` is given to client-node's file token source (read again when
 * the file changes, as kubectl does), and a field client-node would drop is refused at start,
 * naming it: calling the API as `system:anonymous` without a word is never the outcome.
 */
const understoodUserFields = new Set([
  'client-certificate',
  'client-certificate-data',
  'client-key',
  'client-key-data',
  'token',
  'tokenFile',
  'token-file',
  'username',
  'password',
  'auth-provider',
  'exec',
  'as',
  'extensions',
]);
const kubectlOnlyUserFields = new Set(['as-uid', 'as-groups', 'as-user-extra']);

/** The current context's user as written in the kubeconfig file (client-node's model has dropped what it does not read). */
function rawCurrentUser(text: string, currentUser: string): Record<string, unknown> | undefined {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- the YAML parser only when a kubeconfig is read (start time)
  const yaml = require('yaml') as typeof import('yaml');
  const document = yaml.parse(text) as { users?: { name?: unknown; user?: unknown }[] } | null;
  const entry = document?.users?.find((user) => user?.name === currentUser);
  return entry?.user !== null && typeof entry?.user === 'object' ? (entry.user as Record<string, unknown>) : undefined;
}

/** A kubeconfig (a few KiB; kubectl's own with many contexts stays far below this). */
const kubeconfigBound: FileBound = { maxBytes: 4 * 1024 * 1024, kind: 'a kubeconfig' };
/** A bearer token file (a service-account JWT is about 1 KiB). */
const tokenFileBound: FileBound = { maxBytes: 64 * 1024, kind: 'a token file' };

function readBounded(file: string, bound: FileBound): string {
  const read = readRegularFileSync(file, bound);
  if (!read.ok) throw new Error(`cannot read ${file}: ${read.problem}`);
  return read.bytes.toString('utf8');
}

function applyKubectlUserFields(config: K8s.KubeConfig, file: string, text: string): void {
  const user = config.getCurrentUser();
  if (user === null) return;
  const raw = rawCurrentUser(text, user.name);
  if (raw === undefined) return;
  const where = `${file}: users[name=${JSON.stringify(user.name)}].user`;
  for (const field of Object.keys(raw)) {
    if (kubectlOnlyUserFields.has(field)) {
      throw new Error(
        `${where}.${field}: impersonation by ${field} is not supported by fabric-ops (only "as"); remove it, or use a user with the rights fabric-ops needs`,
      );
    }
    if (!understoodUserFields.has(field)) {
      throw new Error(`${where}.${field}: unknown credential field (kubectl reads ${[...understoodUserFields].filter((f) => f !== 'token-file').join(', ')})`);
    }
  }
  const tokenFile = raw.tokenFile;
  if (tokenFile === undefined || (typeof raw.token === 'string' && raw.token !== '')) return;
  if (typeof tokenFile !== 'string' || tokenFile === '') throw new Error(`${where}.tokenFile: must be a file path, found ${JSON.stringify(tokenFile)}`);
  // Relative paths in a kubeconfig are relative to the file, as kubectl resolves them.
  const resolved = path.resolve(path.dirname(file), tokenFile);
  const token = readRegularFileSync(resolved, tokenFileBound);
  if (!token.ok) throw new Error(`${where}.tokenFile: cannot read ${resolved}: ${token.problem}`);
  // client-node's User is read-only in its types; its token sources read authProvider.config.tokenFile.
  (user as { authProvider?: unknown }).authProvider = { name: 'tokenFile', config: { tokenFile: resolved } };
}

export function createEventSink(transport: KubernetesTransport): EventSink {
  return {
    async create(event: CoreEventBody): Promise<void> {
      await transport.request(requireAccess('events', 'create'), `/api/v1/namespaces/${encodeURIComponent(event.metadata.namespace)}/events`, { body: event });
    },
    async patch(namespace: string, name: string, patch: EventPatch): Promise<void> {
      await transport.request(requireAccess('events', 'patch'), `/api/v1/namespaces/${encodeURIComponent(namespace)}/events/${encodeURIComponent(name)}`, {
        body: patch,
        contentType: 'application/merge-patch+json',
      });
    },
  };
}

export function createConfigMapApi(transport: KubernetesTransport, namespace: string, name: string, random: () => number = Math.random): ConfigMapApi {
  const path = `/api/v1/namespaces/${encodeURIComponent(namespace)}/configmaps`;
  const fieldSelector = `metadata.name=${name}`;
  return {
    async list(signal) {
      const list = (await transport.request(requireAccess('configmaps', 'list'), path, { query: { fieldSelector }, signal })) as {
        metadata?: { resourceVersion?: string };
        items?: ConfigMapLike[];
      } | null;
      return { resourceVersion: list?.metadata?.resourceVersion ?? '', items: Array.isArray(list?.items) ? list.items : [] };
    },
    watch(resourceVersion, onEvent) {
      return transport.watch(
        requireAccess('configmaps', 'watch'),
        path,
        { resourceVersion, fieldSelector, allowWatchBookmarks: 'true', timeoutSeconds: String(watchTimeoutSeconds(random)) },
        (type, object) => onEvent(type as WatchEventType, object ?? {}),
      );
    },
  };
}
