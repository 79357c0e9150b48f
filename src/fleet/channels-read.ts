/**
 * Reading a node's block heights from its operations `/metrics` as the answer streams in
 * (docs/fleet-channels.md, "What is read"). A Fabric peer or orderer publishes one
 * `ledger_blockchain_height{channel="..."}` sample per channel among hundreds of KB of other
 * series; only those lines are kept. The body is never held whole: each line is looked at in the
 * chunk that carries it (a line cut by a chunk's end keeps at most `maxLineBytes` of its head),
 * so the memory of a read is one chunk, one line head and the heights kept, whatever the size of
 * the body. Pure: no I/O, no clock.
 */
import { quote } from '../text';

/** The family read: Fabric's ledger height gauge (core/ledger/kvledger and orderer/common/multichannel). */
const heightMetric = 'ledger_blockchain_height';

/** A line's head kept across chunks, and the longest height line accepted: a Fabric height line is under 300 bytes (a channel name has at most 249 characters). */
export const maxLineBytes = 1024;

/** Fabric's channel names (configtx's validateChannelID): lower case letters, digits, `.` and `-`, a letter first, fewer than 250 characters. */
const channelName = /^[a-z][a-z0-9.-]{0,248}$/;

/** Content types of the Prometheus exposition formats: the text format and OpenMetrics. */
const metricsTypes = ['text/plain', 'application/openmetrics-text'];

export interface HeightLimits {
  /** Bytes of the body read at most (an endless or huge body ends the read with a problem). */
  maxBytes: number;
  /** Channels kept at most; the height samples past it are counted, not kept. */
  maxChannels: number;
}

/** What a node's `/metrics` said of its chains. */
export interface HeightReading {
  /** Each channel's height, in the order of the body; at most `maxChannels`. */
  heights: Map<string, number>;
  /** Height samples of channels past `maxChannels`: not kept, reported. */
  dropped: number;
  /** Bytes of the body read. */
  bytes: number;
  /** The body was not read to its end: the height family had ended (the text format keeps a family's lines together). */
  stoppedEarly: boolean;
}

export type ReadStep = null | 'done' | { problem: string };

/** Pure: why an answer's status or Content-Type is not the Prometheus text of /metrics; null when it may be. */
export function metricsHeadProblem(status: number, contentType: string | undefined): string | null {
  if (status !== 200) return `/metrics answered ${status}, not 200 with the Prometheus text`;
  if (contentType === undefined) return null;
  const type = contentType.split(';')[0]?.trim().toLowerCase() ?? '';
  if (metricsTypes.includes(type)) return null;
  return `/metrics answered Content-Type ${quote(contentType, 80)}, not the Prometheus text format (text/plain or application/openmetrics-text)`;
}

const hash = 0x23;
const newline = 0x0a;
const prefix = Buffer.from(heightMetric, 'latin1');

function isNameStart(byte: number): boolean {
  return (byte >= 0x61 && byte <= 0x7a) || (byte >= 0x41 && byte <= 0x5a) || byte === 0x5f || byte === 0x3a;
}

function isNameByte(byte: number): boolean {
  return isNameStart(byte) || (byte >= 0x30 && byte <= 0x39);
}

function isBlank(byte: number): boolean {
  return byte === 0x20 || byte === 0x09 || byte === 0x0d;
}

/** Pure: the label pairs of a sample's `{...}` (the text format's escapes `\\`, `\"`, `\n`), or why they cannot be read. */
export function parseLabels(text: string): Map<string, string> | string {
  const labels = new Map<string, string>();
  let index = 0;
  const skipBlanks = (): void => {
    while (text[index] === ' ' || text[index] === '\t') index += 1;
  };
  for (;;) {
    skipBlanks();
    if (index >= text.length) return labels;
    const name = /^[A-Za-z_][A-Za-z0-9_]*/.exec(text.slice(index))?.[0];
    if (name === undefined) return 'a label name was expected';
    index += name.length;
    skipBlanks();
    if (text[index] !== '=') return `"=" was expected after the label ${name}`;
    index += 1;
    skipBlanks();
    if (text[index] !== '"') return `a quoted value was expected for the label ${name}`;
    index += 1;
    let value = '';
    for (;;) {
      const character = text[index];
      if (character === undefined) return `the value of the label ${name} is not closed`;
      index += 1;
      if (character === '"') break;
      if (character === '\\') {
        const escaped = text[index];
        index += 1;
        if (escaped === 'n') value += '\n';
        else if (escaped === '\\' || escaped === '"') value += escaped;
        else return `the value of the label ${name} has an unknown escape`;
      } else value += character;
    }
    if (labels.has(name)) return `the label ${name} is given twice`;
    labels.set(name, value);
    skipBlanks();
    if (text[index] === ',') index += 1;
    else if (index < text.length) return `"," was expected after the label ${name}`;
  }
}

/** Pure: a height sample line (`ledger_blockchain_height{channel="ch1"} 6 [timestamp]`): its channel and height, or why it is not one. */
export function parseHeightLine(line: string): { channel: string; height: number } | { problem: string } {
  const bad = (why: string): { problem: string } => ({ problem: `${why}: ${quote(line, 120)}` });
  let rest = line.slice(heightMetric.length);
  let labels = new Map<string, string>();
  if (rest.startsWith('{')) {
    const close = rest.lastIndexOf('}');
    if (close < 0) return bad(`a ${heightMetric} sample whose labels are not closed`);
    const parsed = parseLabels(rest.slice(1, close));
    if (typeof parsed === 'string') return bad(`a ${heightMetric} sample whose labels cannot be read (${parsed})`);
    labels = parsed;
    rest = rest.slice(close + 1);
  }
  const fields = rest.trim().split(/[ \t]+/);
  const channel = labels.get('channel');
  if (channel === undefined) return bad(`a ${heightMetric} sample without a channel label`);
  if (!channelName.test(channel)) return bad(`a ${heightMetric} sample whose channel is not a Fabric channel name`);
  const valueText = fields[0] ?? '';
  const value = valueText === '' ? Number.NaN : Number(valueText);
  if (fields.length > 2 || !Number.isSafeInteger(value) || value < 0) return bad(`a ${heightMetric} sample whose value is not a block count`);
  return { channel, height: value };
}

/**
 * The reader of one answer: give it the chunks as they come (write), then end(). It stops as
 * soon as it knows enough: `done` once the height family has ended (the text format keeps a
 * family's lines together, so no height line follows), a problem when the body is not the
 * Prometheus text (a line that is neither a comment nor a sample), a height line cannot be
 * read, or more than `maxBytes` came.
 */
export class HeightReader {
  private readonly heights = new Map<string, number>();
  private dropped = 0;
  private bytes = 0;
  private lineNumber = 0;
  /** The head of a line the last chunk cut (at most maxLineBytes), and whether more of it was cut off. */
  private carry: Buffer | null = null;
  private carryCut = false;
  private seenHeight = false;
  private finished: ReadStep = null;

  constructor(private readonly limits: HeightLimits) {}

  write(chunk: Buffer): ReadStep {
    if (this.finished !== null) return this.finished;
    this.bytes += chunk.length;
    let position = 0;
    if (this.carry !== null) {
      const end = chunk.indexOf(newline);
      const upTo = end < 0 ? chunk.length : end;
      if (!this.carryCut) {
        const room = maxLineBytes - this.carry.length;
        this.carry = Buffer.concat([this.carry, chunk.subarray(0, Math.min(upTo, room))]);
        if (upTo > room) this.carryCut = true;
      }
      if (end < 0) return this.overLimit();
      const step = this.line(this.carry, 0, this.carry.length, this.carryCut);
      this.carry = null;
      this.carryCut = false;
      if (step !== null) return (this.finished = step);
      position = end + 1;
    }
    while (position < chunk.length) {
      const end = chunk.indexOf(newline, position);
      if (end < 0) {
        const head = chunk.subarray(position, Math.min(chunk.length, position + maxLineBytes));
        // A copy: the chunk is not kept alive by the few bytes of its last line.
        this.carry = Buffer.from(head);
        this.carryCut = chunk.length - position > maxLineBytes;
        break;
      }
      const step = this.line(chunk, position, end, false);
      if (step !== null) return (this.finished = step);
      position = end + 1;
    }
    return this.overLimit();
  }

  /** The body ended: the heights read, or the problem that stopped the read. */
  end(): HeightReading | { problem: string } {
    if (this.finished === null && this.carry !== null) {
      const step = this.line(this.carry, 0, this.carry.length, this.carryCut);
      this.carry = null;
      if (step !== null) this.finished = step;
    }
    if (this.finished !== null && this.finished !== 'done') return this.finished;
    return { heights: this.heights, dropped: this.dropped, bytes: this.bytes, stoppedEarly: this.finished === 'done' };
  }

  private overLimit(): ReadStep {
    if (this.bytes <= this.limits.maxBytes) return null;
    this.finished = { problem: `/metrics is larger than channels.maxMetricsBytes (${this.limits.maxBytes} bytes); not read further` };
    return this.finished;
  }

  /** One line, bytes [start, end) of `buffer` (`cut`: its tail was not kept). */
  private line(buffer: Buffer, start: number, end: number, cut: boolean): ReadStep {
    this.lineNumber += 1;
    let first = start;
    while (first < end && isBlank(buffer[first] as number)) first += 1;
    if (first === end) return null;
    const byte = buffer[first] as number;
    if (byte === hash) {
      // # HELP / # TYPE of a family, or a comment: the height family's own come before its samples.
      const text = buffer.toString('latin1', first, Math.min(end, first + 64));
      const about = /^#\s+(?:HELP|TYPE)\s+(\S+)/.exec(text)?.[1];
      return this.seenHeight && about !== heightMetric ? 'done' : null;
    }
    if (!isNameStart(byte)) return this.notText(buffer, start, end);
    let after = first + 1;
    while (after < end && isNameByte(buffer[after] as number)) after += 1;
    const next = after < end ? (buffer[after] as number) : -1;
    if (next !== 0x7b && !isBlank(next)) return this.notText(buffer, start, end);
    const isHeight = after - first === prefix.length && buffer.compare(prefix, 0, prefix.length, first, after) === 0;
    if (!isHeight) return this.seenHeight ? 'done' : null;
    if (cut || end - start > maxLineBytes)
      return { problem: `line ${this.lineNumber} of /metrics, a ${heightMetric} sample, is longer than ${maxLineBytes} bytes` };
    this.seenHeight = true;
    const parsed = parseHeightLine(buffer.toString('utf8', first, end).trimEnd());
    if ('problem' in parsed) return { problem: `line ${this.lineNumber} of /metrics: ${parsed.problem}` };
    const known = this.heights.get(parsed.channel);
    if (known !== undefined) this.heights.set(parsed.channel, Math.max(known, parsed.height));
    else if (this.heights.size < this.limits.maxChannels) this.heights.set(parsed.channel, parsed.height);
    else this.dropped += 1;
    return null;
  }

  private notText(buffer: Buffer, start: number, end: number): ReadStep {
    const text = buffer.toString('utf8', start, Math.min(end, start + 80));
    return { problem: `/metrics is not the Prometheus text format: line ${this.lineNumber} is neither a comment nor a sample: ${quote(text, 60)}` };
  }
}
