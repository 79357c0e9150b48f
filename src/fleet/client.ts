import type { OutgoingHttpHeaders } from 'node:http';
import type { PeerCertificate, SecureContext } from 'node:tls';
import { checkServerIdentity, createSecureContext } from 'node:tls';
import { isTlsError, outboundRequest, type OutboundFailure, type OutboundTls, type StreamReader } from '../http-client';
import type { Clock, Scheduler } from '../time';
import { minimumTlsVersion } from '../tls/material';
import type { GroupMaterial } from './credentials';
import type { CallFailureReason, FleetNode } from './types';
import { messageOf } from '../errors';
import { excerpt } from '../health/quote';
import { describeTlsProblem, tlsProblemOf, type TlsParties } from './tls-problems';
import { oneLine } from '../text';

/** What one call to a node gave: an HTTP answer (any status), or why there was none. */
export type CallOutcome =
  | { ok: true; status: number; body: unknown; text: string; latencyMs: number }
  | { ok: false; reason: CallFailureReason; error: string; latencyMs: number; status?: number };

/**
 * Reads an answer's body as it arrives instead of keeping it whole (a node's /metrics: hundreds
 * of KB of which a few lines matter; src/fleet/channels-read.ts). A 401 or 403 is still the
 * call's `unauthorized`; every other answer goes to the reader.
 */
export interface BodyReader extends StreamReader {
  /** Before the body: why this status or Content-Type is refused (`bad_response`), else null. */
  head(status: number, contentType: string | undefined): string | null;
}

/** What a call may say besides the method and path: its Accept header, and a reader for a streamed body. */
export interface CallOptions {
  accept?: string;
  reader?: BodyReader;
}

export interface NodeClientOptions {
  timeoutMs: number;
  maxResponseBytes: number;
  scheduler: Scheduler;
  /** For latency; default the scheduler. */
  clock?: Clock;
  /** The group's material; null for a group without TLS. */
  material(group: string): GroupMaterial | null;
  /** The notAfter (ms since epoch) of the node's certificate, and the certificate, seen in each handshake. */
  onPeerCertificate?(node: FleetNode, notAfterMs: number, certificate: PeerCertificate): void;
  /**
   * Where a node's CAs and client certificate come from, as TLS errors name them
   * (src/fleet/tls-problems.ts): the fleet says `groups.org1.tls.caFiles (/etc/org1/ca.crt)`.
   * Absent: `the trusted CA files`, `the client certificate`.
   */
  tlsSources?(node: FleetNode): { caSource: string; certSource: string | null };
}

/**
 * Calls to nodes' operations endpoints. No keep-alive: every call is a fresh connection with its
 * own TLS handshake (so the node's current certificate is seen), bounded by one timer over the
 * whole call (connect, handshake, request, answer) and by a cap on the answer's size.
 */
export class NodeClient {
  private readonly contexts = new Map<string, { material: GroupMaterial; context: SecureContext }>();

  constructor(private readonly options: NodeClientOptions) {}

  private secureContext(group: string): SecureContext | null {
    const material = this.options.material(group);
    if (material === null) return null;
    const cached = this.contexts.get(group);
    if (cached !== undefined && cached.material === material) return cached.context;
    const context = createSecureContext({ ca: material.ca, cert: material.cert, key: material.key, minVersion: minimumTlsVersion });
    this.contexts.set(group, { material, context });
    return context;
  }

  /**
   * `signal` (a round's deadline): aborted before the call, the node is not asked (`timeout`, at
   * once); aborted during it, the call is cut (`timeout`). Either error starts with the reason's message.
   */
  async call(node: FleetNode, method: 'GET' | 'PUT', path: string, body?: unknown, signal?: AbortSignal, options: CallOptions = {}): Promise<CallOutcome> {
    const { scheduler, timeoutMs, maxResponseBytes } = this.options;
    if (signal?.aborted) return { ok: false, reason: 'timeout', error: `${messageOf(signal.reason)}: not asked`, latencyMs: 0 };
    const clock = this.options.clock ?? scheduler;
    const started = clock.now();
    const elapsed = (): number => Math.max(0, clock.now() - started);
    const url = new URL(path, node.url);
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const headers: OutgoingHttpHeaders = { Accept: options.accept ?? 'application/json', Connection: 'close' };
    if (payload !== undefined) {
      headers['Content-Type'] = 'application/json';
      headers['Content-Length'] = Buffer.byteLength(payload);
    }
    let tls: OutboundTls | undefined;
    if (url.protocol === 'https:') {
      let secureContext: SecureContext | null;
      try {
        secureContext = this.secureContext(node.group);
      } catch (error) {
        return { ok: false, reason: 'unreachable', error: messageOf(error), latencyMs: elapsed() };
      }
      // A node with a tlsServerName (discovery, e.g. a Service reached at its clusterIP) is verified against that name, not the URL's host.
      const serverName = node.tlsServerName;
      tls = {
        ...(secureContext ? { secureContext } : {}),
        ...(serverName === undefined
          ? {}
          : { servername: serverName, checkServerIdentity: (_host: string, cert: PeerCertificate) => checkServerIdentity(serverName, cert) }),
      };
    }
    const { reader } = options;
    const answer = await outboundRequest({
      url,
      method,
      headers,
      body: payload,
      tls,
      timeoutMs,
      scheduler,
      signal,
      maxBytes: maxResponseBytes,
      json: true,
      // A 401 or 403 is read whole (the call's `unauthorized`); every other answer goes to the reader.
      reader:
        reader === undefined
          ? undefined
          : (head) => {
              if (head.status === 401 || head.status === 403) return null;
              const refused = reader.head(head.status, head.headers['content-type']);
              return refused === null ? reader : { problem: refused };
            },
      onSecureConnect: (socket) => {
        const certificate = socket.getPeerCertificate();
        const notAfter = Date.parse(certificate.valid_to);
        if (Number.isFinite(notAfter)) this.options.onPeerCertificate?.(node, notAfter, certificate);
      },
    });
    const latencyMs = elapsed();
    if (!answer.ok) return { ok: false, ...this.failure(node, url, answer, latencyMs, signal), latencyMs };
    const status = answer.status;
    if (reader !== undefined && status !== 401 && status !== 403) {
      return { ok: true, status, body: answer.read, text: '', latencyMs };
    }
    if (status === 401 || status === 403) return { ok: false, reason: 'unauthorized', status, error: `${status}: ${errorText(answer.text)}`, latencyMs };
    if (answer.json !== undefined && 'problem' in answer.json) {
      return { ok: false, reason: 'bad_response', status, error: `${status} with a body that is not JSON: ${answer.text.slice(0, 80)}`, latencyMs };
    }
    return { ok: true, status, body: answer.json?.value, text: answer.text, latencyMs };
  }

  /** A failed call in the fleet's words: its reason, the error, and the status when the reader refused the body's end. */
  private failure(
    node: FleetNode,
    url: URL,
    failure: OutboundFailure,
    latencyMs: number,
    signal?: AbortSignal,
  ): { reason: CallFailureReason; error: string; status?: number } {
    switch (failure.reason) {
      case 'timeout':
        return { reason: 'timeout', error: `no complete answer within ${this.options.timeoutMs} ms` };
      case 'aborted':
        return { reason: 'timeout', error: `${messageOf(signal?.reason)}: the call was cut after ${Math.round(latencyMs)} ms` };
      case 'too_large':
        return { reason: 'bad_response', error: failure.error.message };
      case 'bad_response':
        if (failure.kind === 'cut') return { reason: 'bad_response', error: `answer cut: ${failure.error.message}` };
        if (failure.kind === 'refused-end') return { reason: 'bad_response', status: failure.status, error: failure.error.message };
        if (failure.kind !== 'not-http') return { reason: 'bad_response', error: failure.error.message };
        break;
      default:
        break;
    }
    // The connection's own error. A TLS failure in the operator's words, naming the group's file (not OpenSSL's string).
    const { error } = failure;
    const tls = url.protocol === 'https:' ? tlsProblemOf(error, failure.handshakeDone, failure.answered) : null;
    if (tls !== null) return { reason: 'tls', error: describeTlsProblem(tls, this.tlsParties(node, url)) };
    return { reason: isTlsError(error) ? 'tls' : 'unreachable', error: `${error.code ?? 'error'}: ${oneLine(error.message, 200)}` };
  }

  private tlsParties(node: FleetNode, url: URL): TlsParties {
    const sources = this.options.tlsSources?.(node) ?? {
      caSource: 'the trusted CA files',
      certSource: this.options.material(node.group)?.cert === undefined ? null : 'the client certificate',
    };
    return { peer: 'the node', ...sources, host: node.tlsServerName ?? url.host };
  }
}

/** The `error` field of a Fabric/fabric-ops error answer, else the text; one line, cut to 200 characters either way (a node chooses it). */
export function errorText(text: string): string {
  try {
    const body = JSON.parse(text) as { error?: unknown; Error?: unknown };
    const message = body.error ?? body.Error;
    if (typeof message === 'string') return excerpt(message);
  } catch {
    // not JSON: the text itself
  }
  return excerpt(text);
}
