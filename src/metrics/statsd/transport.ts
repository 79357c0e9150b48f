import type { Packet } from './packer';

export type Reachability = { reachable: true } | { reachable: false; reason: string };

/** A connection made (every time, the first included), or an established one lost. */
export type ConnectionChange = { connected: true } | { connected: false; reason: string };

/** Where flushed packets go. Implementations never throw and never queue without bound. */
export interface StatsdTransport {
  /** `udp 127.0.0.1:8125`, for messages. */
  readonly description: string;
  readonly maxPacketBytes: number;
  /** Never rejects; resolves once it is known whether the daemon answers (bounded by a timeout). */
  open(): Promise<Reachability>;
  /**
   * Hands a packet to the socket. `done` is called exactly once: with an error when the
   * packet was dropped (at once when it cannot be sent now), with null once written.
   */
  send(packet: Packet, done: (error: Error | null) => void): void;
  /** Bytes handed to the socket and not yet written. */
  readonly pendingBytes: number;
  /** udp: open; tcp: connected now. */
  readonly connected: boolean;
  /** Waits (bounded) for pending writes, then closes. */
  close(): Promise<void>;
}
