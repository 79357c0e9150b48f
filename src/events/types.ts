/**
 * What the operations system reports to integrations (Kubernetes Events, ...): the things an
 * operator must notice. Emitted by OperationsSystem; integrations subscribe with onEvent().
 */
export type OperationsEvent =
  /** A health checker went from ok (or never run) to failing. */
  | { type: 'health.failing'; component: string; reason: string }
  /** A failing health checker passes again. */
  | { type: 'health.recovered'; component: string; previousReason: string }
  /**
   * The logging spec was activated. `actor`: the client certificate subject of a PUT /logspec
   * (`anonymous <address>` without TLS), `local` for a library call, or what the caller named
   * (`configmap <namespace>/<name>`).
   */
  | { type: 'logspec.changed'; previous: string; current: string; actor: string }
  /**
   * A spec given by a library caller (the ConfigMap watcher, say) was invalid; the active spec
   * stays. A refused PUT /logspec is not reported: its client gets the 400.
   */
  | { type: 'logspec.refused'; spec: string; reason: string; actor: string; active: string }
  /** New TLS material serves from now on (`notAfter` of the server certificate, ISO 8601). */
  | { type: 'tls.reloaded'; subject: string; notAfter: string; fingerprint: string }
  /** Changed TLS files were refused; the previous material keeps serving. */
  | { type: 'tls.reloadRefused'; reason: string };

export type OperationsEventType = OperationsEvent['type'];

export type OperationsEventListener = (event: OperationsEvent) => void;
