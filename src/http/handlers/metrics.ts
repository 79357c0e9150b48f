import type { Request, Response } from 'express';
import type { ScrapeEndpoint } from '../../metrics/types';

/**
 * The exposition, encoded piece by piece as it is rendered (no string of the whole body), sent
 * with its Content-Length as before: the same bytes and headers as one `res.send(body)`.
 */
export function getMetrics(scrape: ScrapeEndpoint) {
  return async (req: Request, res: Response): Promise<void> => {
    const { contentType, chunks } = await scrape.renderChunks(req.get('accept'));
    if (res.headersSent) return;
    const buffers: Buffer[] = [];
    let length = 0;
    for (const chunk of chunks) {
      const buffer = Buffer.from(chunk, 'utf8');
      buffers.push(buffer);
      length += buffer.length;
    }
    res.status(200).type(contentType).set('Content-Length', String(length));
    if (req.method === 'HEAD') {
      res.end();
      return;
    }
    for (const buffer of buffers) res.write(buffer);
    res.end();
  };
}
