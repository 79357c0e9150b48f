import http from 'node:http';
import https from 'node:https';
import type * as K8s from '@kubernetes/client-node' with { 'resolution-mode': 'import' };
import { environmentSchema } from '../config/environment';
import { outboundRequest } from '../http-client';
import { keepAliveScheduler } from '../time';
import { checkAccessPath, KubernetesAccessError } from './access';
import { bounded, KubernetesApiError } from './api-error';
import { maxBodyBytes, networkError, tooLarge, WatchConnection } from './watch-connection';
import type { KubernetesTransport, TransportOptions } from './transport-options';

export type { KubernetesTransport, TransportOptions, WatchEnd, WatchStream } from './transport-options';

/**
 * The KubernetesTransport (./transport-options): HTTP to the Kubernetes API with the credentials, CA and proxy of client-node's KubeConfig
 * (`applyToHTTPSOptions`: the token is read again on every request, so a rotated
 * service-account token is used as soon as it is on disk).
 *
 * Why not client-node's generated CoreV1Api and its Watch (2.0.1): CoreV1Api throws away the
 * body of a 401 (`Body: undefined`) and wraps every other Status in its own text; Watch never
 * reads a non-200 body either, cannot tell a connect timeout from the inactivity timeout of a
 * watch that was established, resolves `watch()` before anyone knows whether the watch
 * connected, and skips lines that are not JSON. The watch loop needs all four facts.
 */
export function createTransport(kubeConfig: K8s.KubeConfig, options: TransportOptions = {}): KubernetesTransport {
  const requestTimeoutMs = options.requestTimeoutMs ?? 10_000;
  const inactivityMs = options.watchInactivityTimeoutMs ?? environmentSchema.kubernetesWatchTimeout.default;
  const server = kubeConfig.getCurrentCluster()?.server ?? '';

  /** The URL and the request options: client-node's agent (its proxy), TLS files and credentials, and the headers. */
  async function prepare(
    path: string,
    query: Record<string, string>,
    headers: Record<string, string>,
  ): Promise<{ url: URL; options: https.RequestOptions; headers: Record<string, string> }> {
    const url = new URL(server.replace(/\/+$/, '') + path);
    for (const [key, value] of Object.entries(query)) url.searchParams.set(key, value);
    const requestOptions: https.RequestOptions = {};
    await kubeConfig.applyToHTTPSOptions(requestOptions);
    const given = { ...(requestOptions.headers as Record<string, string> | undefined) };
    // A token read from a file (tokenFile, the service account's) ends with the file's newline more
    // often than not; client-go trims it, and a header may not carry it.
    if (typeof given.Authorization === 'string') given.Authorization = given.Authorization.trim();
    return { url, options: requestOptions, headers: { Accept: 'application/json', ...given, ...headers } };
  }

  /** The watch's request: its stream is read below, not by outboundRequest. */
  async function open(method: string, path: string, query: Record<string, string>, headers: Record<string, string>): Promise<http.ClientRequest> {
    const prepared = await prepare(path, query, headers);
    const client = prepared.url.protocol === 'http:' ? http : https;
    return client.request(prepared.url, { ...prepared.options, method, headers: prepared.headers });
  }

  return {
    async request(access, path, { query = {}, body, contentType = 'application/json', signal } = {}) {
      if (access.verb === 'watch') throw new KubernetesAccessError(`${access.resource}: a watch goes through watch(), not request()`);
      checkAccessPath(access, path);
      const method = access.method;
      const aborted = (): KubernetesApiError => new KubernetesApiError(`${method} ${path}: aborted (stopping)`);
      if (signal?.aborted) throw aborted();
      const payload = body === undefined ? undefined : JSON.stringify(body);
      let prepared;
      try {
        prepared = await prepare(path, query, payload === undefined ? {} : { 'Content-Type': contentType });
      } catch (error) {
        throw networkError(method, path, error);
      }
      // What applyToHTTPSOptions sets: the agent, the TLS options, the headers, and `auth` (a
      // username and password), which becomes the header Node would make of it.
      const { agent, auth, ca, cert, key, pfx, passphrase, rejectUnauthorized, servername } = prepared.options;
      const headers = { ...prepared.headers };
      if (typeof auth === 'string' && !Object.keys(headers).some((name) => name.toLowerCase() === 'authorization')) {
        headers.Authorization = `Basic ${Buffer.from(auth).toString('base64')}`;
      }
      const answer = await outboundRequest({
        url: prepared.url,
        method,
        headers,
        body: payload,
        agent: agent instanceof http.Agent ? agent : undefined,
        tls: { ca, cert, key, pfx, passphrase, rejectUnauthorized, servername },
        timeoutMs: requestTimeoutMs,
        scheduler: keepAliveScheduler,
        signal,
        maxBytes: maxBodyBytes,
        json: true,
      });
      if (!answer.ok) {
        switch (answer.reason) {
          case 'timeout':
            throw new KubernetesApiError(`${method} ${path}: no answer within ${requestTimeoutMs} ms`);
          case 'aborted':
            throw aborted();
          case 'too_large':
            throw new KubernetesApiError(tooLarge);
          default:
            throw networkError(method, path, answer.error);
        }
      }
      const { status, text } = answer;
      if (status < 200 || status > 299) throw KubernetesApiError.fromAnswer(status, answer.statusMessage, text);
      if (text === '') return null;
      if (answer.json !== undefined && 'value' in answer.json) return answer.json.value;
      throw new KubernetesApiError(`${method} ${path}: the answer is not JSON: ${bounded(text, 100)}`, status);
    },

    watch(access, path, query, onEvent) {
      if (access.verb !== 'watch') throw new KubernetesAccessError(`${access.verb} ${access.resource}: watch() needs the watch entry`);
      checkAccessPath(access, path);
      return new WatchConnection(path, inactivityMs, onEvent, open('GET', path, { ...query, watch: 'true' }, {}));
    },
  };
}
