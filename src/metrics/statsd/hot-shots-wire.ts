/**
 * hot-shots as the StatsD wire: what fabric-ops uses of it, and what it owns itself because
 * hot-shots' published API cannot do it (issue 32 item 7). "Published" means hot-shots' README
 * (the constructor options under "Usage", the StatsD methods, "Errors") and its type
 * declarations (types.d.ts: `ClientOptions`, `class StatsD`).
 *
 * Used as published, typed by hot-shots' own declarations:
 * - `new StatsD({ protocol: 'udp', host, port, cacheDns, udpSocketOptions, maxBufferSize: 0,
 *   includeDataDogTags: false, errorHandler })`: hot-shots creates and owns the UDP socket (the
 *   DNS lookup cached), and routes errors "in socket setup, sending of messages, and closing of
 *   the socket" (README, Errors) to `errorHandler`: a socket that cannot be created is seen
 *   there, during the constructor.
 * - `new StatsD({ protocol: 'stream', stream })` for TCP: hot-shots writes to a socket that
 *   fabric-ops opens and owns (below).
 * - `close(callback)`; and on every call a callback, which takes precedence over errorHandler
 *   (README, Errors), so no error of ours is thrown or printed by hot-shots.
 * - `maxBufferSize: 0` (hot-shots' default but for uds): no buffering, no timer of its own.
 *
 * What the published API cannot do, and what fabric-ops does instead:
 * 1. Hand over a pre-packed payload. Every documented sending method (`increment` ... `unique`,
 *    `event`, `check`) formats one line of its own, `prefix name suffix:value|type[|@rate][|#tags]`;
 *    none takes a line as it is, nor several. fabric-ops must send packets it aggregated and packed
 *    (aggregator.ts, packer.ts), because:
 *    - a sample rate below 1 makes hot-shots drop the stat at random, so a reservoir sample sent
 *      with `|@rate` would be sampled twice;
 *    - hot-shots' buffer is flushed by a timer of its own, so a flush could not end on a known
 *      packet boundary, and a negative gauge (`:0|g` then `:-5|g`) could be split;
 *    - with its buffer, callbacks report enqueueing, not sending, so drops could not be counted.
 *    So one undocumented member is used: `send(message, tags, callback)`, the method every stat
 *    function ends in (README and types.d.ts leave it out). It is behind `HotShotsSend` below,
 *    checked when a wire is made (a hot-shots without it fails there, with a message naming it),
 *    and nothing else undocumented is touched.
 * 2. Supervise a TCP connection. hot-shots' `tcp` protocol would recreate its socket only when an
 *    error's `code` is one of its numeric errno values, but Node's codes are strings
 *    ('ECONNREFUSED'), so it never reconnects (and were that fixed, it would swap the socket under
 *    whoever watches it); it has no backoff; while a socket is connecting or
 *    stalled Node buffers every write in memory without bound; and it publishes no way to learn
 *    that the connection was made or lost (`client.socket` is typed as a dgram.Socket, but is an
 *    internal wrapper whose events are not documented). So fabric-ops owns the TCP socket: it
 *    opens it here (keep-alive and unref, as hot-shots' own TCP transport does), listens to its
 *    connect, close and error events, destroys it, and hands it to hot-shots through the
 *    published `stream` protocol; tcp-transport.ts connects again with backoff and caps what is
 *    pending. hot-shots' stream transport writes each message with a '\n' appended, as its TCP one
 *    does, but as UTF-8 (its TCP transport wrote 'ascii', which mangles any non-ASCII character
 *    and disagrees with the byte counts in packer.ts and pending-writes.ts).
 *
 * test/integration/metrics/statsd-hot-shots-contract.test.ts runs the installed hot-shots and
 * fails when what is relied on here is gone or behaves otherwise: `send` present and sending its
 * message byte for byte (UDP: one datagram; stream: with '\n'), calling back after the socket
 * wrote it and with the socket's error when it failed, `errorHandler` getting the UDP socket's
 * setup and socket errors, and `close(callback)` ending the stream it was given.
 */
import net, { type Socket } from 'node:net';
import { StatsD } from 'hot-shots';

/**
 * The one member of a hot-shots client used here that hot-shots does not publish:
 * `send(message, tags, callback)` (lib/statsd.js), which `sendStat` calls with the line it built.
 * With no tags, no `globalTags` and `includeDataDogTags: false`, it adds nothing to the message;
 * with `maxBufferSize: 0` it hands the message to the socket at once (UDP: one datagram; stream:
 * one write, '\n' appended) and calls back once the socket has sent it, with an error if that
 * failed (hot-shots prefixes "Error sending hot-shots message: ").
 */
interface HotShotsSend {
  send(message: string, tags: undefined, callback: (error?: Error | null) => void): void;
}

function hasSend(client: StatsD & Partial<HotShotsSend>): client is StatsD & HotShotsSend {
  return typeof client.send === 'function';
}

/** The client with its undocumented `send`; throws when the installed hot-shots has none. */
function withSend(client: StatsD): StatsD & HotShotsSend {
  if (!hasSend(client)) {
    throw new Error('the installed hot-shots has no send(message, tags, callback), which the StatsD wire needs (src/metrics/statsd/hot-shots-wire.ts)');
  }
  return client;
}

/** Options every wire gives hot-shots: no buffering, tags or sampling of its own. */
const plainClient = { maxBufferSize: 0, includeDataDogTags: false, closingFlushInterval: 10 } as const;

function sendThrough(client: HotShotsSend, payload: string, done: (error: Error | null) => void): void {
  try {
    client.send(payload, undefined, (error) => done(error ?? null));
  } catch (error) {
    done(error instanceof Error ? error : new Error(String(error)));
  }
}

export interface UdpWireOptions {
  host: string;
  port: number;
  /** udp6 for an IPv6 address. */
  ipv6: boolean;
  /** Errors of the socket itself (a send's error goes to its callback). */
  onError: (error: Error) => void;
}

/** A UDP socket owned by hot-shots: one datagram per payload. */
export class UdpWire {
  private readonly client: StatsD & HotShotsSend;

  constructor(options: UdpWireOptions) {
    let settingUp = true;
    let setupError: Error | undefined;
    const client = new StatsD({
      ...plainClient,
      protocol: 'udp',
      host: options.host,
      port: options.port,
      cacheDns: true,
      udpSocketOptions: { type: options.ipv6 ? 'udp6' : 'udp4' },
      errorHandler: (error) => {
        if (settingUp) setupError ??= error;
        else options.onError(error);
      },
    });
    settingUp = false;
    if (setupError) throw new Error(`hot-shots could not create a udp socket: ${setupError.message}`);
    this.client = withSend(client);
  }

  send(payload: string, done: (error: Error | null) => void): void {
    sendThrough(this.client, payload, done);
  }

  /** hot-shots' own close: waits for its messages in flight, then closes the socket. */
  close(): Promise<void> {
    return new Promise((resolve) => {
      try {
        this.client.close(() => resolve());
      } catch {
        resolve();
      }
    });
  }
}

export interface TcpWireOptions {
  host: string;
  port: number;
  /** Errors of the connection (refused, reset, ...); its close follows. */
  onError: (error: Error) => void;
}

/** A TCP connection owned here, written to by hot-shots: one newline-terminated write per payload. */
export class TcpWire {
  private readonly socket: Socket;
  private readonly client: StatsD & HotShotsSend;

  constructor(options: TcpWireOptions) {
    const socket = net.connect({ host: options.host, port: options.port });
    // Listened to at once: a socket's 'error' without a listener would end the process.
    socket.on('error', options.onError);
    socket.setKeepAlive(true);
    // A connection to the daemon never keeps the process alive.
    socket.unref();
    try {
      this.client = withSend(new StatsD({ ...plainClient, protocol: 'stream', stream: socket }));
    } catch (error) {
      socket.destroy();
      throw error;
    }
    this.socket = socket;
  }

  on(event: 'connect' | 'close', listener: () => void): void {
    this.socket.on(event, () => listener());
  }

  send(payload: string, done: (error: Error | null) => void): void {
    sendThrough(this.client, payload, done);
  }

  /** Closes the connection at once, dropping what the kernel has not sent. */
  destroy(): void {
    this.socket.destroy();
  }

  /**
   * hot-shots' own close (it waits for its messages in flight, then destroys the stream).
   * Resolves once the socket has closed, also when the daemon closed it first.
   */
  close(): Promise<void> {
    const socket = this.socket;
    if (socket.closed) return Promise.resolve();
    return new Promise((resolve) => {
      socket.once('close', () => resolve());
      try {
        // Destroyed here too, so that no error of hot-shots' close leaves the connection open.
        this.client.close(() => socket.destroy());
      } catch {
        socket.destroy();
      }
    });
  }
}
