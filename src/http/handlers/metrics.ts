import type { Request, Response } from 'express';
import type { ScrapeEndpoint } from '../../metrics/types';

export function getMetrics(scrape: ScrapeEndpoint) {
  return async (req: Request, res: Response): Promise<void> => {
    const { contentType, body } = await scrape.render(req.get('accept'));
    if (res.headersSent) return;
    res.status(200).type(contentType).send(body);
  };
}
