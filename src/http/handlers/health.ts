import type { Request, Response } from 'express';
import type { OperationsDomain } from '../domain';

export function getHealth(domain: OperationsDomain) {
  return async (req: Request, res: Response): Promise<void> => {
    const abandoned = new AbortController();
    const onClose = (): void => {
      if (!res.writableEnded) abandoned.abort();
    };
    res.on('close', onClose);
    try {
      const report = await domain.checkHealth(abandoned.signal);
      if (abandoned.signal.aborted) return;
      res.status(report.status === 'OK' ? 200 : 503).json(report);
    } finally {
      res.off('close', onClose);
    }
  };
}
