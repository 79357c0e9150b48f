import type { Response } from 'express';

/** Every error response of the operations API: `{"error": "<message>"}`. */
export function sendError(res: Response, status: number, message: string): void {
  res.status(status).json({ error: message });
}
