import { isIP } from 'node:net';
import { FabricOpsError, TlsMaterialError, messageOf } from '../errors';
import { outboundRequest } from '../http-client';
import { describeAbort } from './abort-reasons';
import { formatRuntimeEndpoint, type RuntimeEndpoint } from './endpoint';
import { describeRefusedSocket, excerpt } from './quote';
import type { CheckResult, HealthChecker } from './types';
import { readPemFileSync } from '../tls/files';

/** Client TLS for a Docker daemon over TCP (Fabric's `vm.docker.tls.*`). */
export interface DockerTlsFiles {
  /** PEM CA file the daemon's certificate must chain to; '' for the system's CAs. */
  caFile: string;
  /** PEM client certificate and key; both '' to present none. */
  certFile: string;
  keyFile: string;
}

export interface DockerCheckerOptions {
  endpoint: RuntimeEndpoint;
  /** Only for a TCP endpoint; null or absent means plain HTTP. */
  tls?: DockerTlsFiles | null;
}

export interface DockerVersion {
  version: string;
  apiVersion: string;
}

/** What went wrong talking to the daemon, in words a person understands. */
export class DockerRequestError extends FabricOpsError {
  override readonly code = 'FABRIC_OPS_DOCKER_REQUEST';
}

const maxBodyBytes = 64 * 1024;

interface TlsMaterial {
  ca?: Buffer;
  cert?: Buffer;
  key?: Buffer;
}

/**
 * The `docker` health checker: `GET /_ping` of the Docker Engine API, over a unix socket or
 * TCP with optional TLS. Fails with `failed to ping to Docker daemon: <cause>`, as Fabric.
 */
export class DockerChecker implements HealthChecker {
  readonly endpoint: RuntimeEndpoint;
  private readonly tls: TlsMaterial | null;

  /** Throws TlsMaterialError when a TLS file cannot be read. */
  constructor(options: DockerCheckerOptions) {
    this.endpoint = options.endpoint;
    this.tls = options.tls && options.endpoint.kind === 'tcp' ? readTlsFiles(options.tls) : null;
  }

  async check(signal: AbortSignal): Promise<CheckResult> {
    try {
      await this.ping(signal);
      return { ok: true };
    } catch (error) {
      return { ok: false, reason: `failed to ping to Docker daemon: ${messageOf(error)}` };
    }
  }

  /** Resolves when the daemon answers `GET /_ping` with 200; otherwise rejects with a DockerRequestError. */
  async ping(signal: AbortSignal): Promise<void> {
    const answer = await this.get('/_ping', signal);
    if (answer.status !== 200) throw new DockerRequestError(unexpectedAnswer(answer));
  }

  /** `GET /version`: identifies a Docker Engine (used by `auto` and for the start-up log). */
  async version(signal: AbortSignal): Promise<DockerVersion> {
    const answer = await this.get('/version', signal);
    if (answer.status !== 200) throw new DockerRequestError(unexpectedAnswer(answer));
    let parsed: unknown;
    try {
      parsed = JSON.parse(answer.body);
    } catch {
      throw new DockerRequestError(`unexpected answer to GET /version: not JSON: ${excerpt(answer.body)}`);
    }
    const fields = typeof parsed === 'object' && parsed !== null ? (parsed as Record<string, unknown>) : {};
    if (typeof fields.ApiVersion !== 'string' || typeof fields.Version !== 'string') {
      throw new DockerRequestError(`unexpected answer to GET /version: no Version and ApiVersion: ${excerpt(answer.body)}`);
    }
    return { version: fields.Version, apiVersion: fields.ApiVersion };
  }

  private async get(path: string, signal: AbortSignal): Promise<{ status: number; body: string }> {
    const endpoint = this.endpoint;
    const common = { headers: { accept: 'application/json' }, signal, maxBytes: maxBodyBytes };
    let answer;
    if (endpoint.kind === 'unix') answer = await outboundRequest({ ...common, url: `http://localhost${path}`, socketPath: endpoint.socketPath });
    else {
      const host = isIP(endpoint.host) === 6 ? `[${endpoint.host}]` : endpoint.host;
      const tls = this.tls && { ...this.tls, servername: isIP(endpoint.host) === 0 ? endpoint.host : undefined, minVersion: 'TLSv1.2' as const };
      answer = await outboundRequest({ ...common, url: `${tls ? 'https' : 'http'}://${host}:${endpoint.port}${path}`, ...(tls ? { tls } : {}) });
    }
    if (answer.ok) return { status: answer.status, body: answer.text };
    // Whatever broke the request, a signal that aborted says why (the check's timeout).
    if (signal.aborted) throw new DockerRequestError(describeAbort(signal));
    const status = answer.status ?? 0;
    if (answer.reason === 'too_large') throw new DockerRequestError(`unexpected answer: HTTP ${status} with a body over ${maxBodyBytes} bytes`);
    if (answer.reason === 'bad_response' && answer.kind === 'cut') {
      throw new DockerRequestError(`the connection closed before the whole answer arrived (HTTP ${status})`);
    }
    throw new DockerRequestError(describeRequestError(answer.error, endpoint));
  }
}

function readTlsFiles(files: DockerTlsFiles): TlsMaterial {
  const read = (path: string, what: string): Buffer | undefined => {
    if (path === '') return undefined;
    // Regular files only, opened without blocking (a FIFO here would otherwise hang the start).
    const file = readPemFileSync(path);
    if (!file.ok) throw new TlsMaterialError(path, `cannot read the Docker TLS ${what} ${path}: ${file.problem}`);
    return file.bytes;
  };
  if ((files.certFile === '') !== (files.keyFile === '')) {
    const missing = files.certFile === '' ? files.keyFile : files.certFile;
    throw new TlsMaterialError(missing, `Docker TLS needs both a client certificate and its key; only ${missing} is set`);
  }
  return { ca: read(files.caFile, 'CA file'), cert: read(files.certFile, 'client certificate'), key: read(files.keyFile, 'client key') };
}

function unexpectedAnswer(answer: { status: number; body: string }): string {
  let text = answer.body;
  try {
    const parsed: unknown = JSON.parse(answer.body);
    if (typeof parsed === 'object' && parsed !== null && typeof (parsed as { message?: unknown }).message === 'string') {
      text = (parsed as { message: string }).message;
    }
  } catch {
    // not JSON: the body as it is
  }
  return `unexpected answer HTTP ${answer.status}${text.trim() === '' ? '' : `: ${excerpt(text)}`}`;
}

const tlsErrorCodes = /^(ERR_TLS_|ERR_SSL_|UNABLE_TO_|CERT_|DEPTH_ZERO_|SELF_SIGNED_|HOSTNAME_MISMATCH)/;

/** Turns a Node socket/HTTP/TLS error into a cause a person understands. */
export function describeRequestError(error: unknown, endpoint: RuntimeEndpoint): string {
  if (error instanceof DockerRequestError) return error.message;
  const err = error as NodeJS.ErrnoException;
  const code = err?.code ?? '';
  const message = err?.message ?? String(error);
  const where = formatRuntimeEndpoint(endpoint);
  if (endpoint.kind === 'unix') {
    const path = endpoint.socketPath;
    switch (code) {
      case 'ENOENT':
        return `socket ${path} does not exist (is the Docker daemon running, and is its socket mounted here?)`;
      case 'EACCES':
      case 'EPERM':
        return `permission denied on socket ${path} (the process needs read and write access to it)`;
      case 'ECONNREFUSED':
        return describeRefusedSocket(path);
      case 'ENOTSOCK':
        return `${path} is not a socket`;
    }
  } else {
    switch (code) {
      case 'ECONNREFUSED':
        return `connection refused by ${where}`;
      case 'ENOTFOUND':
      case 'EAI_AGAIN':
        return `cannot resolve host ${endpoint.host}`;
      case 'EHOSTUNREACH':
      case 'ENETUNREACH':
        return `${where} is unreachable (${code})`;
      case 'ETIMEDOUT':
        return `connecting to ${where} timed out`;
    }
    if (tlsErrorCodes.test(code) || /SSL|TLS|certificate/i.test(message)) return `TLS handshake with ${where} failed: ${message}`;
  }
  if (code === 'ECONNRESET' || message === 'socket hang up') {
    return `${where} closed the connection without an answer (is it a Docker Engine API endpoint?)`;
  }
  if (code.startsWith('HPE_')) return `unexpected answer from ${where}: not HTTP (${message})`;
  return message;
}
