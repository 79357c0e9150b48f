import type { HealthReport } from '../health/types';
import type { ScrapeEndpoint } from '../metrics/types';
import type { VersionDocument } from '../version';

/** Who asked: what the HTTP layer knows about the client, for audit logs. */
export interface RequestActor {
  remoteAddress: string;
  /** Subject of the verified client certificate, when TLS is on and one was presented. */
  certificateSubject?: string;
}

/** Everything the HTTP layer calls. It parses requests, calls these, maps results to status codes. */
export interface OperationsDomain {
  getLogSpec(): string;
  /** Throws LogSpecError when the spec is invalid; then nothing changed. */
  setLogSpec(spec: string, actor: RequestActor): void;
  /**
   * The health report: at once when no check has to run (the common /healthz with no runtime
   * checker), else a promise of it. `whenWaiting` is called only when the report has to wait for
   * checks: it returns a signal that aborts when the client goes away.
   */
  checkHealth(whenWaiting: () => AbortSignal): HealthReport | Promise<HealthReport>;
  readonly version: VersionDocument;
  /** Null unless the metrics provider is prometheus. */
  readonly scrape: ScrapeEndpoint | null;
}
