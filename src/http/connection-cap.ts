import type http from 'node:http';
import type { ServerResponse } from 'node:http';
import type https from 'node:https';
import { isIPv4, isIPv6, type Socket } from 'node:net';
import { sendBareError } from './errors';

/**
 * The connection cap (operations.maxConnections) and what makes room under it.
 *
 * Node's own maxConnections refuses the newcomer: one client holding every slot would then shut
 * out every probe. Here, when all slots are taken, the newcomer closes the oldest connection that
 * holds a slot without using it:
 * - one with no request in progress (silent, TLS handshake or headers still arriving, idle
 *   keep-alive), closed without an answer;
 * - one whose request is still waiting for its body (headers read, body not in), answered 408 and
 *   closed, as the read timeout would later.
 * Only when every connection has a request read in full and not yet answered is the newcomer
 * refused (closed at once, counted). Oldest first: a newcomer (a probe whose request is still on
 * its way) is the last to go.
 *
 * One client address (an IPv6 client's /64) may hold at most maxConnections less a reserve of one
 * sixteenth of it: a newcomer from an address that holds its share makes room among that
 * address's own connections, or is refused. Whatever state its connections are in, a single
 * address cannot take the reserve, kept for everyone else (the kubelet's probes, Prometheus).
 */

/** What a connection is doing, as the cap sees it. */
export type Activity =
  /** No request in progress: silent, handshaking, headers arriving, idle between requests (or closing). */
  | { kind: 'idle' }
  /** A request whose headers are read and whose body is still arriving; `res` is its unsent answer. */
  | { kind: 'body'; res: ServerResponse }
  /** A request read in full whose answer is not finished. */
  | { kind: 'answering' };

export interface CapLimits {
  /** Connections open at once. */
  maxConnections: number;
  /** A connection that sends no byte within this is closed. */
  firstByteTimeoutMs: number;
}

/** A sixteenth of the cap is kept from any single client address (none under a cap of 16). */
const reserveDivisor = 16;

/** The most connections one client address may hold under a cap of `maxConnections`. */
export function shareOfOneAddress(maxConnections: number): number {
  return maxConnections - Math.floor(maxConnections / reserveDivisor);
}

/**
 * The client a connection counts against: its IPv4 address (an IPv4-mapped IPv6 one as IPv4), or
 * the /64 of its IPv6 address (one host usually holds a whole /64).
 */
export function clientOf(remoteAddress: string | undefined): string {
  if (remoteAddress === undefined) return 'unknown';
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(remoteAddress);
  if (mapped?.[1] !== undefined) return mapped[1];
  if (isIPv4(remoteAddress) || !isIPv6(remoteAddress)) return remoteAddress;
  // Written out in eight groups: a dotted IPv4 tail is two, '::' stands for the zero groups left.
  const address = (remoteAddress.split('%')[0] ?? '').replace(/(\d+)\.(\d+)\.(\d+)\.(\d+)$/, (_match, a: string, b: string, c: string, d: string) =>
    [(Number(a) << 8) | Number(b), (Number(c) << 8) | Number(d)].map((group) => group.toString(16)).join(':'),
  );
  const [head = '', tail = ''] = address.split('::');
  const headGroups = head === '' ? [] : head.split(':');
  const tailGroups = tail === '' ? [] : tail.split(':');
  const groups = address.includes('::') ? [...headGroups, ...Array<string>(8 - headGroups.length - tailGroups.length).fill('0'), ...tailGroups] : headGroups;
  return `${groups
    .slice(0, 4)
    .map((group) => Number.parseInt(group, 16).toString(16))
    .join(':')}::/64`;
}

/** Says why a connection whose body had not arrived was closed to make room. */
const bodyEvictedMessage = 'the request body had not arrived when every connection (maxConnections) was taken';

/** Answers 408 on a connection whose request body is still arriving, then closes it. */
function closeWaitingForBody(raw: Socket, res: ServerResponse): void {
  if (res.headersSent || !res.writable) {
    raw.destroy();
    return;
  }
  // sendBareError says Connection: close; Node then ends the connection once the answer is out.
  const timer = setTimeout(() => raw.destroy(), 1000).unref();
  res.once('close', () => clearTimeout(timer));
  sendBareError(res, 408, bodyEvictedMessage);
}

export function capConnections(server: http.Server | https.Server, limits: CapLimits, onRefused: () => void, activityOf: (raw: Socket) => Activity): void {
  const share = shareOfOneAddress(limits.maxConnections);
  /** Open connections, oldest first, each with its client. */
  const accepted = new Map<Socket, string>();
  /** Connections held per client. */
  const held = new Map<string, number>();

  const release = (raw: Socket): void => {
    const client = accepted.get(raw);
    if (client === undefined) return;
    accepted.delete(raw);
    const count = (held.get(client) ?? 1) - 1;
    if (count === 0) held.delete(client);
    else held.set(client, count);
  };

  /** Closes the oldest connection that can make room (of `client` only, when given); false when none can. */
  const makeRoom = (client: string | null): boolean => {
    for (const [raw, owner] of accepted) {
      if (client !== null && owner !== client) continue;
      const activity = raw.destroyed ? ({ kind: 'idle' } as const) : activityOf(raw);
      if (activity.kind === 'answering') continue;
      release(raw);
      if (activity.kind === 'body') closeWaitingForBody(raw, activity.res);
      else raw.destroy();
      return true;
    }
    return false;
  };

  server.on('connection', (raw: Socket) => {
    const client = clientOf(raw.remoteAddress);
    const room = (held.get(client) ?? 0) >= share ? makeRoom(client) : accepted.size < limits.maxConnections || makeRoom(null);
    if (!room) {
      raw.destroy();
      onRefused();
      return;
    }
    accepted.set(raw, client);
    held.set(client, (held.get(client) ?? 0) + 1);
    const silent = setTimeout(() => {
      if (raw.bytesRead === 0) raw.destroy();
    }, limits.firstByteTimeoutMs).unref();
    raw.once('close', () => {
      clearTimeout(silent);
      release(raw);
    });
  });
}
