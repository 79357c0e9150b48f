import type http from 'node:http';
import { messageOf } from '../errors';
import { bounded, KubernetesApiError } from './api-error';
import type { WatchEnd, WatchStream } from './transport-options';

/** Largest body read from one answer, and the largest event of a watch: a ConfigMap holds at most 1 MiB. */
export const maxBodyBytes = 3 * 1024 * 1024;
export const tooLarge = `the answer is larger than ${maxBodyBytes} bytes`;

export function networkError(method: string, path: string, error: unknown): KubernetesApiError {
  if (error instanceof KubernetesApiError) return error;
  return new KubernetesApiError(`${method} ${path}: ${messageOf(error)}`);
}

/** The body of an answer, at most maxBodyBytes (a longer one is an error). */
function readBody(response: http.IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    response.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBodyBytes) {
        response.destroy(new KubernetesApiError(tooLarge));
        return;
      }
      chunks.push(chunk);
    });
    response.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    response.on('error', reject);
  });
}

interface Settle<T> {
  resolve: (value: T) => void;
  reject: (error: KubernetesApiError) => void;
}

/**
 * One watch request (`?watch=true`) and its stream of JSON lines, as a WatchStream:
 * `connecting` until the server answers 200 (`connected` resolves; anything else rejects it
 * with the server's Status), `open` while events arrive (each line handed to `onEvent`), `done`
 * once it ended (`ended` says why: closed, idle, broken, aborted; a malformed stream rejects).
 * One inactivity timer covers both the connect and the silence of an open watch.
 */
export class WatchConnection implements WatchStream {
  readonly connected: Promise<void>;
  readonly ended: Promise<WatchEnd>;
  private settleConnected!: Settle<void>;
  private settleEnded!: Settle<WatchEnd>;
  private state: 'connecting' | 'open' | 'done' = 'connecting';
  private request: http.ClientRequest | null = null;
  private timer: NodeJS.Timeout | undefined;
  /** Text of the stream after its last complete line. */
  private pending = '';

  constructor(
    private readonly path: string,
    private readonly inactivityMs: number,
    private readonly onEvent: (type: string, object: unknown) => void,
    opened: Promise<http.ClientRequest>,
  ) {
    this.connected = new Promise<void>((resolve, reject) => (this.settleConnected = { resolve, reject }));
    this.ended = new Promise<WatchEnd>((resolve, reject) => (this.settleEnded = { resolve, reject }));
    // Whoever awaits only one of the two must not leave the other unhandled.
    this.connected.catch(() => undefined);
    this.ended.catch(() => undefined);
    this.arm();
    opened.then(
      (request) => this.start(request),
      (error: unknown) => this.fail(networkError('GET', path, error)),
    );
  }

  abort(): void {
    this.finish('aborted');
  }

  private start(request: http.ClientRequest): void {
    this.request = request;
    // The listener before any destroy(): a request destroyed without one (a stop or the
    // connect timer while the request was being made) emits an error nobody hears.
    request.on('error', (error) => (this.state === 'open' ? this.finish('broken') : this.fail(networkError('GET', this.path, error))));
    if (this.state === 'done') {
      request.destroy();
      return;
    }
    request.on('response', (response) => this.answered(response));
    request.end();
  }

  private answered(response: http.IncomingMessage): void {
    if (response.statusCode !== 200) {
      readBody(response).then(
        (text) => this.fail(KubernetesApiError.fromAnswer(response.statusCode ?? 0, response.statusMessage ?? '', text)),
        (error: unknown) => this.fail(networkError('GET', this.path, error)),
      );
      return;
    }
    this.state = 'open';
    this.settleConnected.resolve();
    this.arm();
    response.setEncoding('utf8');
    response.on('data', (chunk: string) => this.received(chunk));
    response.on('end', () => this.finish('closed'));
    response.on('close', () => this.finish('broken'));
    response.on('error', () => this.finish('broken'));
  }

  /** Each complete line is one event; a line that is not an event fails the watch. */
  private received(chunk: string): void {
    if (this.state !== 'open') return;
    this.arm();
    this.pending += chunk;
    let newline = this.pending.indexOf('\n');
    while (newline >= 0 && this.state === 'open') {
      const line = this.pending.slice(0, newline).trim();
      this.pending = this.pending.slice(newline + 1);
      newline = this.pending.indexOf('\n');
      if (line !== '') this.deliver(line);
    }
    if (this.pending.length > maxBodyBytes) this.fail(new KubernetesApiError(`GET ${this.path} (watch): an event larger than ${maxBodyBytes} bytes`));
  }

  private deliver(line: string): void {
    let event: { type?: unknown; object?: unknown };
    try {
      event = JSON.parse(line) as { type?: unknown; object?: unknown };
    } catch {
      this.fail(new KubernetesApiError(`GET ${this.path} (watch): malformed stream: ${bounded(line, 100)}`));
      return;
    }
    if (typeof event !== 'object' || event === null || typeof event.type !== 'string') {
      this.fail(new KubernetesApiError(`GET ${this.path} (watch): malformed event: ${bounded(line, 100)}`));
      return;
    }
    try {
      this.onEvent(event.type, event.object);
    } catch (error) {
      this.fail(new KubernetesApiError(`GET ${this.path} (watch): event not handled: ${bounded(messageOf(error), 100)}`));
    }
  }

  /** No byte within inactivityMs: a connect that never got an answer fails; an open watch ends `idle`. */
  private arm(): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      if (this.state === 'connecting') this.fail(new KubernetesApiError(`GET ${this.path} (watch): no answer within ${this.inactivityMs} ms`));
      else this.finish('idle');
    }, this.inactivityMs);
  }

  /** Ends the watch once: false when it had ended already. Done before the destroy, which may emit. */
  private close(): boolean {
    if (this.state === 'done') return false;
    this.state = 'done';
    clearTimeout(this.timer);
    this.request?.destroy();
    return true;
  }

  private fail(error: KubernetesApiError): void {
    const wasOpen = this.state === 'open';
    if (!this.close()) return;
    if (!wasOpen) this.settleConnected.reject(error);
    this.settleEnded.reject(error);
  }

  private finish(end: WatchEnd): void {
    const wasOpen = this.state === 'open';
    if (!this.close()) return;
    if (!wasOpen) this.settleConnected.reject(new KubernetesApiError(`GET ${this.path}: the watch was ${end} before the server answered`));
    this.settleEnded.resolve(end);
  }
}
