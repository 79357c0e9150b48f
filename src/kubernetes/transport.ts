import http from 'node:http';
import https from 'node:https';
import type * as K8s from '@kubernetes/client-node' with { 'resolution-mode': 'import' };
import { messageOf } from '../errors';
import { checkAccessPath, KubernetesAccessError } from './access';
import { bounded, KubernetesApiError } from './api-error';
import type { KubernetesTransport, TransportOptions, WatchEnd } from './transport-options';

export type { KubernetesTransport, TransportOptions, WatchEnd, WatchStream } from './transport-options';

/** Largest body read from one answer: a ConfigMap holds at most 1 MiB. */
const maxBodyBytes = 3 * 1024 * 1024;

function networkError(method: string, path: string, error: unknown): KubernetesApiError {
  if (error instanceof KubernetesApiError) return error;
  const text = messageOf(error);
  return new KubernetesApiError(`${method} ${path}: ${text}`);
}

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
  const inactivityMs = options.watchInactivityTimeoutMs ?? 30_000;
  const server = kubeConfig.getCurrentCluster()?.server ?? '';

  async function open(method: string, path: string, query: Record<string, string>, headers: Record<string, string>): Promise<http.ClientRequest> {
    const url = new URL(server.replace(/\/+$/, '') + path);
    for (const [key, value] of Object.entries(query)) url.searchParams.set(key, value);
    const requestOptions: https.RequestOptions = {};
    await kubeConfig.applyToHTTPSOptions(requestOptions);
    const given = { ...(requestOptions.headers as Record<string, string> | undefined) };
    // A token read from a file (tokenFile, the service account's) ends with the file's newline more
    // often than not; client-go trims it, and a header may not carry it.
    if (typeof given.Authorization === 'string') given.Authorization = given.Authorization.trim();
    const client = url.protocol === 'http:' ? http : https;
    return client.request(url, {
      ...requestOptions,
      method,
      headers: { Accept: 'application/json', ...given, ...headers },
    });
  }

  /** The body of an answer, at most maxBodyBytes (a longer one is an error). */
  function readBody(response: http.IncomingMessage): Promise<string> {
    return new Promise((resolve, reject) => {
      const chunks: Buffer[] = [];
      let size = 0;
      response.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > maxBodyBytes) {
          response.destroy(new KubernetesApiError(`the answer is larger than ${maxBodyBytes} bytes`));
          return;
        }
        chunks.push(chunk);
      });
      response.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
      response.on('error', reject);
    });
  }

  return {
    async request(access, path, { query = {}, body, contentType = 'application/json', signal } = {}) {
      if (access.verb === 'watch') throw new KubernetesAccessError(`${access.resource}: a watch goes through watch(), not request()`);
      checkAccessPath(access, path);
      const method = access.method;
      const aborted = (): KubernetesApiError => new KubernetesApiError(`${method} ${path}: aborted (stopping)`);
      if (signal?.aborted) throw aborted();
      const payload = body === undefined ? undefined : JSON.stringify(body);
      let req: http.ClientRequest;
      try {
        req = await open(method, path, query, payload === undefined ? {} : { 'Content-Type': contentType });
      } catch (error) {
        throw networkError(method, path, error);
      }
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => req.destroy(new KubernetesApiError(`${method} ${path}: no answer within ${requestTimeoutMs} ms`)), requestTimeoutMs);
        const onAbort = (): void => {
          req.destroy(aborted());
        };
        signal?.addEventListener('abort', onAbort, { once: true });
        req.on('close', () => signal?.removeEventListener('abort', onAbort));
        if (signal?.aborted) onAbort();
        req.on('error', (error) => {
          clearTimeout(timer);
          reject(networkError(method, path, error));
        });
        req.on('response', (response) => {
          readBody(response).then(
            (text) => {
              clearTimeout(timer);
              const status = response.statusCode ?? 0;
              if (status < 200 || status > 299) return reject(KubernetesApiError.fromAnswer(status, response.statusMessage ?? '', text));
              try {
                resolve(text === '' ? null : JSON.parse(text));
              } catch {
                reject(new KubernetesApiError(`${method} ${path}: the answer is not JSON: ${bounded(text, 100)}`, status));
              }
            },
            (error: unknown) => {
              clearTimeout(timer);
              reject(networkError(method, path, error));
            },
          );
        });
        req.end(payload);
      });
    },

    watch(access, path, query, onEvent) {
      if (access.verb !== 'watch') throw new KubernetesAccessError(`${access.verb} ${access.resource}: watch() needs the watch entry`);
      checkAccessPath(access, path);
      let settleConnected!: { resolve: () => void; reject: (error: KubernetesApiError) => void };
      let settleEnded!: { resolve: (end: WatchEnd) => void; reject: (error: KubernetesApiError) => void };
      const connected = new Promise<void>((resolve, reject) => (settleConnected = { resolve, reject }));
      const ended = new Promise<WatchEnd>((resolve, reject) => (settleEnded = { resolve, reject }));
      // Whoever awaits only one of the two must not leave the other unhandled.
      connected.catch(() => undefined);
      ended.catch(() => undefined);
      let state: 'connecting' | 'open' | 'done' = 'connecting';
      let req: http.ClientRequest | null = null;
      let timer: NodeJS.Timeout | undefined;

      const fail = (error: KubernetesApiError): void => {
        if (state === 'done') return;
        const wasOpen = state === 'open';
        state = 'done';
        clearTimeout(timer);
        req?.destroy();
        if (wasOpen) settleEnded.reject(error);
        else {
          settleConnected.reject(error);
          settleEnded.reject(error);
        }
      };
      const finish = (end: WatchEnd): void => {
        if (state === 'done') return;
        const wasOpen = state === 'open';
        state = 'done';
        clearTimeout(timer);
        req?.destroy();
        if (!wasOpen) settleConnected.reject(new KubernetesApiError(`GET ${path}: the watch was ${end} before the server answered`));
        settleEnded.resolve(end);
      };
      const arm = (): void => {
        clearTimeout(timer);
        timer = setTimeout(() => {
          if (state === 'connecting') fail(new KubernetesApiError(`GET ${path} (watch): no answer within ${inactivityMs} ms`));
          else finish('idle');
        }, inactivityMs);
      };

      arm();
      open('GET', path, { ...query, watch: 'true' }, {}).then(
        (request) => {
          req = request;
          // The listener before any destroy(): a request destroyed without one (a stop or the
          // connect timer while the request was being made) emits an error nobody hears.
          request.on('error', (error) => (state === 'open' ? finish('broken') : fail(networkError('GET', path, error))));
          if (state === 'done') {
            request.destroy();
            return;
          }
          request.on('response', (response) => {
            if (response.statusCode !== 200) {
              readBody(response).then(
                (text) => fail(KubernetesApiError.fromAnswer(response.statusCode ?? 0, response.statusMessage ?? '', text)),
                (error: unknown) => fail(networkError('GET', path, error)),
              );
              return;
            }
            state = 'open';
            settleConnected.resolve();
            arm();
            let buffer = '';
            response.setEncoding('utf8');
            response.on('data', (chunk: string) => {
              if (state !== 'open') return;
              arm();
              buffer += chunk;
              let newline = buffer.indexOf('\n');
              while (newline >= 0 && state === 'open') {
                const line = buffer.slice(0, newline).trim();
                buffer = buffer.slice(newline + 1);
                newline = buffer.indexOf('\n');
                if (line === '') continue;
                let event: { type?: unknown; object?: unknown };
                try {
                  event = JSON.parse(line) as { type?: unknown; object?: unknown };
                } catch {
                  fail(new KubernetesApiError(`GET ${path} (watch): malformed stream: ${bounded(line, 100)}`));
                  return;
                }
                if (typeof event !== 'object' || event === null || typeof event.type !== 'string') {
                  fail(new KubernetesApiError(`GET ${path} (watch): malformed event: ${bounded(line, 100)}`));
                  return;
                }
                try {
                  onEvent(event.type, event.object);
                } catch (error) {
                  fail(new KubernetesApiError(`GET ${path} (watch): event not handled: ${bounded(messageOf(error), 100)}`));
                  return;
                }
              }
              if (buffer.length > maxBodyBytes) fail(new KubernetesApiError(`GET ${path} (watch): an event larger than ${maxBodyBytes} bytes`));
            });
            response.on('end', () => finish('closed'));
            response.on('close', () => finish('broken'));
            response.on('error', () => finish('broken'));
          });
          request.end();
        },
        (error: unknown) => fail(networkError('GET', path, error)),
      );
      return { connected, ended, abort: () => finish('aborted') };
    },
  };
}
