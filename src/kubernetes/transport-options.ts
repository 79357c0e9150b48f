import type { ApiAccess } from './access';

/**
 * The transport's options and watch types, apart from ./transport so that the public types
 * (KubernetesIntegrationOptions, the watcher) do not import @kubernetes/client-node's
 * declarations: a library user's compiler would then need @types/ws and the rest of
 * client-node's type dependencies (test/packaging/library-consumer.test.ts).
 */
export interface TransportOptions {
  /** A request without an answer within this is given up; default 10 s. */
  requestTimeoutMs?: number;
  /**
   * A watch that gets no byte for this long is ended by the client and watched again: default
   * 30 s, client-node's `Watch.requestTimeoutMs`. It bounds how long a connection that died
   * without a word (a NAT entry dropped) can pass for an idle watch.
   */
  watchInactivityTimeoutMs?: number;
}

/**
 * Why an established watch ended: `closed` by the server (its timeoutSeconds, or any normal
 * end), `idle` (no byte within the inactivity timeout: a real API server sends nothing on an
 * idle watch), `broken` (the connection was lost), `aborted` (by us).
 */
export type WatchEnd = 'closed' | 'idle' | 'broken' | 'aborted';

export interface WatchStream {
  /** Resolves when the server answered 200; rejects with KubernetesApiError when it did not. */
  readonly connected: Promise<void>;
  /** Settles after `connected` resolved: why the stream ended; rejects on a malformed stream. */
  readonly ended: Promise<WatchEnd>;
  abort(): void;
}

/**
 * HTTP to the Kubernetes API (createTransport in ./transport makes one from client-node's
 * KubeConfig): here, apart from it, so that what takes a transport does not import
 * client-node's declarations.
 */
export interface KubernetesTransport {
  /**
   * One request, its method given by `access` (requireAccess); resolves with the parsed body of a
   * 2xx answer, rejects with KubernetesApiError.
   */
  request(access: ApiAccess, path: string, options?: { query?: Record<string, string>; body?: unknown; contentType?: string }): Promise<unknown>;
  /** A watch (`?watch=true`, `access` the watch entry of the resource): `onEvent` gets each event of the stream. */
  watch(access: ApiAccess, path: string, query: Record<string, string>, onEvent: (type: string, object: unknown) => void): WatchStream;
}
