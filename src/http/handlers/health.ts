import type { IncomingMessage, ServerResponse } from 'node:http';
import type { HealthReport } from '../../health/types';
import type { OperationsDomain } from '../domain';
import { sendJson } from '../json';

function answer(res: ServerResponse, report: HealthReport): void {
  sendJson(res, report.status === 'OK' ? 200 : 503, report);
}

/** A report that waits for checks: the signal that aborts them when the client goes away, and its 'close' listener. */
interface Waiting {
  abandoned: AbortController;
  onClose: () => void;
}

/**
 * GET /healthz. A report given at once (no runtime checker) is answered in the same call, with no
 * promise, await or abort signal: those were the handler's largest cost on a keep-alive /healthz
 * (issue 32). A report that waits for checks gets a signal that aborts when the client goes away.
 */
export function getHealth(domain: OperationsDomain) {
  return (_req: IncomingMessage, res: ServerResponse): void | Promise<void> => {
    // Set by whenWaiting, which runs only for a report that waits.
    let waiting: Waiting | undefined;
    const report = domain.checkHealth(() => {
      const abandoned = new AbortController();
      const onClose = (): void => {
        if (!res.writableEnded) abandoned.abort();
      };
      res.on('close', onClose);
      waiting = { abandoned, onClose };
      return abandoned.signal;
    });
    if (report instanceof Promise) return answerWhenChecked(res, report, waiting);
    answer(res, report);
    return undefined;
  };
}

async function answerWhenChecked(res: ServerResponse, report: Promise<HealthReport>, waiting: Waiting | undefined): Promise<void> {
  try {
    const checked = await report;
    // Answered meanwhile (the response-time limit, or a stop's grace ran out), or nobody left to answer.
    if (waiting?.abandoned.signal.aborted === true || res.headersSent) return;
    answer(res, checked);
  } finally {
    if (waiting !== undefined) res.off('close', waiting.onClose);
  }
}
