import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ScrapeEndpoint } from '../../metrics/types';

/**
 * The exposition, encoded piece by piece as it is rendered (no string of the whole body), sent
 * with its Content-Length as before: the same bytes and headers as one `res.send(body)`.
 */
export function getMetrics(scrape: ScrapeEndpoint) {
  return async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const { contentType, chunks } = await scrape.renderChunks(req.headers.accept);
    if (res.headersSent) return;
    const buffers: Buffer[] = [];
    let length = 0;
    for (const chunk of chunks) {
      const buffer = Buffer.from(chunk, 'utf8');
      buffers.push(buffer);
      length += buffer.length;
    }
    res.statusCode = 200;
    res.setHeader('Content-Type', contentType);
    res.setHeader('Content-Length', String(length));
    if (req.method === 'HEAD') {
      res.end();
      return;
    }
    for (const buffer of buffers) res.write(buffer);
    res.end();
  };
}
