import { ConfigError } from '../errors';

/** The operations server's limits, as Fabric's Go server has them where it has one. */

/** Headers and body within 10 s (Go: ReadTimeout / ReadHeaderTimeout); the TLS handshake gets the same. */
const readTimeoutMs = 10_000;
/** Idle keep-alive connections are closed after 5 s. */
const keepAliveTimeoutMs = 5_000;
/** A response not started within 2 min is given up (503). */
const responseTimeoutMs = 2 * 60 * 1000;
/** Request bodies (PUT /logspec) over this are refused with 413. */
export const maxBodyBytes = 16 * 1024;
/** Default of operations.maxConnections / Operations.MaxConnections. */
export const defaultMaxConnections = 1024;
/** A connection that has sent no byte at all (no request, no ClientHello) within this is closed. */
const firstByteTimeoutMs = 2_000;
/** Requests read ahead on one connection while an earlier one is answered; past this the server stops reading from it. */
const maxPipelinedRequests = 16;

/**
 * The limits of the server, injectable (as Fabric's server takes its timeouts) so that an embedder
 * or a test can shorten them; every field defaults to the constant above.
 */
export interface HttpLimits {
  /** Headers and body of a request must arrive within this (408 after). */
  readTimeoutMs: number;
  /** The TLS handshake must finish within this; default readTimeoutMs. */
  handshakeTimeoutMs: number;
  /** A connection that sends no byte within this is closed; at most readTimeoutMs. */
  firstByteTimeoutMs: number;
  /** An idle keep-alive connection is closed after this. */
  keepAliveTimeoutMs: number;
  /** A response not started within this is given up (503); one started and not finished is cut. */
  responseTimeoutMs: number;
  /** Request bodies over this are refused (413). */
  maxBodyBytes: number;
  /** Requests read ahead on one connection before the server stops reading from it. */
  maxPipelinedRequests: number;
}

export function httpLimits(overrides: Partial<HttpLimits> = {}): HttpLimits {
  const read = overrides.readTimeoutMs ?? readTimeoutMs;
  const limits: HttpLimits = {
    readTimeoutMs: read,
    handshakeTimeoutMs: overrides.handshakeTimeoutMs ?? read,
    firstByteTimeoutMs: Math.min(overrides.firstByteTimeoutMs ?? firstByteTimeoutMs, read),
    keepAliveTimeoutMs: overrides.keepAliveTimeoutMs ?? keepAliveTimeoutMs,
    responseTimeoutMs: overrides.responseTimeoutMs ?? responseTimeoutMs,
    maxBodyBytes: overrides.maxBodyBytes ?? maxBodyBytes,
    maxPipelinedRequests: overrides.maxPipelinedRequests ?? maxPipelinedRequests,
  };
  const problems = Object.entries(limits)
    .filter(([, value]) => !Number.isSafeInteger(value) || value < 1 || value > 2 ** 31 - 1)
    .map(([key, value]) => `httpLimits.${key} must be a whole number from 1 to 2147483647; got ${String(value)}`);
  if (problems.length > 0) throw new ConfigError(problems);
  return limits;
}

/** 120000 -> "120s", 250 -> "0.25s", for messages. */
export function seconds(ms: number): string {
  return `${ms / 1000}s`;
}
