import http, { type IncomingMessage, type RequestListener } from 'node:http';
import type { Duplex } from 'node:stream';
import { rawErrorResponse, sendBareError } from './errors';
import { requestIdFor } from './request-ids';
import { seconds } from './limits';

/**
 * The answers written below the router, as Go's server writes them itself: to what Node's parser
 * refuses, a bad Host, a transfer coding but chunked, an Expect but 100-continue, CONNECT.
 */

/**
 * Where the answers written on a bare socket are counted (the requests metric); those written on a
 * request's response (Host, transfer coding, Expect) are counted with every other answer, by the
 * request order (request-order.ts).
 */
export interface BareAnswerEvents {
  onBareAnswer(statusCode: number): void;
}

/** An error answer to a request the parser refused. */
export interface BareAnswer {
  status: number;
  message: string;
}

/**
 * Node's parser refuses more than this many header fields (Host included) with the same error
 * as headers over http.maxHeaderSize bytes (measured with Node 24: 1,000 fields of 5 bytes pass,
 * 1,001 do not).
 */
const maxHeaderFields = 1000;

/**
 * Which of the two header limits a HPE_HEADER_OVERFLOW met: fewer bytes received for the request
 * than the size limit, or as many lines as the field limit in the bytes the parser had in hand,
 * mean the count; anything else the size.
 */
function headerOverflowMessage(err: NodeJS.ErrnoException & { rawPacket?: unknown }, bytesOfRequest: number): string {
  let lines = 0;
  if (Buffer.isBuffer(err.rawPacket)) {
    for (let index = err.rawPacket.indexOf(10); index >= 0; index = err.rawPacket.indexOf(10, index + 1)) lines += 1;
  }
  if (bytesOfRequest <= http.maxHeaderSize || lines >= maxHeaderFields) return `request has more than ${maxHeaderFields} header fields`;
  return `request headers are larger than ${http.maxHeaderSize} bytes`;
}

/** What the HTTP parser's errors are answered with (Node writes them without a body). */
export function parserErrorAnswer(err: NodeJS.ErrnoException, readTimeoutMs: number, bytesOfRequest: number): BareAnswer | null {
  switch (err.code) {
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return { status: 408, message: `request headers and body must arrive within ${seconds(readTimeoutMs)}` };
    case 'HPE_HEADER_OVERFLOW':
      return { status: 431, message: headerOverflowMessage(err, bytesOfRequest) };
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return { status: 413, message: 'request chunk extensions are too large' };
    default:
      if (err.code?.startsWith('HPE_')) return { status: 400, message: `malformed request: ${err.message.replace(/^Parse Error: /, '')}` };
      // Socket errors (ECONNRESET, ...): nobody to answer.
      return null;
  }
}

/** Go's server answers 400 to a request with several Host headers, or none in HTTP/1.1. */
function hostProblem(req: IncomingMessage): string | null {
  let hosts = 0;
  const raw = req.rawHeaders;
  for (let index = 0; index < raw.length; index += 2) {
    const name = raw[index] as string;
    // Lower-cased only when it could be Host: toLowerCase makes a new string of every name it changes.
    if (name.length === 4 && (name === 'Host' || name.toLowerCase() === 'host')) hosts += 1;
  }
  if (hosts > 1) return 'more than one Host header';
  if (hosts === 0 && req.httpVersionMajor === 1 && req.httpVersionMinor >= 1) return 'missing required Host header';
  return null;
}

/** What Go's server answers itself, before the application sees the request: a bad Host, a transfer coding but chunked. */
export function withBareAnswers(app: RequestListener): RequestListener {
  return (req, res) => {
    const problem = hostProblem(req);
    if (problem !== null) {
      sendBareError(res, 400, problem, requestIdFor(req.headers['x-request-id']));
      return;
    }
    const transferEncoding = req.headers['transfer-encoding'];
    if (transferEncoding !== undefined && transferEncoding.trim().toLowerCase() !== 'chunked') {
      // Go's server answers 501 to any transfer coding but chunked alone (Node's parser has
      // already taken the chunked framing off; what is left would be a gzip or other stream).
      sendBareError(
        res,
        501,
        `Transfer-Encoding ${JSON.stringify(transferEncoding.slice(0, 40))} is not supported; only chunked is`,
        requestIdFor(req.headers['x-request-id']),
      );
      return;
    }
    app(req, res);
  };
}

/** Answers 417 to a request whose Expect is anything but 100-continue (Node's 'checkExpectation'). */
export const refuseExpectation: RequestListener = (req, res) => {
  sendBareError(
    res,
    417,
    `Expect: ${JSON.stringify(String(req.headers.expect).slice(0, 40))} is not supported; only 100-continue is`,
    requestIdFor(req.headers['x-request-id']),
  );
};

/** Answers 405 to CONNECT (Node's 'connect', which hands over the bare socket) and closes the connection. */
export function refuseConnect(events: BareAnswerEvents): (req: IncomingMessage, socket: Duplex) => void {
  return (req, socket) => {
    if (answerOnSocket(socket, 405, 'method CONNECT is not supported', requestIdFor(req.headers['x-request-id']))) events.onBareAnswer(405);
  };
}

/** Writes a whole error answer on a socket with no usable response object, then closes it. */
export function answerOnSocket(socket: Duplex, status: number, message: string, requestId?: string): boolean {
  if (!socket.writable) {
    socket.destroy();
    return false;
  }
  const timer = setTimeout(() => socket.destroy(), 1000).unref();
  socket.end(rawErrorResponse(status, message, requestId), () => {
    clearTimeout(timer);
    socket.destroy();
  });
  return true;
}
