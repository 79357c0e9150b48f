import net from 'node:net';
import tls from 'node:tls';

/** One HTTP/1.1 response as it came off the wire. */
export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
  /** The body parsed as JSON, or undefined. */
  json: unknown;
}

export interface RawExchange {
  /** Everything the server sent until it closed the connection (or the client gave up). */
  received: string;
  /** Every response found in `received`, in order. */
  responses: RawResponse[];
  /** Milliseconds from connect until the server closed the connection. */
  closedAfterMs: number;
  /** Bytes the client managed to write. */
  bytesWritten: number;
  /** Set when the client gave up before the server closed. */
  gaveUp: boolean;
}

export interface RawOptions {
  /** Text or bytes written at once after connecting. */
  send?: string | Buffer;
  /** Called once connected, to keep writing (returns when done). */
  feed?: (socket: net.Socket) => Promise<void> | void;
  /** The client closes the connection itself after this long; default 20 s. */
  giveUpMs?: number;
  /** TLS with this server CA, and a client certificate when cert and key are given. */
  tls?: { ca?: string; cert?: string; key?: string };
}

/** Splits a byte stream of HTTP/1.1 responses with Content-Length bodies (what this server sends). */
export function parseResponses(text: string): RawResponse[] {
  const responses: RawResponse[] = [];
  let rest = text;
  while (rest.startsWith('HTTP/1.')) {
    const headEnd = rest.indexOf('\r\n\r\n');
    if (headEnd < 0) break;
    const lines = rest.slice(0, headEnd).split('\r\n');
    const status = Number(lines[0]?.split(' ')[1]);
    const headers: Record<string, string> = {};
    for (const line of lines.slice(1)) {
      const colon = line.indexOf(':');
      headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
    }
    const length = Number(headers['content-length'] ?? 0);
    const body = rest.slice(headEnd + 4, headEnd + 4 + length);
    let json: unknown;
    try {
      json = JSON.parse(body);
    } catch {
      json = undefined;
    }
    responses.push({ status, headers, body, json });
    rest = rest.slice(headEnd + 4 + length);
  }
  return responses;
}

/** Talks raw HTTP to a server over TCP (or TLS) and reports what came back and when it closed. */
export function rawExchange(port: number, options: RawOptions = {}): Promise<RawExchange> {
  return new Promise((resolve) => {
    const started = Date.now();
    let received = '';
    let gaveUp = false;
    const onConnect = (): void => {
      if (options.send !== undefined) socket.write(options.send);
      if (options.feed) void Promise.resolve(options.feed(socket)).catch(() => undefined);
    };
    const socket: net.Socket = options.tls
      ? tls.connect({ port, host: '127.0.0.1', ca: options.tls.ca, cert: options.tls.cert, key: options.tls.key, servername: 'localhost' }, onConnect)
      : net.connect(port, '127.0.0.1', onConnect);
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => (received += chunk));
    socket.on('error', () => undefined);
    const timer = setTimeout(() => {
      gaveUp = true;
      socket.destroy();
    }, options.giveUpMs ?? 20_000);
    socket.on('close', () => {
      clearTimeout(timer);
      resolve({
        received,
        responses: parseResponses(received),
        closedAfterMs: Date.now() - started,
        bytesWritten: socket.bytesWritten,
        gaveUp,
      });
    });
  });
}

/** Writes `chunk` as fast as the socket takes it, until the socket closes or `maxBytes` were written. */
export async function writeUntilClosed(socket: net.Socket, chunk: Buffer, maxBytes: number): Promise<void> {
  let written = 0;
  while (!socket.destroyed && socket.writable && written < maxBytes) {
    written += chunk.length;
    if (!socket.write(chunk)) {
      await new Promise<void>((resolve) => {
        const done = (): void => {
          socket.off('drain', done);
          socket.off('close', done);
          resolve();
        };
        socket.once('drain', done);
        socket.once('close', done);
      });
    }
  }
}

/** Opens a connection that sends nothing; resolves with how long until the server closed it. */
export function silentConnection(port: number, giveUpMs: number): Promise<{ closedAfterMs: number; gaveUp: boolean }> {
  return rawExchange(port, { giveUpMs }).then(({ closedAfterMs, gaveUp }) => ({ closedAfterMs, gaveUp }));
}
