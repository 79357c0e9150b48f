import type { IncomingMessage, ServerResponse } from 'node:http';
import type { HealthReport } from '../../health/types';
import type { OperationsDomain } from '../domain';
import { sendJson } from '../json';

function answer(res: ServerResponse, report: HealthReport): void {
  sendJson(res, report.status === 'OK' ? 200 : 503, report);
}

/**
 * GET /healthz. A report given at once (no runtime checker) is answered in the same call, with no
 * promise, await or abort signal: those were the handler's largest cost on a keep-alive /healthz
 * (issue 32). A report that waits for checks gets a signal that aborts when the client goes away.
 */
export function getHealth(domain: OperationsDomain) {
  return (_req: IncomingMessage, res: ServerResponse): void | Promise<void> => {
    let abandoned: AbortController | undefined;
    const onClose = (): void => {
      if (!res.writableEnded) abandoned?.abort();
    };
    const report = domain.checkHealth(() => {
      abandoned = new AbortController();
      res.on('close', onClose);
      return abandoned.signal;
    });
    if (!(report instanceof Promise)) {
      answer(res, report);
      return undefined;
    }
    return report.then(
      (waited) => {
        if (abandoned !== undefined) res.off('close', onClose);
        // Answered meanwhile (the response-time limit, or a stop's grace ran out), or nobody left to answer.
        if (abandoned?.signal.aborted === true || res.headersSent) return;
        answer(res, waited);
      },
      (err: unknown) => {
        if (abandoned !== undefined) res.off('close', onClose);
        throw err;
      },
    );
  };
}
