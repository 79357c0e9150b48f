import { DuplicateCheckerError, InvalidCheckerNameError, messageOf } from '../errors';
import type { OperationsEvent } from '../events/types';
import type { Logger, LoggerFactory } from '../logging/types';
import type { Gauge, Histogram } from '../metrics/types';
import { CheckCancelledError, CheckTimeoutError } from './abort-reasons';
import { monotonicClock, systemClock, type Clock } from '../time';
import { type CheckResult, type FailedCheck, type HealthChecker, type HealthReport, type OperationsHealth } from './types';

/** Fed after every completed check, labels `{component}`: seconds taken, and 1 (ok) or 0 (failing). */
export interface HealthMetrics {
  duration: Histogram;
  status: Gauge;
}

export interface HealthServiceOptions {
  /** Each checker's own timeout. */
  timeoutMs: number;
  /** Source of the report's `time`. */
  clock?: Clock;
  loggers: LoggerFactory;
  metrics?: HealthMetrics;
  /** Told when a checker starts failing or passes again (the same moments as the warn/info log lines). */
  onStateChange?: (event: Extract<OperationsEvent, { type: 'health.failing' | 'health.recovered' }>) => void;
}

const componentNamePattern = /^[A-Za-z0-9][A-Za-z0-9_.:/-]{0,99}$/;

/**
 * How long a checker whose timeout passed may still answer with its own reason (it got
 * the abort and can say what it was waiting for) before the generic `timed out after` wins.
 */
const lateAnswerGraceMs = 50;

type Outcome = { kind: 'done'; result: CheckResult; seconds: number } | { kind: 'cancelled' };

interface Run {
  readonly controller: AbortController;
  readonly components: readonly string[];
  readonly settled: Map<string, CheckResult>;
  waiters: number;
  /** null when the run was cancelled because nobody waited for it any more. */
  report: Promise<HealthReport | null>;
}

/**
 * The registry of health checkers and the runs of them behind `/healthz`. All checkers run
 * concurrently, each with its own timeout; concurrent `check()` calls share one in-flight run.
 */
export class HealthService implements OperationsHealth {
  private readonly timeoutMs: number;
  private readonly clock: Clock;
  /** The last report time formatted, and its millisecond (timeNow). */
  private lastTime = { ms: Number.NaN, text: '' };
  private readonly logger: Logger;
  private readonly metrics: HealthMetrics | undefined;
  private readonly onStateChange: HealthServiceOptions['onStateChange'];
  private readonly checkers = new Map<string, HealthChecker>();
  private readonly lastResults = new Map<string, CheckResult>();
  private inFlight: Run | undefined;

  constructor(options: HealthServiceOptions) {
    if (!Number.isInteger(options.timeoutMs) || options.timeoutMs <= 0) {
      throw new RangeError(`health check timeout must be a positive whole number of milliseconds; got ${String(options.timeoutMs)}`);
    }
    this.timeoutMs = options.timeoutMs;
    this.clock = options.clock ?? systemClock;
    this.logger = options.loggers.getLogger('health');
    this.metrics = options.metrics;
    this.onStateChange = options.onStateChange;
  }

  register(component: string, checker: HealthChecker): void {
    if (typeof component !== 'string' || !componentNamePattern.test(component)) {
      throw new InvalidCheckerNameError(
        `health checker name ${JSON.stringify(component)} is not usable: use 1 to 100 characters of A-Z a-z 0-9 _ . : / -, starting with a letter or digit`,
      );
    }
    if (typeof checker?.check !== 'function') {
      throw new TypeError(`health checker "${component}" has no check(signal) method`);
    }
    if (this.checkers.has(component)) {
      throw new DuplicateCheckerError(`a health checker named "${component}" is already registered`);
    }
    this.checkers.set(component, checker);
    this.logger.debug(`registered health checker ${component}`, { component });
  }

  unregister(component: string): void {
    if (this.checkers.delete(component)) {
      this.lastResults.delete(component);
      this.logger.debug(`unregistered health checker ${component}`, { component });
    }
  }

  /** True when a check would run nothing and wait for nothing: no checker registered, no run in flight. */
  get idle(): boolean {
    return this.checkers.size === 0 && this.inFlight === undefined;
  }

  /**
   * The report at once when a check would run nothing (`idle`): what `check()` resolves to then,
   * without a promise and a turn of the microtask queue per /healthz (issue 32); undefined when
   * checks have to run.
   * @internal
   */
  reportNow(): HealthReport | undefined {
    return this.idle ? this.buildReport([]) : undefined;
  }

  /** Names of the registered checkers, sorted. */
  components(): string[] {
    return [...this.checkers.keys()].sort(compareNames);
  }

  /**
   * Runs every registered checker (or joins the run already in flight) and reports. Never
   * rejects. When `signal` aborts, this call resolves at once (with the checks still pending
   * marked as cancelled) and the shared run stops if no other caller waits for it.
   */
  check(signal?: AbortSignal): Promise<HealthReport> {
    if (signal?.aborted) {
      const current = this.inFlight;
      return Promise.resolve(current ? this.cancelledReport(current.components, current.settled) : this.cancelledReport(this.components(), new Map()));
    }
    // Nothing to run: the report at once, without a run to share (the common /healthz with no runtime checker).
    const now = this.reportNow();
    if (now !== undefined) return Promise.resolve(now);
    const run = this.inFlight ?? this.startRun();
    run.waiters += 1;
    return new Promise<HealthReport>((resolve) => {
      let answered = false;
      const leave = (): void => {
        answered = true;
        run.waiters -= 1;
      };
      const onAbort = (): void => {
        if (answered) return;
        leave();
        resolve(this.cancelledReport(run.components, run.settled));
        if (run.waiters === 0) this.cancelRun(run);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      void run.report.then((report) => {
        if (answered) return;
        leave();
        signal?.removeEventListener('abort', onAbort);
        resolve(report ?? this.cancelledReport(run.components, run.settled));
      });
    });
  }

  private startRun(): Run {
    const entries = [...this.checkers.entries()].sort(([a], [b]) => compareNames(a, b));
    const controller = new AbortController();
    const run: Run = {
      controller,
      components: entries.map(([component]) => component),
      settled: new Map(),
      waiters: 0,
      report: Promise.resolve(null),
    };
    run.report = Promise.all(
      entries.map(async ([component, checker]) => {
        const outcome = await this.runChecker(checker, controller.signal);
        if (outcome.kind === 'done') run.settled.set(component, outcome.result);
        return [component, outcome] as const;
      }),
    )
      .then((outcomes) => {
        if (this.inFlight === run) this.inFlight = undefined;
        if (controller.signal.aborted) return null;
        const results: Array<[string, CheckResult]> = [];
        for (const [component, outcome] of outcomes) {
          if (outcome.kind !== 'done') continue;
          results.push([component, outcome.result]);
          this.record(component, outcome.result, outcome.seconds);
        }
        return this.buildReport(results);
      })
      .catch((error: unknown): HealthReport => {
        if (this.inFlight === run) this.inFlight = undefined;
        const reason = `health service error: ${messageOf(error)}`;
        this.logger.error(reason);
        return {
          status: 'Service Unavailable',
          time: this.timeNow(),
          failed_checks: run.components.map((component) => ({ component, reason })),
        };
      });
    this.inFlight = run;
    return run;
  }

  private cancelRun(run: Run): void {
    if (this.inFlight === run) this.inFlight = undefined;
    if (!run.controller.signal.aborted) run.controller.abort(new CheckCancelledError());
  }

  /** One checker under its timeout; settles on its answer, on the timeout, or when the run is cancelled. */
  private runChecker(checker: HealthChecker, runSignal: AbortSignal): Promise<Outcome> {
    const controller = new AbortController();
    const started = monotonicClock.now();
    const timeout = new CheckTimeoutError(this.timeoutMs);
    const elapsedSeconds = (): number => (monotonicClock.now() - started) / 1000;
    return new Promise<Outcome>((resolve) => {
      let graceTimer: NodeJS.Timeout | undefined;
      let finished = false;
      const finish = (outcome: Outcome): void => {
        if (finished) return;
        finished = true;
        clearTimeout(timeoutTimer);
        clearTimeout(graceTimer);
        runSignal.removeEventListener('abort', onRunAbort);
        resolve(outcome);
      };
      const onRunAbort = (): void => {
        controller.abort(runSignal.reason);
        finish({ kind: 'cancelled' });
      };
      const timeoutTimer = setTimeout(() => {
        controller.abort(timeout);
        graceTimer = setTimeout(() => finish({ kind: 'done', result: { ok: false, reason: timeout.message }, seconds: elapsedSeconds() }), lateAnswerGraceMs);
      }, this.timeoutMs);
      runSignal.addEventListener('abort', onRunAbort, { once: true });
      const timedOut = (): boolean => controller.signal.reason === timeout;

      let answer: Promise<unknown>;
      try {
        answer = Promise.resolve(checker.check(controller.signal));
      } catch (error) {
        answer = Promise.reject(error);
      }
      answer.then(
        (value) => {
          const result = interpretAnswer(value);
          // A late "ok" does not count: the deadline passed.
          const settledResult: CheckResult = timedOut() && result.ok ? { ok: false, reason: timeout.message } : result;
          finish({ kind: 'done', result: settledResult, seconds: elapsedSeconds() });
        },
        (error: unknown) => {
          const reason = timedOut() ? timeout.message : `checker failed: ${messageOf(error)}`;
          finish({ kind: 'done', result: { ok: false, reason }, seconds: elapsedSeconds() });
        },
      );
    });
  }

  private record(component: string, result: CheckResult, seconds: number): void {
    if (this.metrics) {
      try {
        this.metrics.duration.with({ component }).observe(seconds);
        this.metrics.status.with({ component }).set(result.ok ? 1 : 0);
      } catch (error) {
        this.logger.error(`cannot record health metrics for ${component}: ${messageOf(error)}`, { component });
      }
    }
    if (!this.checkers.has(component)) return; // unregistered while it ran
    const previous = this.lastResults.get(component);
    this.lastResults.set(component, result);
    if (!result.ok) {
      if (previous === undefined || previous.ok) {
        this.logger.warn(`health check ${component} is failing: ${result.reason}`, { component, reason: result.reason });
        this.onStateChange?.({ type: 'health.failing', component, reason: result.reason });
      } else if (previous.reason !== result.reason) {
        this.logger.debug(`health check ${component} still failing: ${result.reason}`, { component, reason: result.reason });
      }
    } else if (previous === undefined) {
      this.logger.debug(`health check ${component} is ok`, { component });
    } else if (!previous.ok) {
      this.logger.info(`health check ${component} is ok again (was failing: ${previous.reason})`, { component, previousReason: previous.reason });
      this.onStateChange?.({ type: 'health.recovered', component, previousReason: previous.reason });
    }
  }

  private buildReport(results: ReadonlyArray<[string, CheckResult]>): HealthReport {
    const failed: FailedCheck[] = [];
    for (const [component, result] of results) {
      if (!result.ok) failed.push({ component, reason: result.reason });
    }
    failed.sort((a, b) => compareNames(a.component, b.component));
    const time = this.timeNow();
    return failed.length === 0 ? { status: 'OK', time } : { status: 'Service Unavailable', time, failed_checks: failed };
  }

  /**
   * The clock's time as a report gives it. Reports within the same millisecond share the text:
   * formatting a Date was a twentieth of the server's time on a keep-alive /healthz (issue 32).
   */
  private timeNow(): string {
    const now = this.clock.now();
    if (now !== this.lastTime.ms) this.lastTime = { ms: now, text: new Date(now).toISOString() };
    return this.lastTime.text;
  }

  /** What a caller that stopped waiting gets: what had finished, the rest marked cancelled. */
  private cancelledReport(components: readonly string[], settled: ReadonlyMap<string, CheckResult>): HealthReport {
    const cancelled = new CheckCancelledError().message;
    return this.buildReport(components.map((component): [string, CheckResult] => [component, settled.get(component) ?? { ok: false, reason: cancelled }]));
  }
}

function compareNames(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function interpretAnswer(value: unknown): CheckResult {
  if (typeof value === 'object' && value !== null && 'ok' in value) {
    const answer = value as { ok: unknown; reason?: unknown };
    if (answer.ok === true) return { ok: true };
    if (answer.ok === false) {
      return typeof answer.reason === 'string' && answer.reason !== ''
        ? { ok: false, reason: answer.reason }
        : { ok: false, reason: 'checker failed without giving a reason' };
    }
  }
  return { ok: false, reason: 'checker failed: it answered something other than {ok: true} or {ok: false, reason}' };
}
