import { oneLine } from '../text';
import { statSync } from 'node:fs';

/**
 * What the container-runtime checkers quote from a runtime (the Docker daemon's message, a CRI
 * condition's reason and message, a gRPC status message) and say about a unix socket path, in
 * one place so that both checkers read alike. A runtime's text goes to /healthz, which answers
 * without a client certificate, and to the log: it is cut to `maxQuotedLength` characters.
 */

/** Characters of a runtime's own text kept in a reason. */
const maxQuotedLength = 200;

/** The text on one line, white space collapsed, at most `maxQuotedLength` characters (src/text.ts marks a cut). */
export function excerpt(text: string): string {
  return oneLine(text, maxQuotedLength);
}

/** Why a connect to a unix socket path was refused: nothing listens on a socket, or it is no socket at all. */
export function describeRefusedSocket(socketPath: string): string {
  return isSocket(socketPath) ? `connection refused on socket ${socketPath} (nothing listens on it)` : `${socketPath} is not a socket`;
}

/** Whether a Unix socket is at the path (following links); false when nothing or something else is there. */
export function isSocket(socketPath: string): boolean {
  try {
    return statSync(socketPath).isSocket();
  } catch {
    return false;
  }
}
