import type { Logger } from '../../logging/types';
import type { Cancellable, Scheduler } from '../../time';
import { backoffDelay, defaultBackoff, type BackoffPolicy } from '../../retry';
import { TcpWire } from './hot-shots-wire';
import { tcpWriteBytes, type Packet } from './packer';
import { PendingWrites } from './pending-writes';
import type { ConnectionChange, Reachability, StatsdTransport } from './transport';
import { formatAddress } from './udp-transport';
import { messageOf } from '../../errors';

export interface TcpTransportOptions {
  host: string;
  port: number;
  scheduler: Scheduler;
  logger: Logger;
  backoff?: Partial<BackoffPolicy>;
  /** For backoff jitter; default Math.random. */
  random?: () => number;
  /** A connection attempt that has neither succeeded nor failed by then is abandoned; default 2000 ms. */
  connectTimeoutMs?: number;
  /** Cap on bytes written to the socket and not yet flushed to the kernel; default 1 MiB. */
  maxPendingBytes?: number;
  /** How long close() waits for pending writes; default 1000 ms. */
  closeTimeoutMs?: number;
  /** Told of every connection made and every established one lost (the owner logs them). */
  onConnectionChange?: (change: ConnectionChange) => void;
}

type State = 'idle' | 'connecting' | 'connected' | 'waiting' | 'closed';

/**
 * A TCP connection to the daemon (opened by TcpWire, written through hot-shots: hot-shots-wire.ts
 * says why), supervised: while it is not connected packets are dropped at once (the caller counts
 * them); a lost or refused connection is retried with exponential backoff, for as long as the
 * transport is open. The backoff starts
 * again from its first delay only once a connection has held for the backoff's cap, so a
 * daemon that accepts and at once closes connections is not hammered.
 */
export class TcpTransport implements StatsdTransport {
  readonly description: string;
  readonly maxPacketBytes = tcpWriteBytes;
  private state: State = 'idle';
  private wire: TcpWire | null = null;
  private pending: PendingWrites;
  private failures = 0;
  private lastError = '';
  private everConnected = false;
  private connectedAt = 0;
  private retryTimer: Cancellable | null = null;
  private connectTimer: Cancellable | null = null;
  private firstOutcome: ((reachability: Reachability) => void) | null = null;
  private readonly backoff: BackoffPolicy;
  /** Connections made after the first one. */
  reconnects = 0;

  constructor(private readonly options: TcpTransportOptions) {
    this.description = `tcp ${formatAddress(options.host, options.port)}`;
    this.backoff = { ...defaultBackoff, ...options.backoff };
    this.pending = this.newPendingWrites();
  }

  get pendingBytes(): number {
    return this.pending.bytes;
  }

  get connected(): boolean {
    return this.state === 'connected';
  }

  open(): Promise<Reachability> {
    if (this.state !== 'idle') return Promise.resolve(this.connected ? { reachable: true } : this.unreachable());
    return new Promise((resolve) => {
      this.firstOutcome = resolve;
      this.connect();
    });
  }

  send(packet: Packet, done: (error: Error | null) => void): void {
    const wire = this.wire;
    if (this.state !== 'connected' || !wire) {
      done(new Error(`not connected to ${this.description}${this.lastError ? ` (${this.lastError})` : ''}`));
      return;
    }
    this.pending.write(packet.bytes + 1, (complete) => wire.send(packet.payload, complete), done);
  }

  async close(): Promise<void> {
    if (this.state === 'closed') return;
    const wasConnected = this.state === 'connected';
    this.state = 'closed';
    this.retryTimer?.cancel();
    this.connectTimer?.cancel();
    this.settleFirstOutcome(this.unreachable());
    const wire = this.wire;
    this.wire = null;
    if (!wire) return;
    if (wasConnected) {
      await this.pending.drained(this.options.closeTimeoutMs ?? 1000);
      await wire.close();
    } else {
      wire.destroy();
    }
  }

  private newPendingWrites(): PendingWrites {
    return new PendingWrites(this.options.scheduler, this.options.maxPendingBytes ?? 1024 * 1024);
  }

  private unreachable(): Reachability {
    return { reachable: false, reason: this.lastError || 'not connected' };
  }

  private settleFirstOutcome(reachability: Reachability): void {
    const resolve = this.firstOutcome;
    this.firstOutcome = null;
    resolve?.(reachability);
  }

  private connect(): void {
    this.retryTimer = null;
    if (this.state === 'closed') return;
    this.state = 'connecting';
    let wire: TcpWire;
    try {
      wire = new TcpWire({
        host: this.options.host,
        port: this.options.port,
        onError: (error) => {
          if (this.wire === wire) this.lastError = error.message;
        },
      });
    } catch (error) {
      this.lastError = messageOf(error);
      this.onConnectionEnded(null);
      return;
    }
    this.wire = wire;
    wire.on('connect', () => this.onConnected(wire));
    wire.on('close', () => this.onConnectionEnded(wire));
    this.connectTimer = this.options.scheduler.setTimeout(() => {
      if (this.wire !== wire || this.state !== 'connecting') return;
      this.lastError = `connect timed out after ${this.options.connectTimeoutMs ?? 2000} ms`;
      wire.destroy();
    }, this.options.connectTimeoutMs ?? 2000);
  }

  private onConnected(wire: TcpWire): void {
    if (this.wire !== wire || this.state !== 'connecting') return;
    this.connectTimer?.cancel();
    this.state = 'connected';
    this.connectedAt = this.options.scheduler.now();
    this.pending = this.newPendingWrites();
    if (this.everConnected) this.reconnects += 1;
    this.everConnected = true;
    this.lastError = '';
    this.settleFirstOutcome({ reachable: true });
    this.options.onConnectionChange?.({ connected: true });
  }

  /** The socket closed (refused, reset, timed out, or ended by the daemon): retry after a backoff. */
  private onConnectionEnded(wire: TcpWire | null): void {
    if (wire !== null && this.wire !== wire) return;
    this.connectTimer?.cancel();
    this.wire = null;
    if (this.state === 'closed') return;
    const wasConnected = this.state === 'connected';
    this.state = 'waiting';
    if (!this.lastError) this.lastError = 'connection closed by the daemon';
    if (wasConnected && this.options.scheduler.now() - this.connectedAt >= this.backoff.maxMs) this.failures = 0;
    this.failures += 1;
    const delay = backoffDelay(this.backoff, this.failures, this.options.random ?? Math.random);
    if (wasConnected) {
      this.options.onConnectionChange?.({ connected: false, reason: this.lastError });
    } else {
      this.options.logger.debug(`statsd: cannot connect to ${this.description} (${this.lastError}); next attempt in ${delay} ms`);
    }
    this.settleFirstOutcome(this.unreachable());
    this.retryTimer = this.options.scheduler.setTimeout(() => this.connect(), delay);
  }
}
