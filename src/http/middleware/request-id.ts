import { randomUUID } from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';

const acceptableId = /^[\x21-\x7e]{1,200}$/;

/** Echoes a sane client `X-Request-Id`, or sets a new UUID v4, on every response. */
export function requestId(req: Request, res: Response, next: NextFunction): void {
  const given = req.get('x-request-id');
  const id = given !== undefined && acceptableId.test(given) ? given : randomUUID();
  res.locals.requestId = id;
  res.setHeader('X-Request-Id', id);
  next();
}
