import type { IncomingMessage, ServerResponse } from 'node:http';
import type { OperationsDomain } from '../domain';
import { sendJson } from '../json';

export function getHealth(domain: OperationsDomain) {
  return async (_req: IncomingMessage, res: ServerResponse): Promise<void> => {
    // Made only when the report has to wait for checks: an AbortController and a 'close' listener
    // per request were the handler's largest cost on a keep-alive /healthz (issue 32).
    let abandoned: AbortController | undefined;
    const onClose = (): void => {
      if (!res.writableEnded) abandoned?.abort();
    };
    try {
      const report = await domain.checkHealth(() => {
        abandoned = new AbortController();
        res.on('close', onClose);
        return abandoned.signal;
      });
      // Answered meanwhile (the response-time limit, or a stop's grace ran out), or nobody left to answer.
      if (abandoned?.signal.aborted === true || res.headersSent) return;
      sendJson(res, report.status === 'OK' ? 200 : 503, report);
    } finally {
      if (abandoned !== undefined) res.off('close', onClose);
    }
  };
}
