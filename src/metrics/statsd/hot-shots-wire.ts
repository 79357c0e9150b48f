/**
 * hot-shots as the wire: it owns the socket (UDP datagrams with DNS caching, or a TCP
 * stream with newline framing) and routes socket errors to our handler. We give it whole
 * packets already aggregated and packed, through its `send(message, tags, callback)`,
 * the method every one of its stat functions ends in.
 *
 * Why not its stat functions (`increment`, `gauge`, `timing`) and its own buffering:
 * - a sample rate below 1 makes hot-shots drop the stat at random, so a reservoir sample
 *   sent with `|@rate` would be sampled twice;
 * - its buffer is flushed by a timer of its own, so a flush could not end in a known
 *   packet boundary, and a negative gauge (`:0|g` then `:-5|g`) could be split;
 * - its callbacks report enqueueing, not sending, so drops could not be counted.
 * Why we supervise TCP ourselves (tcp-transport.ts): hot-shots recreates a TCP socket only
 * when an error's `code` is one of its numeric errno values, but Node's codes are strings
 * ('ECONNREFUSED'), so it never reconnects; it has no backoff; and while a socket is
 * connecting or stalled, Node buffers every write in memory without bound.
 */
import { StatsD } from 'hot-shots';

/** The parts of a hot-shots client used here that its type declarations leave out. */
interface HotShotsClient {
  socket: WireSocket | null | undefined;
  send(message: string, tags: undefined, callback: (error?: Error | null) => void): void;
  close(callback?: (error?: Error) => void): void;
}

/** hot-shots' transport object: the socket's `on`, and `close` (destroy for TCP). */
interface WireSocket {
  on(event: string, listener: (...args: unknown[]) => void): void;
  close(): void;
}

export interface HotShotsWireOptions {
  protocol: 'udp' | 'tcp';
  host: string;
  port: number;
  /** udp6 for an IPv6 address. */
  ipv6: boolean;
  onError: (error: Error) => void;
}

export class HotShotsWire {
  private readonly client: HotShotsClient;

  constructor(options: HotShotsWireOptions) {
    const statsd = new StatsD({
      protocol: options.protocol,
      host: options.host,
      port: options.port,
      maxBufferSize: 0,
      cacheDns: options.protocol === 'udp',
      includeDataDogTags: false,
      tcpGracefulErrorHandling: false,
      closingFlushInterval: 10,
      udpSocketOptions: { type: options.ipv6 ? 'udp6' : 'udp4' },
      errorHandler: options.onError,
    });
    this.client = statsd as unknown as HotShotsClient;
    if (!this.client.socket) throw new Error(`hot-shots could not create a ${options.protocol} socket`);
  }

  on(event: 'connect' | 'close', listener: () => void): void {
    this.client.socket?.on(event, () => listener());
  }

  send(payload: string, done: (error: Error | null) => void): void {
    try {
      this.client.send(payload, undefined, (error) => done(error ?? null));
    } catch (error) {
      done(error instanceof Error ? error : new Error(String(error)));
    }
  }

  /** Closes the socket at once (TCP: destroy). */
  destroy(): void {
    try {
      this.client.socket?.close();
    } catch {
      // already closed
    }
  }

  /** hot-shots' own close: waits for its messages in flight, then closes. */
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
