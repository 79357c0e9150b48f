import dgram from 'node:dgram';
import { lookup } from 'node:dns/promises';
import { isIPv6 } from 'node:net';
import type { Scheduler } from '../../time';
import { UdpWire } from './hot-shots-wire';
import type { Packet } from './packer';
import { safeUdpPacketBytes } from './packer';
import { PendingWrites } from './pending-writes';
import type { Reachability, StatsdTransport } from './transport';
import { messageOf } from '../../errors';

export interface UdpTransportOptions {
  host: string;
  port: number;
  scheduler: Scheduler;
  /** How long the start-up probe waits for a refusal; default 300 ms. */
  probeTimeoutMs?: number;
  /** Cap on bytes handed to the socket and not yet sent; default 1 MiB. */
  maxPendingBytes?: number;
  /** How long close() waits for pending sends; default 1000 ms. */
  closeTimeoutMs?: number;
}

/**
 * Sends one flush's packets as datagrams of at most 1432 bytes. UDP cannot tell whether a
 * daemon receives them; at start a probe (an empty datagram on a connected socket, which
 * StatsD ignores) turns an ICMP port-unreachable into a warning.
 */
export class UdpTransport implements StatsdTransport {
  readonly description: string;
  readonly maxPacketBytes = safeUdpPacketBytes;
  private wire: UdpWire | null = null;
  private readonly pending: PendingWrites;

  constructor(private readonly options: UdpTransportOptions) {
    this.description = `udp ${formatAddress(options.host, options.port)}`;
    this.pending = new PendingWrites(options.scheduler, options.maxPendingBytes ?? 1024 * 1024);
  }

  get pendingBytes(): number {
    return this.pending.bytes;
  }

  get connected(): boolean {
    return this.wire !== null;
  }

  async open(): Promise<Reachability> {
    try {
      this.wire = new UdpWire({
        host: this.options.host,
        port: this.options.port,
        ipv6: isIPv6(this.options.host),
        // Send errors arrive through each send's callback; socket-level ones need a listener.
        onError: () => undefined,
      });
    } catch (error) {
      return { reachable: false, reason: messageOf(error) };
    }
    return probeUdp(this.options.host, this.options.port, this.options.probeTimeoutMs ?? 300, this.options.scheduler);
  }

  send(packet: Packet, done: (error: Error | null) => void): void {
    const wire = this.wire;
    if (!wire) {
      done(new Error(`${this.description} is not open`));
      return;
    }
    this.pending.write(packet.bytes, (complete) => wire.send(packet.payload, complete), done);
  }

  async close(): Promise<void> {
    await this.pending.drained(this.options.closeTimeoutMs ?? 1000);
    const wire = this.wire;
    this.wire = null;
    if (wire) await wire.close();
  }
}

export function formatAddress(host: string, port: number): string {
  return isIPv6(host) ? `[${host}]:${port}` : `${host}:${port}`;
}

/** Resolves unreachable when the name does not resolve or the port is refused within the timeout. */
async function probeUdp(host: string, port: number, timeoutMs: number, scheduler: Scheduler): Promise<Reachability> {
  let address: { address: string; family: number };
  try {
    address = await lookup(host);
  } catch (error) {
    return { reachable: false, reason: `cannot resolve '${host}': ${messageOf(error)}` };
  }
  const socket = dgram.createSocket(address.family === 6 ? 'udp6' : 'udp4');
  socket.unref();
  return new Promise<Reachability>((resolve) => {
    let settled = false;
    const finish = (result: Reachability): void => {
      if (settled) return;
      settled = true;
      timer.cancel();
      try {
        socket.close();
      } catch {
        // already closed
      }
      resolve(result);
    };
    const timer = scheduler.setTimeout(() => finish({ reachable: true }), timeoutMs);
    socket.on('error', (error) => finish({ reachable: false, reason: error.message }));
    socket.connect(port, address.address, () => {
      socket.send(Buffer.alloc(0), (error) => {
        if (error) finish({ reachable: false, reason: error.message });
      });
    });
  });
}
