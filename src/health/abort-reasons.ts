/**
 * The reasons a checker's AbortSignal carries, so a checker can say why it stopped
 * (`failed to ping to Docker daemon: timed out after 2s`).
 */

import { FabricOpsError, messageOf } from '../errors';

/** Go-style duration text for whole milliseconds: 2s, 1.5s, 250ms, 1m30s. */
export function formatDuration(ms: number): string {
  if (ms < 1000) return `${ms}ms`;
  const minutes = Math.floor(ms / 60_000);
  const seconds = (ms - minutes * 60_000) / 1000;
  const secondsText = `${Number.isInteger(seconds) ? seconds : seconds.toFixed(3).replace(/0+$/, '')}s`;
  if (minutes === 0) return secondsText;
  return seconds === 0 ? `${minutes}m0s` : `${minutes}m${secondsText}`;
}

/** The checker's own timeout passed. */
export class CheckTimeoutError extends FabricOpsError {
  override readonly code = 'FABRIC_OPS_CHECK_TIMEOUT';
  readonly timeoutMs: number;
  constructor(timeoutMs: number) {
    super(`timed out after ${formatDuration(timeoutMs)}`);
    this.timeoutMs = timeoutMs;
  }
}

/** Every caller waiting for the run went away (client disconnects), so the run stops. */
export class CheckCancelledError extends FabricOpsError {
  override readonly code = 'FABRIC_OPS_CHECK_CANCELLED';
  constructor() {
    super('check cancelled: nobody is waiting for the answer any more');
  }
}

/** Text for why a signal aborted, whatever the abort reason was. */
export function describeAbort(signal: AbortSignal): string {
  const reason: unknown = signal.reason;
  if (reason instanceof Error) return messageOf(reason);
  if (typeof reason === 'string' && reason !== '') return reason;
  return 'aborted';
}
