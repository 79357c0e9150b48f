import type { CheckResult } from '../health/types';
import type { RunningTransaction } from './transactions';
import { messageOf } from '../errors';
import { monotonicClock, type Clock } from '../time';

export interface ChaincodeHealthSettings {
  /** A peer must have connected and registered within this time of the server listening (and of a stream opening). */
  registrationTimeoutMs: number;
  /** A transaction running longer than this makes the check fail: the peer stream is stuck. */
  stuckTimeoutMs: number;
}

export interface ServerRecord {
  readonly address: string;
  state: 'starting' | 'listening' | 'failed' | 'stopped';
  since: number;
  error?: string;
}

export interface StreamRecord {
  readonly peer: string;
  readonly connectedAt: number;
  registeredAt?: number;
  readyAt?: number;
  closedAt?: number;
  closeReason?: string;
}

function seconds(ms: number): string {
  const value = ms / 1000;
  return `${value < 10 ? value.toFixed(1) : Math.round(value)}s`;
}

/**
 * What the chaincode server and its peer streams are doing, and the verdict of the
 * `chaincode` health check on it (pure: times come from `now`, monotonic milliseconds).
 */
export class ChaincodeServerState {
  private readonly servers: ServerRecord[] = [];
  private readonly open = new Set<StreamRecord>();
  private lastClosed: StreamRecord | undefined;

  constructor(
    readonly settings: ChaincodeHealthSettings,
    private readonly clock: Clock = monotonicClock,
  ) {}

  serverStarting(address: string): ServerRecord {
    const record: ServerRecord = { address, state: 'starting', since: this.clock.now() };
    this.servers.push(record);
    return record;
  }

  serverListening(record: ServerRecord): void {
    record.state = 'listening';
    record.since = this.clock.now();
  }

  serverFailed(record: ServerRecord, error: unknown): void {
    record.state = 'failed';
    record.since = this.clock.now();
    record.error = messageOf(error);
  }

  serverStopped(record: ServerRecord): void {
    record.state = 'stopped';
    record.since = this.clock.now();
  }

  streamOpened(peer: string): StreamRecord {
    const record: StreamRecord = { peer, connectedAt: this.clock.now() };
    this.open.add(record);
    return record;
  }

  streamRegistered(record: StreamRecord): void {
    record.registeredAt ??= this.clock.now();
  }

  streamReady(record: StreamRecord): void {
    record.readyAt ??= this.clock.now();
  }

  streamClosed(record: StreamRecord, reason: string): void {
    if (record.closedAt !== undefined) return;
    record.closedAt = this.clock.now();
    record.closeReason = reason;
    this.open.delete(record);
    this.lastClosed = record;
  }

  /** Peer streams open now, ready ones first. */
  openStreams(): StreamRecord[] {
    return [...this.open].sort((a, b) => Number(b.readyAt !== undefined) - Number(a.readyAt !== undefined));
  }

  /**
   * The verdict. `noServerNote`, asked for only while no server has been created, is added to
   * that reason (another copy of fabric-shim loaded beside the hooked one).
   */
  check(oldestRunning: RunningTransaction | undefined, noServerNote?: () => string | undefined): CheckResult {
    const problems = [...this.serverProblems(noServerNote), ...this.stuckProblems(oldestRunning), ...this.peerProblems()];
    return problems.length === 0 ? { ok: true } : { ok: false, reason: problems.join('; ') };
  }

  private serverProblems(noServerNote: (() => string | undefined) | undefined): string[] {
    if (this.servers.length === 0) {
      const note = noServerNote?.();
      return [`the chaincode server has not been created (fabric-shim server() was not called)${note === undefined ? '' : `: ${note}`}`];
    }
    return this.servers.flatMap((server) => {
      switch (server.state) {
        case 'starting':
          return [`the chaincode server is not listening yet on ${server.address}`];
        case 'failed':
          return [`the chaincode server could not listen on ${server.address}: ${server.error ?? 'unknown error'}`];
        case 'stopped':
          return [`the chaincode server on ${server.address} has stopped`];
        default:
          return [];
      }
    });
  }

  private stuckProblems(oldest: RunningTransaction | undefined): string[] {
    if (oldest === undefined) return [];
    const age = this.clock.now() - oldest.startedAt;
    if (age <= this.settings.stuckTimeoutMs) return [];
    const fn = oldest.contract === '' ? oldest.function : `${oldest.contract}:${oldest.function}`;
    return [
      `the peer stream is stuck: transaction ${oldest.txId} on channel ${oldest.channel} (${fn}) has been running for ${seconds(age)} (limit ${seconds(this.settings.stuckTimeoutMs)})`,
    ];
  }

  private peerProblems(): string[] {
    const listening = this.servers.filter((server) => server.state === 'listening');
    const first = listening[0];
    if (first === undefined) return [];
    const timeout = this.settings.registrationTimeoutMs;
    const now = this.clock.now();
    const open = this.openStreams();
    if (open.some((stream) => stream.readyAt !== undefined)) return [];
    const pending = open.at(-1);
    if (pending !== undefined) {
      if (now - pending.connectedAt <= timeout) return [];
      return [`the peer at ${pending.peer} connected ${seconds(now - pending.connectedAt)} ago but has not registered within ${seconds(timeout)}`];
    }
    const closed = this.lastClosed;
    if (closed !== undefined && closed.closedAt !== undefined) {
      return [
        `no peer is connected: the stream from the peer at ${closed.peer} ended ${seconds(now - closed.closedAt)} ago (${closed.closeReason ?? 'closed'}); a peer connects again by itself when it starts, or when it next runs this chaincode`,
      ];
    }
    const since = Math.min(...listening.map((server) => server.since));
    if (now - since <= timeout) return [];
    return [
      `no peer has connected and registered within ${seconds(timeout)} of the chaincode server listening on ${listening.map((s) => s.address).join(', ')}`,
    ];
  }
}
