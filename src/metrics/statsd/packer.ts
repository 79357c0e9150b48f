/**
 * Several StatsD lines per datagram or TCP write, as many as fit in `maxBytes`. Pure logic.
 *
 * 1432 bytes keeps a UDP datagram inside one Ethernet frame on most paths (1500 MTU minus
 * IP/UDP headers and room for tunnels), as go-kit and most StatsD clients do.
 */
export const safeUdpPacketBytes = 1432;
/** TCP has no packet limit; writes of this size keep each flush to a few syscalls. */
export const tcpWriteBytes = 16 * 1024;

export interface Packet {
  payload: string;
  /** Lines in the payload, for counting what was sent or dropped. */
  lines: number;
  bytes: number;
}

/**
 * Packs entries (one or more `\n`-joined lines each, kept together) in order. An entry
 * larger than `maxBytes` goes alone in its own packet.
 */
export function packEntries(entries: readonly string[], maxBytes: number): Packet[] {
  const packets: Packet[] = [];
  let payload = '';
  let bytes = 0;
  let lines = 0;
  for (const entry of entries) {
    const entryBytes = Buffer.byteLength(entry);
    const entryLines = countLines(entry);
    if (lines > 0 && bytes + 1 + entryBytes > maxBytes) {
      packets.push({ payload, lines, bytes });
      payload = '';
      bytes = 0;
      lines = 0;
    }
    if (lines === 0) {
      payload = entry;
      bytes = entryBytes;
    } else {
      payload += `\n${entry}`;
      bytes += 1 + entryBytes;
    }
    lines += entryLines;
  }
  if (lines > 0) packets.push({ payload, lines, bytes });
  return packets;
}

function countLines(entry: string): number {
  let count = 1;
  for (let i = entry.indexOf('\n'); i !== -1; i = entry.indexOf('\n', i + 1)) count += 1;
  return count;
}
