import type { IncomingMessage, ServerResponse } from 'node:http';
import type { OperationsDomain } from '../domain';
import { sendJson } from '../json';

export function getHealth(domain: OperationsDomain) {
  return async (_req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const abandoned = new AbortController();
    const onClose = (): void => {
      if (!res.writableEnded) abandoned.abort();
    };
    res.on('close', onClose);
    try {
      const report = await domain.checkHealth(abandoned.signal);
      // Answered meanwhile (the 2 min limit, or a stop's grace ran out): nothing more to say.
      if (abandoned.signal.aborted || res.headersSent) return;
      sendJson(res, report.status === 'OK' ? 200 : 503, report);
    } finally {
      res.off('close', onClose);
    }
  };
}
