export type CheckResult = { ok: true } | { ok: false; reason: string };

/**
 * One health checker. `signal` aborts when the checker's timeout passes or nobody
 * waits for the answer any more; a checker should stop its I/O then.
 */
export interface HealthChecker {
  check(signal: AbortSignal): Promise<CheckResult>;
}

export interface FailedCheck {
  component: string;
  reason: string;
}

export interface HealthReport {
  status: 'OK' | 'Service Unavailable';
  /** RFC 3339, UTC. */
  time: string;
  failed_checks?: FailedCheck[];
}

/**
 * What embedding code may do with the health checks of a running operations system
 * (`OperationsSystem.health`): the checkers behind `GET /healthz`. How the checks run (each under
 * its own timeout, concurrent calls sharing one run): docs/health.md.
 */
export interface OperationsHealth {
  /**
   * Adds a checker, run by every later check. Throws InvalidCheckerNameError for a name that is
   * not 1 to 100 characters of `A-Z a-z 0-9 _ . : / -` (starting with a letter or digit), and
   * DuplicateCheckerError for a name already registered.
   */
  register(component: string, checker: HealthChecker): void;
  /** Removes the checker named `component`; an unknown name is ignored. */
  unregister(component: string): void;
  /** Names of the registered checkers, sorted. */
  components(): string[];
  /**
   * Runs every registered checker (or joins the run already in flight), as `GET /healthz` does.
   * Never rejects. When `signal` aborts, this call resolves at once with the checks still
   * pending marked as cancelled.
   */
  check(signal?: AbortSignal): Promise<HealthReport>;
}
