import type { IncomingMessage, ServerResponse } from 'node:http';

export type BodyResult =
  | { kind: 'text'; text: string }
  | { kind: 'tooLarge' }
  | { kind: 'encoded'; contentEncoding: string }
  | { kind: 'notUtf8' }
  /** The client went away, or the request was answered meanwhile (stop, timeout). */
  | { kind: 'aborted' };

/**
 * The Content-Encoding header when it names anything but identity. Bodies are never decoded
 * (Fabric does not decode either): a compressed body is refused, not inflated.
 */
function unsupportedContentEncoding(req: IncomingMessage): string | null {
  const header = req.headers['content-encoding'];
  if (header === undefined) return null;
  const codings = header
    .split(',')
    .map((coding) => coding.trim().toLowerCase())
    .filter((coding) => coding !== '');
  return codings.every((coding) => coding === 'identity') ? null : header;
}

/**
 * Reads a request body as UTF-8 text, at most `limitBytes`. Unlike body-parser, it stops at
 * the limit instead of reading the rest of the request first: a Content-Length over the limit
 * is refused before a byte is read, a chunked body as soon as it passes the limit.
 */
export function readTextBody(req: IncomingMessage, res: ServerResponse, limitBytes: number): Promise<BodyResult> {
  const contentEncoding = unsupportedContentEncoding(req);
  if (contentEncoding !== null) return Promise.resolve({ kind: 'encoded', contentEncoding });
  const declared = req.headers['content-length'];
  if (declared !== undefined && Number(declared) > limitBytes) return Promise.resolve({ kind: 'tooLarge' });
  // The server sends 100 Continue only when the body is really wanted (as Go's server does).
  if (req.headers.expect?.toLowerCase() === '100-continue' && !res.headersSent) res.writeContinue();

  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    const settle = (result: BodyResult): void => {
      if (settled) return;
      settled = true;
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onClose);
      req.off('close', onClose);
      resolve(result);
    };
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size > limitBytes) {
        req.pause();
        settle({ kind: 'tooLarge' });
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = (): void => {
      try {
        settle({ kind: 'text', text: new TextDecoder('utf-8', { fatal: true }).decode(Buffer.concat(chunks)) });
      } catch {
        settle({ kind: 'notUtf8' });
      }
    };
    const onClose = (): void => settle({ kind: 'aborted' });
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onClose);
    req.on('close', onClose);
  });
}
