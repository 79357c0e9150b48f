import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { OperationsDomain } from '../domain';
import { sendJson } from '../json';

export function getHealth(domain: OperationsDomain) {
  const connectionGone = connectionSignals();
  return async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const gone = connectionGone(req.socket);
    const report = await domain.checkHealth(gone);
    // Answered meanwhile (the response-time limit, or a stop's grace ran out), or nobody left to answer.
    if (gone.aborted || res.headersSent) return;
    sendJson(res, report.status === 'OK' ? 200 : 503, report);
  };
}

/**
 * For each connection, a signal that aborts when it closes: the one way a health answer is
 * abandoned, as a connection's requests run one at a time (request-order.ts) and the response-time
 * limit or a stop answers the request itself (the handler then finds the answer written). One
 * signal per connection, made at its first /healthz, instead of an AbortController and a 'close'
 * listener per request (the handler's largest cost on a keep-alive /healthz; issue 32).
 */
function connectionSignals(): (socket: Socket) => AbortSignal {
  const signals = new WeakMap<Socket, AbortSignal>();
  return (socket) => {
    let signal = signals.get(socket);
    if (signal === undefined) {
      const controller = new AbortController();
      signal = controller.signal;
      signals.set(socket, signal);
      if (socket.destroyed) controller.abort();
      else socket.once('close', () => controller.abort());
    }
    return signal;
  };
}
