import type { Socket } from 'node:net';

/**
 * The Node.js internals the server still touches, all in this file: properties Node's own http
 * and tls modules set and read (lib/_http_server.js, lib/_tls_wrap.js; Node 24), for which Node
 * has no public API. Each function says which and why.
 */

/** A connection of Node's HTTP server, with the two properties lib/_http_server.js keeps on it. */
type HttpConnection = Socket & {
  /** Node's "stop reading" flag: onParserExecuteCommon pauses `parser` after the bytes in hand while it is set. */
  _paused?: boolean;
  /** The connection's HTTPParser; null once Node has freed it. */
  parser?: { pause(): void; resume(): void } | null;
};

/**
 * Stops reading requests from an HTTP connection, as Node does itself when answers pile up unread
 * (parserOnIncoming). `socket.pause()` alone does not do it: over plain TCP the parser reads the
 * socket's handle directly and keeps emitting the requests it finds. Setting `socket._paused`
 * makes Node pause the parser after the bytes it has in hand (onParserExecuteCommon).
 */
export function stopReading(socket: Socket): void {
  const connection = socket as HttpConnection;
  if (connection._paused === true) return;
  connection._paused = true;
  connection.pause();
}

/**
 * Reads from an HTTP connection again: what Node's socketOnDrain does when answers no longer pile
 * up (clear `_paused`, resume `parser`, resume the socket). Nothing when the flag is not set
 * (the connection is being read) or the connection is gone.
 */
export function resumeReading(socket: Socket): void {
  const connection = socket as HttpConnection;
  if (connection._paused !== true || connection.destroyed) return;
  connection._paused = false;
  connection.parser?.resume();
  connection.resume();
}

/**
 * The TCP socket under a server-side TLS socket: `_parent`, which lib/_tls_wrap.js sets when it
 * wraps a net.Socket. The server's 'connection' event, and so the connection cap, sees the TCP
 * socket; requests, 'secureConnection' and 'tlsClientError' see the TLS one; nothing public leads
 * from the one to the other. Undefined for a plain socket.
 */
export function tcpSocketUnder(socket: Socket): Socket | undefined {
  return (socket as Socket & { _parent?: Socket | null })._parent ?? undefined;
}
