import type http from 'node:http';
import type https from 'node:https';
import { BoundSocket, isIP, type AddressInfo } from 'node:net';
import type { HostPort } from '../config/types';
import { ListenError } from '../errors';

/** `host:port`, an IPv6 host in brackets. */
function formatHostPort(host: string, port: number): string {
  return host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
}

function describeListenError(address: string, err: NodeJS.ErrnoException): string {
  switch (err.code) {
    case 'EADDRINUSE':
      return `cannot listen on ${address}: address already in use`;
    case 'EACCES':
      return `cannot listen on ${address}: permission denied`;
    case 'EADDRNOTAVAIL':
      return `cannot listen on ${address}: address not available on this machine`;
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return `cannot listen on ${address}: host not found`;
    default:
      return `cannot listen on ${address}: ${err.message}`;
  }
}

/**
 * Binds the address; a failure is a ListenError naming it and why. An IP address is bound first
 * with net.BoundSocket (Node >= 24.19) and the server listens on that socket: `listen(port, host)`
 * looks the host up even when it is an address and then tests every answer against Node's IPv6
 * pattern, about 3 ms of every start (compiling that pattern, and loading node:dns) for nothing
 * (issue 20). A host name, the empty host (every address, dual-stack) and older Node.js listen
 * as before.
 */
export async function listenOn(server: http.Server | https.Server, listen: HostPort): Promise<void> {
  const wanted = formatHostPort(listen.host === '' ? '0.0.0.0' : listen.host, listen.port);
  await new Promise<void>((resolve, reject) => {
    const onError = (err: NodeJS.ErrnoException): void => reject(new ListenError(wanted, describeListenError(wanted, err)));
    const ready = (): void => {
      server.off('error', onError);
      resolve();
    };
    if (listen.host !== '' && typeof BoundSocket === 'function' && isIP(listen.host) !== 0) {
      let bound: BoundSocket;
      try {
        bound = new BoundSocket({ host: listen.host, port: listen.port });
      } catch (err) {
        onError(err as NodeJS.ErrnoException);
        return;
      }
      server.once('error', onError);
      server.listen(bound, ready);
      return;
    }
    server.once('error', onError);
    if (listen.host === '') server.listen(listen.port, ready);
    else server.listen(listen.port, listen.host, ready);
  });
}

/** Where a listening server is bound (the port the system chose for port 0), and its URL. */
export function boundAddress(server: http.Server | https.Server, scheme: 'http' | 'https'): { address: HostPort; url: string } {
  const bound = server.address() as AddressInfo;
  return { address: { host: bound.address, port: bound.port }, url: `${scheme}://${formatHostPort(bound.address, bound.port)}` };
}
