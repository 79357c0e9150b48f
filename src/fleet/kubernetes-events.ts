/**
 * Fleet writes and put-backs as Kubernetes Events (README, "Kubernetes: Events ..."): what each
 * fleet event becomes (pure), and a relay that holds events until the Kubernetes integration,
 * which starts after the server listens, is there to record them.
 */
import type { EventType } from '../kubernetes/recorder';
import { clip, oneLine, quote } from '../text';
import type { FleetEvent, FleetEventListener, NodeLogSpecChange, NodePutBack } from './types';

export interface KubernetesEventDescription {
  type: EventType;
  reason: 'FleetLogSpecChanged' | 'FleetLogSpecPutBack' | 'FleetPutBacksRewritten';
  message: string;
}

/**
 * An Event's message is kept within 1 KiB (bytes): events.k8s.io/v1 refuses a longer `note`,
 * and client-go's recorders cut there too. The per-node list is what gets cut, saying how many
 * nodes are left out.
 */
export const maxEventMessageBytes = 1024;

/** Longest echo of a spec, an actor or a node's error in a message: one long value cannot crowd out the nodes. */
const maxFieldLength = 200;
const maxNodeErrorLength = 80;

/** Go's time.Duration text for whole seconds and up: 2s, 15m0s, 1h30m0s (as `ttl` is written). */
export function goDuration(ms: number): string {
  if (ms < 1000) return `${ms}ms`;
  const hours = Math.floor(ms / 3_600_000);
  const minutes = Math.floor((ms % 3_600_000) / 60_000);
  const seconds = (ms % 60_000) / 1000;
  const secondsText = `${Number.isInteger(seconds) ? seconds : seconds.toFixed(3).replace(/0+$/, '')}s`;
  if (hours > 0) return `${hours}h${minutes}m${secondsText}`;
  if (minutes > 0) return `${minutes}m${secondsText}`;
  return secondsText;
}

function changeText(node: NodeLogSpecChange): string {
  const detail = node.reason ? ` (${node.reason}${node.error ? `: ${oneLine(node.error, maxNodeErrorLength)}` : ''})` : '';
  return `${node.name}=${node.result}${detail}`;
}

function putBackText(node: NodePutBack): string {
  if (node.result === 'restored' && node.spec !== undefined) return `${node.name}=restored to ${quote(node.spec, maxNodeErrorLength, 'single')}`;
  if (node.result === 'skipped_changed' && node.spec !== undefined)
    return `${node.name}=skipped_changed (has ${quote(node.spec, maxNodeErrorLength, 'single')})`;
  return `${node.name}=${node.result}${node.error ? ` (${oneLine(node.error, maxNodeErrorLength)})` : ''}`;
}

/** `head` then as many node entries as fit in maxEventMessageBytes; when some do not, says how many of how many are left out. */
function boundedNodeList(head: string, entries: readonly string[]): string {
  const bytes = (text: string): number => Buffer.byteLength(text);
  let message = head;
  for (let index = 0; index < entries.length; index += 1) {
    const next = `${message}${index === 0 ? '' : ', '}${entries[index]}`;
    const left = entries.length - index - 1;
    // Room for the tail that says what was left out, unless this is the last entry.
    const tail = left === 0 ? '' : `, ... and ${left} more of ${entries.length} nodes`;
    if (bytes(next) + bytes(tail) <= maxEventMessageBytes) {
      message = next;
      continue;
    }
    const omitted = entries.length - index;
    return `${message}${index === 0 ? '' : ', '}... and ${omitted} more of ${entries.length} nodes`;
  }
  return message;
}

/** Pure: the Event a fleet event is recorded as. */
export function describeFleetEventForKubernetes(event: FleetEvent): KubernetesEventDescription {
  if (event.type === 'fleet.putbacks.rewritten') {
    const what = { deleted: 'was deleted', key_removed: 'lost its key', changed: 'had its key changed' }[event.change];
    const count =
      event.nodes.length === 1
        ? '1 put-back was pending; fabric-ops wrote it again'
        : `${event.nodes.length} put-backs were pending; fabric-ops wrote them again`;
    const head = `${clip(event.where, maxFieldLength)} ${what} by someone else while ${count}: `;
    return { type: 'Warning', reason: 'FleetPutBacksRewritten', message: boundedNodeList(head, event.nodes) };
  }
  const actor = clip(event.actor, maxFieldLength);
  if (event.type === 'fleet.logspec.changed') {
    const took = event.nodes.filter((node) => node.result === 'applied').length;
    const complete = took === event.nodes.length;
    const options = [event.ttlMs !== null ? `for ${goDuration(event.ttlMs)}` : 'without TTL', ...(event.allOrNothing ? ['all-or-nothing'] : [])].join(', ');
    const head = `fleet logging specification ${quote(event.spec, maxFieldLength, 'single')} set by ${actor} (${options}): ${took} of ${event.nodes.length} nodes took it: `;
    return { type: complete ? 'Normal' : 'Warning', reason: 'FleetLogSpecChanged', message: boundedNodeList(head, event.nodes.map(changeText)) };
  }
  const restored = event.nodes.filter((node) => node.result === 'restored').length;
  const head = `fleet logging specification put back (${event.trigger === 'ttl' ? 'TTL ended' : 'cancelled'}) by ${actor}: ${restored} of ${event.nodes.length} nodes restored: `;
  return {
    type: restored === event.nodes.length ? 'Normal' : 'Warning',
    reason: 'FleetLogSpecPutBack',
    message: boundedNodeList(head, event.nodes.map(putBackText)),
  };
}

/** How the relay records an Event: KubernetesIntegration.record. */
export type RecordEvent = (type: EventType, reason: string, message: string) => void;

/**
 * Passes fleet events to the Kubernetes integration. The fleet exists (and may put nodes back at
 * start) before the server listens, the integration only after: until `connect`, events are held
 * (at most `limit`, the recorder's own queue size; the oldest goes first). `connect(null)` (no
 * integration) drops them and stops holding.
 */
export class FleetEventRelay {
  private held: FleetEvent[] | null = [];
  private record: RecordEvent | null = null;
  /** Events dropped while held (more than `limit` before the integration started). */
  dropped = 0;

  constructor(private readonly limit = 256) {}

  readonly listener: FleetEventListener = (event) => {
    if (this.record !== null) {
      this.send(this.record, event);
      return;
    }
    if (this.held === null) return;
    if (this.held.length >= this.limit) {
      this.held.shift();
      this.dropped += 1;
    }
    this.held.push(event);
  };

  connect(record: RecordEvent | null): void {
    const held = this.held ?? [];
    this.held = null;
    this.record = record;
    if (record !== null) for (const event of held) this.send(record, event);
  }

  private send(record: RecordEvent, event: FleetEvent): void {
    const { type, reason, message } = describeFleetEventForKubernetes(event);
    record(type, reason, message);
  }
}
