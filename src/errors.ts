/**
 * One error type per failure a user can act on. Every message names the key, path or
 * value at fault; none of them needs a stack trace to be understood. Every class has a
 * stable `code` (as Node's own errors have), for programs that branch on the failure.
 */
export class FabricOpsError extends Error {
  readonly code: string = 'FABRIC_OPS';
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = new.target.name;
  }
}

/**
 * The text of anything thrown or rejected: an Error's message (its name when the message is
 * empty), anything else as String() gives it. The one way the code turns a caught value into words.
 */
export function messageOf(error: unknown): string {
  if (error instanceof Error) return error.message || error.name;
  try {
    return String(error);
  } catch {
    // An object without a prototype (Object.create(null)) has no toString.
    return Object.prototype.toString.call(error);
  }
}

/** The configuration cannot be used. One entry per problem, each naming the dialect's own key. */
export class ConfigError extends FabricOpsError {
  override readonly code = 'FABRIC_OPS_CONFIG';
  readonly problems: readonly string[];
  constructor(problems: readonly string[]) {
    super(problems.join('\n'));
    this.problems = problems;
  }
}

/** A logging specification that does not parse (Fabric's messages). */
export class LogSpecError extends FabricOpsError {
  override readonly code = 'FABRIC_OPS_LOG_SPEC';
}

/** A certificate, key or CA file that cannot be read, parsed, or does not match its pair. */
export class TlsMaterialError extends FabricOpsError {
  override readonly code = 'FABRIC_OPS_TLS_MATERIAL';
  readonly path: string;
  constructor(path: string, message: string) {
    super(message);
    this.path = path;
  }
}

/** The server certificate chains to a CA that the node also uses for organizations. */
export class DedicatedCaError extends FabricOpsError {
  override readonly code = 'FABRIC_OPS_DEDICATED_CA';
}

/** The listen address cannot be bound (in use, permission denied, no such address). */
export class ListenError extends FabricOpsError {
  override readonly code = 'FABRIC_OPS_LISTEN';
  readonly address: string;
  constructor(address: string, message: string) {
    super(message);
    this.address = address;
  }
}

/** A health checker name that is empty, too long or has characters outside A-Z a-z 0-9 _ . : / -. */
export class InvalidCheckerNameError extends FabricOpsError {
  override readonly code = 'FABRIC_OPS_INVALID_CHECKER_NAME';
}

/** A health checker registered under a name that is already taken. */
export class DuplicateCheckerError extends FabricOpsError {
  override readonly code = 'FABRIC_OPS_DUPLICATE_CHECKER';
}

/** A metric created with options that cannot work (unknown label, bad format, conflicting re-registration). */
export class MetricOptionsError extends FabricOpsError {
  override readonly code = 'FABRIC_OPS_METRIC_OPTIONS';
}

/** Label values used wrongly at run time (missing label values, unknown label name). */
export class MetricLabelsError extends FabricOpsError {
  override readonly code = 'FABRIC_OPS_METRIC_LABELS';
}

/** A value given to a metric that it cannot take (not a finite number, a counter asked to go down). */
export class MetricValueError extends FabricOpsError {
  override readonly code = 'FABRIC_OPS_METRIC_VALUE';
}

/** The Kubernetes integration cannot start: no credentials (kubeconfig or service account) could be loaded. */
export class KubernetesSetupError extends FabricOpsError {
  override readonly code = 'FABRIC_OPS_KUBERNETES_SETUP';
}
