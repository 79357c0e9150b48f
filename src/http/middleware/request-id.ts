import type { IncomingMessage, ServerResponse } from 'node:http';
import { requestIdFor } from '../errors';

/** Echoes a sane client `X-Request-Id`, or sets a new UUID v4, on every response. */
export function requestId(req: IncomingMessage, res: ServerResponse): void {
  res.setHeader('X-Request-Id', requestIdFor(req.headers['x-request-id']));
}
