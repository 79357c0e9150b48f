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
