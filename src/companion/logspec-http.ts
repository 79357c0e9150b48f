/**
 * `/logspec` in companion mode (docs/companion.md, "The node's log level"): fabric-ops' own
 * `/logspec` acts on the node. Fabric's answers: GET 200 `{"spec": ...}` (the node's), PUT 204, a
 * bad body or spec 400 `{"error": ...}`; PUT also takes an optional `ttl` (a Go duration, as the
 * fleet's). A write needs `operations.companion.logspec.writable` (else 403) and a client
 * certificate verified against the companion's client CAs, whatever `clientAuthRequired` says
 * (else 401): never less than the node's own endpoint asks. A node that cannot be reached is 502
 * (504 when it did not answer in time).
 */
import { Router, type Request, type RequestHandler, type Response } from 'express';
import { FabricOpsError, LogSpecError, messageOf } from '../errors';
import { parsePositiveDurationMs } from '../config/values';
import type { PutBackPersistError } from '../fleet/putback-store';
import { readBodyOrAnswer } from '../http/body-answer';
import { sendError } from '../http/errors';
import { previewJson } from '../http/handlers/logspec';
import { sendJson } from '../http/json';
import { requireClientCertificate, verifiedClientIdentity } from '../http/middleware/client-auth';
import { checkNormalisedLength } from '../logging/spec';
import type { Logger } from '../logging/types';
import { clip } from '../text';
import { NodeLogSpecRequestError, type NodeLogSpec, type NodeLogSpecFailure } from './logspec';

/**
 * A PutBackPersistError, told by its code: ../fleet/putback-store (and node:fs/promises with it) is
 * loaded only with a state directory, the only source of this error (docs/companion.md, "Footprint").
 */
function isPutBackPersistError(error: unknown): error is PutBackPersistError {
  return error instanceof FabricOpsError && error.code === 'FABRIC_OPS_PUT_BACK_PERSIST';
}

export interface NodeLogSpecRouteOptions {
  /** fabric-ops' own server has TLS (GET then needs a client certificate, as on the node). */
  tlsEnabled: boolean;
  writable: boolean;
  /** The key that turns writes on, for the 403. */
  writableKey: string;
  maxBodyBytes: number;
  logger: Logger;
}

const allowed = 'GET, HEAD, PUT, OPTIONS';

/** `{"spec":""}`: what a PUT body adds to the spec it carries (a spec GET returns can be PUT back). */
const emptyBodyBytes = Buffer.byteLength(JSON.stringify({ spec: '' }));

const bodyShape = '{"spec": "<logging specification>"} or {"spec": "...", "ttl": "<Go duration>"}';

/** Pure: the spec and TTL of a PUT body, or why it is not `{"spec": string, "ttl"?: string}` (a bounded sentence). */
export function parseNodeLogSpecBody(text: string): { ok: true; spec: string; ttl?: string } | { ok: false; problem: string } {
  if (text.trim() === '') return { ok: false, problem: `request body is empty; expected ${bodyShape}` };
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch (error) {
    return { ok: false, problem: `request body is not valid JSON: ${clip(messageOf(error), 120)}` };
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    return {
      ok: false,
      problem: `request body must be a JSON object ${bodyShape}; got ${Array.isArray(body) ? 'an array' : body === null ? 'null' : `a ${typeof body}`}`,
    };
  }
  const record = body as Record<string, unknown>;
  const extra = Object.keys(record).filter((key) => key !== 'spec' && key !== 'ttl');
  if (extra.length > 0) {
    const named = extra.slice(0, 5).map((key) => JSON.stringify(clip(key, 40)));
    if (extra.length > 5) named.push(`and ${extra.length - 5} more`);
    return { ok: false, problem: `unknown ${extra.length === 1 ? 'property' : 'properties'} ${named.join(', ')}: the body may contain only "spec" and "ttl"` };
  }
  if (!('spec' in record)) return { ok: false, problem: 'request body has no "spec" property' };
  if (typeof record.spec !== 'string') return { ok: false, problem: `"spec" must be a string; got ${previewJson(record.spec)}` };
  if ('ttl' in record && typeof record.ttl !== 'string')
    return { ok: false, problem: `"ttl" must be a Go duration string such as "15m"; got ${previewJson(record.ttl)}` };
  return { ok: true, spec: record.spec, ...(typeof record.ttl === 'string' ? { ttl: record.ttl } : {}) };
}

/** The status a failed node call is answered with: the node's own refusal of a spec is the client's 400. */
function statusFor(failure: NodeLogSpecFailure): number {
  if (failure.reason === 'rejected') return 400;
  if (failure.reason === 'timeout') return 504;
  return 502;
}

function failureMessage(failure: NodeLogSpecFailure): string {
  return failure.reason === 'rejected' ? failure.error : `the node's /logspec: ${failure.reason}: ${failure.error}`;
}

export function nodeLogSpecRouter(logspec: NodeLogSpec, options: NodeLogSpecRouteOptions): Router {
  const router = Router({ caseSensitive: true, strict: true });
  const clientCertificate = requireClientCertificate(options.tlsEnabled, options.logger);

  /** A write: turned on, and from a verified client certificate (its subject is the audit line's actor). */
  const writer: RequestHandler = (req, res, next) => {
    if (!options.writable) {
      sendError(res, 403, `the node's logging specification is read-only through fabric-ops: ${options.writableKey} is false`);
      return;
    }
    const identity = verifiedClientIdentity(req);
    if (identity === undefined) {
      options.logger.warn('client certificate required', { method: req.method, path: req.path, remoteAddress: req.socket.remoteAddress });
      sendError(res, 401, 'a client certificate issued by a trusted client CA is required to change the node logging specification');
      return;
    }
    res.locals.writer = {
      actor: identity.subject,
      fields: { issuer: identity.issuer, fingerprint256: identity.fingerprint256, remoteAddress: req.socket.remoteAddress ?? 'unknown' },
    };
    next();
  };

  const get = async (_req: Request, res: Response): Promise<void> => {
    const read = await logspec.read();
    if (res.headersSent) return;
    if (read.ok) sendJson(res, 200, { spec: read.raw });
    else sendError(res, statusFor(read), failureMessage(read));
  };

  const put = async (req: Request, res: Response): Promise<void> => {
    const text = await readBodyOrAnswer(req, res, options.maxBodyBytes);
    if (text === null) return;
    const parsed = parseNodeLogSpecBody(text);
    if (!parsed.ok) {
      sendError(res, 400, parsed.problem);
      return;
    }
    let ttlMs: number | null = null;
    if (parsed.ttl !== undefined) {
      const duration = parsePositiveDurationMs(parsed.ttl);
      if (!duration.ok) {
        sendError(res, 400, `ttl: ${duration.problem}`);
        return;
      }
      ttlMs = duration.value;
    }
    try {
      checkNormalisedLength(parsed.spec, options.maxBodyBytes - emptyBodyBytes);
      const result = await logspec.set(parsed.spec, ttlMs, res.locals.writer as { actor: string; fields: Record<string, string> });
      if (res.headersSent) return;
      if (result.ok) res.status(204).end();
      else sendError(res, statusFor(result), failureMessage(result));
    } catch (error) {
      if (res.headersSent) return;
      if (error instanceof LogSpecError || error instanceof NodeLogSpecRequestError) sendError(res, 400, error.message);
      else if (isPutBackPersistError(error)) sendError(res, 500, `${error.message}; the node was not changed`);
      else throw error;
    }
  };

  const route = router.route('/logspec');
  route.get(clientCertificate, get);
  route.put(writer, put);
  route.options((_req, res) => {
    res.setHeader('Allow', allowed);
    res.status(204).end();
  });
  route.all(clientCertificate, (req, res) => {
    res.setHeader('Allow', allowed);
    sendError(res, 405, `method ${req.method} not allowed on /logspec; allowed: ${allowed}`);
  });
  return router;
}
