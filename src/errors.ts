/**
 * One error type per failure a user can act on. Every message names the key, path or
 * value at fault; none of them needs a stack trace to be understood.
 */
export class FabricOpsError extends Error {
  constructor(message: string) {
    super(message);
    this.name = new.target.name;
  }
}

/** The configuration cannot be used. One entry per problem, each naming the dialect's own key. */
export class ConfigError extends FabricOpsError {
  readonly problems: readonly string[];
  constructor(problems: readonly string[]) {
    super(problems.join('\n'));
    this.problems = problems;
  }
}

/** A logging specification that does not parse (Fabric's messages). */
export class LogSpecError extends FabricOpsError {}

/** A certificate, key or CA file that cannot be read, parsed, or does not match its pair. */
export class TlsMaterialError extends FabricOpsError {
  readonly path: string;
  constructor(path: string, message: string) {
    super(message);
    this.path = path;
  }
}

/** The server certificate chains to a CA that the node also uses for organizations. */
export class DedicatedCaError extends FabricOpsError {}

/** The listen address cannot be bound (in use, permission denied, no such address). */
export class ListenError extends FabricOpsError {
  readonly address: string;
  constructor(address: string, message: string) {
    super(message);
    this.address = address;
  }
}

/** A health checker name that is empty, too long or has characters outside A-Z a-z 0-9 _ . : / -. */
export class InvalidCheckerNameError extends FabricOpsError {}

/** A health checker registered under a name that is already taken. */
export class DuplicateCheckerError extends FabricOpsError {}

/** A metric created with options that cannot work (unknown label, bad format, conflicting re-registration). */
export class MetricOptionsError extends FabricOpsError {}

/** Metric values used wrongly at run time (missing label values, unknown label name). */
export class MetricLabelsError extends FabricOpsError {}

/** The Kubernetes integration cannot start: no credentials (kubeconfig or service account) could be loaded. */
export class KubernetesSetupError extends FabricOpsError {}
