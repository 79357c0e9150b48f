/**
 * The one outbound HTTP request of fabric-ops: the fleet's node client (src/fleet/client.ts), the
 * `fabric-ops fleet` command (src/fleet/cli.ts), the Kubernetes transport's requests
 * (src/kubernetes/transport.ts; its watch stream is its own) and the Docker checker
 * (src/health/docker-checker.ts) each make one request with it and say its failures in their own
 * words. On the ground floor beside time.ts: it imports node: modules, time.ts and errors.ts only.
 *
 * One request, one connection (no keep-alive unless the caller gives an agent), bounded by one
 * timer over the whole of it (connect, handshake, request, answer), by an AbortSignal and by a
 * cap on the answer's size. It never rejects: every failure is an OutboundFailure.
 */
import * as http from 'node:http';
import * as https from 'node:https';
import type { ConnectionOptions, TLSSocket } from 'node:tls';
import { messageOf } from './errors';
import { realScheduler, type Cancellable, type Scheduler } from './time';

/** What a request may be told about TLS (an https: URL only): files' contents, or a SecureContext made once, and how the peer's name is checked. */
export type OutboundTls = Pick<
  ConnectionOptions,
  'ca' | 'cert' | 'key' | 'pfx' | 'passphrase' | 'secureContext' | 'servername' | 'checkServerIdentity' | 'rejectUnauthorized' | 'minVersion'
>;

/** The status line and headers of an answer, before its body. */
export interface AnswerHead {
  status: number;
  statusMessage: string;
  headers: http.IncomingHttpHeaders;
}

/**
 * Reads a body as it arrives instead of keeping it whole (a node's /metrics: hundreds of KB of
 * which a few lines matter). It bounds what it keeps itself: the request's byte cap is for a body
 * kept whole.
 */
export interface StreamReader {
  /** A piece of the body: null reads on, `done` ends the request here (the connection is closed), a problem ends it as `bad_response`. */
  write(chunk: Buffer): null | 'done' | { problem: string };
  /** The body ended, or write said `done`: the answer's `read`, or why it is bad. */
  end(): { value: unknown } | { problem: string };
}

export interface OutboundRequest {
  /** http: or https:. With socketPath, only its path and query are used (and its host for the Host header). */
  url: string | URL;
  /** A unix socket to connect to instead of the URL's host and port. */
  socketPath?: string;
  /** Default GET. */
  method?: string;
  /** Sent as given: nothing is added (the caller sets Content-Type, Accept, Connection). */
  headers?: http.OutgoingHttpHeaders;
  body?: string | Buffer;
  tls?: OutboundTls;
  /** Default none: a fresh connection (the fleet sees every handshake's certificate). The Kubernetes transport gives client-node's (its proxy). */
  agent?: http.Agent;
  /** One timer over the whole request; none when absent. */
  timeoutMs?: number;
  /** Where the timer runs; default realScheduler. */
  scheduler?: Scheduler;
  /** Aborting it ends the request (`aborted`); aborted already, nothing is sent. */
  signal?: AbortSignal;
  /** The largest body kept whole, declared (Content-Length) or received; over it: `too_large`. */
  maxBytes: number;
  /** Parse the body kept whole as JSON (OutboundAnswer.json). */
  json?: boolean;
  /** Called with the head of the answer: a reader takes the body as it comes; null keeps it whole; a problem refuses the answer (`bad_response`). */
  reader?(head: AnswerHead): StreamReader | { problem: string } | null;
  /** The TLS handshake completed (the peer's certificate can be read from the socket). */
  onSecureConnect?(socket: TLSSocket): void;
}

/** What the callers need to word a failure themselves: how far the request got. */
export interface Progress {
  /** The TLS handshake completed (`secureConnect`) before the failure. */
  handshakeDone: boolean;
  /** The answer's head had arrived. */
  answered: boolean;
  /** Set when answered. */
  status?: number;
  statusMessage?: string;
}

export interface OutboundAnswer extends AnswerHead, Pick<Progress, 'handshakeDone' | 'answered'> {
  ok: true;
  /** The body kept whole; empty when a reader took it. */
  bytes: Buffer;
  text: string;
  /** With `json`: the parsed body, or why it does not parse; absent for a body that is empty or white space. */
  json?: { value: unknown } | { problem: string };
  /** What the reader's end() gave, when a reader took the body. */
  read?: unknown;
}

export type OutboundFailureReason = 'timeout' | 'unreachable' | 'tls' | 'too_large' | 'aborted' | 'bad_response';

/**
 * Why a bad_response was bad: `not-http` (Node's parser refused the peer's bytes, an HPE_ code),
 * `cut` (the connection ended in the middle of the answer), `refused-head`, `refused-body`,
 * `refused-end` (the reader refused the answer's head, a piece of its body, or its end).
 */
export type BadResponseKind = 'not-http' | 'cut' | 'refused-head' | 'refused-body' | 'refused-end';

/** A failure's reason and what goes with it. */
export type FailureDetail =
  | { reason: 'timeout'; error: Error }
  /** `declaredBytes`: the Content-Length that was over the cap; absent when the body grew over it. */
  | { reason: 'too_large'; error: Error; declaredBytes?: number }
  /** `error`: the signal's reason. */
  | { reason: 'aborted'; error: unknown }
  /** `error`: Node's (ECONNREFUSED, ENOENT for a socket, ERR_TLS_CERT_ALTNAME_INVALID, ...), or what the request could not be made with. */
  | { reason: 'unreachable' | 'tls'; error: NodeJS.ErrnoException }
  /** `error`: Node's for not-http and cut; for a refusal, an Error whose message is the reader's problem. */
  | { reason: 'bad_response'; kind: BadResponseKind; error: NodeJS.ErrnoException };

export type OutboundFailure = Progress & { ok: false } & FailureDetail;

export type OutboundResult = OutboundAnswer | OutboundFailure;

const tlsCodes = /^(ERR_SSL_|ERR_TLS_|UNABLE_TO_|CERT_|DEPTH_ZERO_|SELF_SIGNED_|HOSTNAME_MISMATCH$|EPROTO$)/;

/** Pure: whether a connection's error is a TLS one (by its code). */
export function isTlsError(error: { code?: string }): boolean {
  return tlsCodes.test(error.code ?? '');
}

/** Pure: a body as JSON, or why it is not; undefined for an empty or white-space body. */
function parseJson(text: string): OutboundAnswer['json'] {
  if (text.trim() === '') return undefined;
  try {
    return { value: JSON.parse(text) as unknown };
  } catch (error) {
    return { problem: messageOf(error) };
  }
}

/** One request (see the file's comment); resolves with the answer, whatever its status, or the failure. */
export function outboundRequest(options: OutboundRequest): Promise<OutboundResult> {
  const { signal, maxBytes } = options;
  const progress: Progress = { handshakeDone: false, answered: false };
  if (signal?.aborted) return Promise.resolve({ ok: false, reason: 'aborted', error: signal.reason as unknown, ...progress });
  return new Promise<OutboundResult>((resolve) => {
    let settled = false;
    let timer: Cancellable | null = null;
    let req: http.ClientRequest | null = null;
    const settle = (result: OutboundResult): void => {
      if (settled) return;
      settled = true;
      timer?.cancel();
      signal?.removeEventListener('abort', onAbort);
      resolve(result);
    };
    // Settled first, then the connection closed: what the destroy makes Node emit is not heard.
    const fail = (detail: FailureDetail): void => {
      settle({ ok: false, ...progress, ...detail });
      req?.destroy();
    };
    const onAbort = (): void => fail({ reason: 'aborted', error: signal?.reason });

    const common: http.RequestOptions = {
      method: options.method ?? 'GET',
      headers: options.headers ?? {},
      agent: options.agent ?? false,
      ...(options.socketPath === undefined ? {} : { socketPath: options.socketPath }),
    };
    try {
      const url = typeof options.url === 'string' ? new URL(options.url) : options.url;
      req = url.protocol === 'https:' ? https.request(url, { ...common, ...options.tls }) : http.request(url, common);
    } catch (error) {
      // A URL or options Node refuses (a header with a line break, an unknown protocol).
      fail({ reason: 'unreachable', error: error as NodeJS.ErrnoException });
      return;
    }
    const request = req;
    if (options.timeoutMs !== undefined) {
      const timeoutMs = options.timeoutMs;
      timer = (options.scheduler ?? realScheduler).setTimeout(() => {
        fail({ reason: 'timeout', error: new Error(`no complete answer within ${timeoutMs} ms`) });
      }, timeoutMs);
    }
    signal?.addEventListener('abort', onAbort, { once: true });

    request.on('socket', (socket) => {
      socket.once('secureConnect', () => {
        progress.handshakeDone = true;
        options.onSecureConnect?.(socket as TLSSocket);
      });
    });
    request.on('error', (error: NodeJS.ErrnoException) => {
      const code = error.code ?? '';
      if (code.startsWith('HPE_')) fail({ reason: 'bad_response', kind: 'not-http', error });
      else fail({ reason: isTlsError(error) ? 'tls' : 'unreachable', error });
    });
    request.on('response', (res) => {
      const head: AnswerHead = { status: res.statusCode ?? 0, statusMessage: res.statusMessage ?? '', headers: res.headers };
      Object.assign(progress, { answered: true, status: head.status, statusMessage: head.statusMessage });
      let ended = false;
      const cut = (error: NodeJS.ErrnoException): void => {
        if (!ended) fail({ reason: 'bad_response', kind: 'cut', error });
      };
      res.on('error', cut);
      // Node emits `error` before `close` when the connection drops mid-answer; `close` alone is the same fact.
      res.on('close', () => cut(new Error('the connection closed before the whole answer arrived')));

      const reader = options.reader?.(head) ?? null;
      if (reader !== null && 'problem' in reader) {
        fail({ reason: 'bad_response', kind: 'refused-head', error: new Error(reader.problem) });
        return;
      }
      if (reader !== null) {
        const conclude = (): void => {
          if (ended) return;
          ended = true;
          const read = reader.end();
          if ('problem' in read) fail({ reason: 'bad_response', kind: 'refused-end', error: new Error(read.problem) });
          else settle({ ok: true, ...progress, ...head, bytes: Buffer.alloc(0), text: '', read: read.value });
        };
        res.on('data', (chunk: Buffer) => {
          if (settled) return;
          const step = reader.write(chunk);
          if (step === null) return;
          if (step !== 'done') fail({ reason: 'bad_response', kind: 'refused-body', error: new Error(step.problem) });
          else {
            // The rest is not needed: the answer so far is the request's, and the connection closes.
            conclude();
            request.destroy();
          }
        });
        res.on('end', conclude);
        return;
      }

      const declared = Number(res.headers['content-length'] ?? 0);
      if (declared > maxBytes) {
        fail({ reason: 'too_large', declaredBytes: declared, error: new Error(`answer of ${declared} bytes is over the ${maxBytes}-byte limit`) });
        return;
      }
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (chunk: Buffer) => {
        if (settled) return;
        size += chunk.length;
        if (size > maxBytes) fail({ reason: 'too_large', error: new Error(`answer over the ${maxBytes}-byte limit`) });
        else chunks.push(chunk);
      });
      res.on('end', () => {
        ended = true;
        const bytes = Buffer.concat(chunks);
        const text = bytes.toString('utf8');
        const json = options.json === true ? parseJson(text) : undefined;
        settle({ ok: true, ...progress, ...head, bytes, text, ...(json === undefined ? {} : { json }) });
      });
    });
    request.end(options.body);
  });
}
