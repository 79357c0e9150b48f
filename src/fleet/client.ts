import http from 'node:http';
import https from 'node:https';
import type { PeerCertificate, TLSSocket, SecureContext } from 'node:tls';
import { checkServerIdentity, createSecureContext } from 'node:tls';
import type { Cancellable, Clock, Scheduler } from '../time';
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
export interface BodyReader {
  /** Before the body: why this status or Content-Type is refused (`bad_response`), else null. */
  head(status: number, contentType: string | undefined): string | null;
  /** A piece of the body: null reads on, `done` ends the call here (the connection is closed), a problem ends it as `bad_response`. */
  write(chunk: Buffer): null | 'done' | { problem: string };
  /** The body ended, or write said `done`: the outcome's `body`, or why it is bad. */
  end(): { value: unknown } | { problem: string };
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

const tlsErrorCodes = new Set([
  'EPROTO',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'CERT_SIGNATURE_FAILURE',
  'CERT_UNTRUSTED',
  'CERT_REJECTED',
  'HOSTNAME_MISMATCH',
]);

/** Pure: the reason for a socket or TLS error. */
export function classifyError(error: NodeJS.ErrnoException): CallFailureReason {
  const code = error.code ?? '';
  if (code.startsWith('ERR_SSL_') || code.startsWith('ERR_TLS_') || tlsErrorCodes.has(code)) return 'tls';
  return 'unreachable';
}

class CallAbort extends Error {
  constructor(
    readonly reason: CallFailureReason,
    message: string,
  ) {
    super(message);
  }
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
  call(node: FleetNode, method: 'GET' | 'PUT', path: string, body?: unknown, signal?: AbortSignal, options: CallOptions = {}): Promise<CallOutcome> {
    const { scheduler, timeoutMs, maxResponseBytes } = this.options;
    if (signal?.aborted) return Promise.resolve({ ok: false, reason: 'timeout', error: `${messageOf(signal.reason)}: not asked`, latencyMs: 0 });
    const clock = this.options.clock ?? scheduler;
    const started = clock.now();
    const elapsed = (): number => Math.max(0, clock.now() - started);
    return new Promise<CallOutcome>((resolve) => {
      let settled = false;
      // Declared before `finish`, which a request that cannot even be made calls before the timer exists.
      let timer: Cancellable | null = null;
      const finish = (outcome: CallOutcome): void => {
        if (settled) return;
        settled = true;
        timer?.cancel();
        signal?.removeEventListener('abort', cut);
        resolve(outcome);
      };
      const cut = (): void => {
        req.destroy(new CallAbort('timeout', `${messageOf(signal?.reason)}: the call was cut after ${Math.round(elapsed())} ms`));
      };
      const url = new URL(path, node.url);
      const payload = body === undefined ? undefined : JSON.stringify(body);
      const headers: http.OutgoingHttpHeaders = { Accept: options.accept ?? 'application/json', Connection: 'close' };
      if (payload !== undefined) {
        headers['Content-Type'] = 'application/json';
        headers['Content-Length'] = Buffer.byteLength(payload);
      }
      let req: http.ClientRequest;
      try {
        if (url.protocol === 'https:') {
          const secureContext = this.secureContext(node.group);
          // A node with a tlsServerName (discovery, e.g. a Service reached at its clusterIP) is verified against that name, not the URL's host.
          const identity =
            node.tlsServerName === undefined
              ? {}
              : {
                  servername: node.tlsServerName,
                  checkServerIdentity: (_host: string, cert: PeerCertificate) => checkServerIdentity(node.tlsServerName as string, cert),
                };
          req = https.request(url, { method, headers, agent: false, ...(secureContext ? { secureContext } : {}), ...identity });
        } else {
          req = http.request(url, { method, headers, agent: false });
        }
      } catch (error) {
        finish({ ok: false, reason: 'unreachable', error: messageOf(error), latencyMs: elapsed() });
        return;
      }
      timer = scheduler.setTimeout(() => {
        req.destroy(new CallAbort('timeout', `no complete answer within ${timeoutMs} ms`));
      }, timeoutMs);
      signal?.addEventListener('abort', cut, { once: true });
      let handshakeDone = false;
      let answered = false;
      req.on('socket', (socket) => {
        socket.once('secureConnect', () => {
          handshakeDone = true;
          const certificate = (socket as TLSSocket).getPeerCertificate();
          const notAfter = Date.parse(certificate.valid_to);
          if (Number.isFinite(notAfter)) this.options.onPeerCertificate?.(node, notAfter, certificate);
        });
      });
      req.on('error', (error: NodeJS.ErrnoException) => {
        if (error instanceof CallAbort) {
          finish({ ok: false, reason: error.reason, error: error.message, latencyMs: elapsed() });
          return;
        }
        // A TLS failure in the operator's words, naming the group's file (not OpenSSL's string).
        const tls = url.protocol === 'https:' ? tlsProblemOf(error, handshakeDone, answered) : null;
        if (tls !== null) {
          finish({ ok: false, reason: 'tls', error: describeTlsProblem(tls, this.tlsParties(node, url)), latencyMs: elapsed() });
          return;
        }
        finish({ ok: false, reason: classifyError(error), error: `${error.code ?? 'error'}: ${oneLine(error.message, 200)}`, latencyMs: elapsed() });
      });
      req.on('response', (res) => {
        answered = true;
        const { reader } = options;
        if (reader !== undefined && res.statusCode !== 401 && res.statusCode !== 403) {
          const status = res.statusCode ?? 0;
          const refused = reader.head(status, res.headers['content-type']);
          if (refused !== null) {
            req.destroy(new CallAbort('bad_response', refused));
            return;
          }
          const conclude = (): void => {
            const ended = reader.end();
            if ('problem' in ended) finish({ ok: false, reason: 'bad_response', status, error: ended.problem, latencyMs: elapsed() });
            else finish({ ok: true, status, body: ended.value, text: '', latencyMs: elapsed() });
          };
          res.on('data', (chunk: Buffer) => {
            if (settled) return;
            const step = reader.write(chunk);
            if (step === null) return;
            if (step !== 'done') {
              req.destroy(new CallAbort('bad_response', step.problem));
              return;
            }
            // The rest is not needed: the answer so far is the call's, and the connection closes.
            conclude();
            req.destroy();
          });
          res.on('error', (error: NodeJS.ErrnoException) => {
            if (!(error instanceof CallAbort)) finish({ ok: false, reason: 'bad_response', error: `answer cut: ${error.message}`, latencyMs: elapsed() });
          });
          res.on('end', conclude);
          return;
        }
        const declared = Number(res.headers['content-length'] ?? 0);
        if (declared > maxResponseBytes) {
          req.destroy(new CallAbort('bad_response', `answer of ${declared} bytes is over the ${maxResponseBytes}-byte limit`));
          return;
        }
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > maxResponseBytes) {
            req.destroy(new CallAbort('bad_response', `answer over the ${maxResponseBytes}-byte limit`));
            return;
          }
          chunks.push(chunk);
        });
        res.on('error', (error: NodeJS.ErrnoException) => {
          if (!(error instanceof CallAbort)) finish({ ok: false, reason: 'bad_response', error: `answer cut: ${error.message}`, latencyMs: elapsed() });
        });
        res.on('end', () => {
          const status = res.statusCode ?? 0;
          const text = Buffer.concat(chunks).toString('utf8');
          if (status === 401 || status === 403) {
            finish({ ok: false, reason: 'unauthorized', status, error: `${status}: ${errorText(text)}`, latencyMs: elapsed() });
            return;
          }
          let parsed: unknown = undefined;
          if (text.trim() !== '') {
            try {
              parsed = JSON.parse(text);
            } catch {
              finish({
                ok: false,
                reason: 'bad_response',
                status,
                error: `${status} with a body that is not JSON: ${text.slice(0, 80)}`,
                latencyMs: elapsed(),
              });
              return;
            }
          }
          finish({ ok: true, status, body: parsed, text, latencyMs: elapsed() });
        });
      });
      req.end(payload);
    });
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
