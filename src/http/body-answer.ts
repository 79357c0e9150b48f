import { clip } from '../text';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { readTextBody } from './body';
import { sendError } from './errors';

/**
 * The request body as text, or null once the request has been answered: 413 over `maxBodyBytes`,
 * 415 for a Content-Encoding (with `Accept-Encoding: identity`), 400 for bytes that are not UTF-8,
 * nothing when the client went away or the request was answered meanwhile. Every handler that
 * takes a body (PUT /logspec, /fleet/logspec) reads it through here.
 */
export async function readBodyOrAnswer(req: IncomingMessage, res: ServerResponse, maxBodyBytes: number): Promise<string | null> {
  const body = await readTextBody(req, res, maxBodyBytes);
  if (res.headersSent) return null;
  switch (body.kind) {
    case 'aborted':
      return null;
    case 'tooLarge':
      sendError(res, 413, `request body is larger than ${maxBodyBytes} bytes`);
      return null;
    case 'encoded': {
      const encoding = clip(body.contentEncoding, 40);
      res.setHeader('Accept-Encoding', 'identity');
      sendError(res, 415, `Content-Encoding ${JSON.stringify(encoding)} is not supported; send the body uncompressed`);
      return null;
    }
    case 'notUtf8':
      sendError(res, 400, 'request body is not valid UTF-8');
      return null;
    case 'text':
      return body.text;
  }
}
