import dgram from 'node:dgram';
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface Family {
  name: string;
  type: string;
  samples: Sample[];
}

/** Parses the Prometheus text format (0.0.4) into families by name. */
export function parseExposition(text: string): Map<string, Family> {
  const families = new Map<string, Family>();
  const familyOf = (sampleName: string): Family | undefined => {
    for (const suffix of ['', '_total', '_bucket', '_sum', '_count']) {
      if (suffix === '' || sampleName.endsWith(suffix)) {
        const base = suffix === '' ? sampleName : sampleName.slice(0, -suffix.length);
        const family = families.get(base) ?? families.get(sampleName);
        if (family) return family;
      }
    }
    return undefined;
  };
  for (const line of text.split('\n')) {
    const type = /^# TYPE (\S+) (\S+)$/.exec(line);
    if (type?.[1] && type[2]) {
      families.set(type[1], { name: type[1], type: type[2], samples: [] });
      continue;
    }
    if (line === '' || line.startsWith('#')) continue;
    const sample = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)/.exec(line);
    if (!sample?.[1] || !sample[3]) continue;
    const labels: Record<string, string> = {};
    for (const match of (sample[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) {
      if (match[1]) labels[match[1]] = match[2] ?? '';
    }
    familyOf(sample[1])?.samples.push({ name: sample[1], labels, value: Number(sample[3]) });
  }
  return families;
}

/** Label names used by a family's samples, `le`/`quantile` left out, sorted. */
export function labelNames(family: Family): string[] {
  return [...new Set(family.samples.flatMap((s) => Object.keys(s.labels)))].filter((n) => n !== 'le' && n !== 'quantile').sort();
}

/** The value of one sample (by sample name and labels), 0 when absent. */
export function sampleValue(families: Map<string, Family>, family: string, labels: Record<string, string>, sampleName?: string): number {
  const found = families
    .get(family)
    ?.samples.find(
      (s) =>
        (sampleName === undefined || s.name === sampleName) &&
        Object.entries(labels).every(([k, v]) => s.labels[k] === v) &&
        Object.keys(s.labels).length === Object.keys(labels).length,
    );
  return found?.value ?? 0;
}

/** UDP ports bound by a process, from /proc (to tell which process sent a datagram). */
export function udpPortsOf(pid: number): Set<number> {
  const inodes = new Set<string>();
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      const link = readlinkSync(`/proc/${pid}/fd/${fd}`);
      const match = /^socket:\[(\d+)\]$/.exec(link);
      if (match?.[1]) inodes.add(match[1]);
    } catch {
      // closed meanwhile
    }
  }
  const ports = new Set<number>();
  for (const table of ['/proc/net/udp', '/proc/net/udp6']) {
    let text: string;
    try {
      text = readFileSync(table, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const fields = line.trim().split(/\s+/);
      const local = fields[1];
      const inode = fields[9];
      if (local && inode && inodes.has(inode)) ports.add(parseInt(local.split(':')[1] ?? '0', 16));
    }
  }
  return ports;
}

/** One StatsD line as received: bucket, value, type (c, g, ms, ...). */
export interface StatsdLine {
  bucket: string;
  value: number;
  type: string;
}

/** A UDP listener on 127.0.0.1 that keeps each StatsD line with the port it came from. */
export class StatsdListener {
  readonly lines: Array<StatsdLine & { sourcePort: number }> = [];
  private constructor(
    private readonly socket: dgram.Socket,
    readonly port: number,
  ) {}

  static start(): Promise<StatsdListener> {
    return new Promise((resolve, reject) => {
      const socket = dgram.createSocket('udp4');
      socket.once('error', reject);
      socket.bind(0, '127.0.0.1', () => {
        const listener = new StatsdListener(socket, socket.address().port);
        socket.on('message', (message, remote) => listener.receive(message.toString('utf8'), remote.port));
        resolve(listener);
      });
    });
  }

  private receive(text: string, sourcePort: number): void {
    for (const line of text.split('\n')) {
      const match = /^([^:]+):([^|]+)\|([a-z]+)/.exec(line);
      if (match?.[1] && match[2] && match[3]) this.lines.push({ bucket: match[1], value: Number(match[2]), type: match[3], sourcePort });
    }
  }

  /** Lines sent from these ports, or (from: 'others') from any other. */
  from(ports: ReadonlySet<number>, which: 'these' | 'others'): StatsdLine[] {
    return this.lines.filter((line) => ports.has(line.sourcePort) === (which === 'these'));
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.socket.close(() => resolve()));
  }
}
