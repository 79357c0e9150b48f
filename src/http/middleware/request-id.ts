import type { NextFunction, Request, Response } from 'express';
import { requestIdFor } from '../errors';

/** Echoes a sane client `X-Request-Id`, or sets a new UUID v4, on every response. */
export function requestId(req: Request, res: Response, next: NextFunction): void {
  const id = requestIdFor(req.get('x-request-id'));
  res.locals.requestId = id;
  res.setHeader('X-Request-Id', id);
  next();
}
