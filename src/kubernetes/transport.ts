import http from 'node:http';
import https from 'node:https';
import type * as K8s from '@kubernetes/client-node' with { 'resolution-mode': 'import' };
import { messageOf } from '../errors';
import { outboundRequest } from '../http-client';
import { keepAliveScheduler } from '../time';
import { checkAccessPath, KubernetesAccessError } from './access';
import { bounded, KubernetesApiError } from './api-error';
import type { KubernetesTransport, TransportOptions, WatchEnd } from './transport-options';

export type { KubernetesTransport, TransportOptions, WatchEnd, WatchStream } from './transport-options';

/** Largest body read from one answer: a ConfigMap holds at most 1 MiB. */
const maxBodyBytes = 3 * 1024 * 1024;
const tooLarge = `the answer is larger than ${maxBodyBytes} bytes`;

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

  /** The body of an answer, at most maxBodyBytes (a longer one is an error). */
  function readBody(response: http.IncomingMessage): Promise<string> {
    return new Promise((resolve, reject) => {
      const chunks: Buffer[] = [];
      let size = 0;
      response.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > maxBodyBytes) {
          response.destroy(new KubernetesApiError(tooLarge));
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
