/**
 * The transport's options, apart from ./transport so that the public types (KubernetesIntegrationOptions)
 * do not import @kubernetes/client-node's declarations: a library user's compiler would then need
 * @types/ws and the rest of client-node's type dependencies.
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
