import { clip } from '../../text';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { LogSpecError, messageOf } from '../../errors';
import { checkNormalisedLength } from '../../logging/spec';
import { readBodyOrAnswer } from '../body-answer';
import type { OperationsDomain } from '../domain';
import { sendError } from '../errors';
import { sendJson } from '../json';
import { verifiedClientSubject } from '../middleware/client-auth';

/**
 * `{"spec": "<string>"}` and nothing else. Checked by hand rather than with a zod schema:
 * describeBodyProblem below explains every other shape by hand anyway, and loading zod cost
 * every start about 90 ms of CPU for this one check.
 */
function isLogSpecBody(body: unknown): body is { spec: string } {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return false;
  const keys = Object.keys(body);
  return keys.length === 1 && keys[0] === 'spec' && typeof (body as { spec: unknown }).spec === 'string';
}

/** `{"spec":""}`: what a PUT body adds to the spec it carries. */
const emptyBodyBytes = Buffer.byteLength(JSON.stringify({ spec: '' }));

type ParsedBody = { ok: true; value: unknown } | { ok: false; problem: string };

function parseJsonBody(text: string): ParsedBody {
  if (text.trim() === '') return { ok: false, problem: 'request body is empty; expected {"spec": "<logging specification>"}' };
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch (err) {
    return { ok: false, problem: `request body is not valid JSON: ${clip(messageOf(err), 120)}` };
  }
}

/**
 * A short picture of any JSON value for an error message: at most two levels deep, three
 * items per level, 80 characters. Bounded whatever the client sent (no recursion into it).
 */
export function previewJson(value: unknown, depth = 0): string {
  const text = ((): string => {
    if (typeof value === 'string') return JSON.stringify(clip(value, 40));
    if (value === null || typeof value !== 'object') return String(value);
    const entries: Array<[string | null, unknown]> = Array.isArray(value) ? value.map((item): [null, unknown] => [null, item]) : Object.entries(value);
    const [open, close] = Array.isArray(value) ? ['[', ']'] : ['{', '}'];
    if (entries.length === 0) return `${open}${close}`;
    if (depth >= 2) return `${open}…${close}`;
    const shown = entries.slice(0, 3).map(([key, item]) => (key === null ? '' : `${JSON.stringify(clip(key, 20))}:`) + previewJson(item, depth + 1));
    if (entries.length > 3) shown.push('…');
    return `${open}${shown.join(',')}${close}`;
  })();
  return clip(text, 80);
}

function kindOf(value: unknown): string {
  if (Array.isArray(value)) return 'an array';
  if (value === null) return 'null';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}

/** Explains, in one bounded sentence, why a parsed JSON body is not `{"spec": "<string>"}`. */
function describeBodyProblem(body: unknown): string | null {
  if (isLogSpecBody(body)) return null;
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    return `request body must be a JSON object {"spec": "<logging specification>"}; got ${kindOf(body)}`;
  }
  const extra = Object.keys(body).filter((key) => key !== 'spec');
  if (extra.length > 0) {
    const named = extra.slice(0, 5).map((key) => JSON.stringify(clip(key, 40)));
    if (extra.length > 5) named.push(`and ${extra.length - 5} more`);
    return `unknown ${extra.length === 1 ? 'property' : 'properties'} ${named.join(', ')}: the body must contain only "spec"`;
  }
  if (!('spec' in body)) return 'request body has no "spec" property';
  const spec = body.spec;
  return `"spec" must be a string; got ${previewJson(spec)}`;
}

export function getLogSpec(domain: OperationsDomain) {
  return (_req: IncomingMessage, res: ServerResponse): void => {
    sendJson(res, 200, { spec: domain.getLogSpec() });
  };
}

export function putLogSpec(domain: OperationsDomain, maxBodyBytes: number) {
  return async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const text = await readBodyOrAnswer(req, res, maxBodyBytes);
    if (text === null) return;
    const parsed = parseJsonBody(text);
    const problem = parsed.ok ? describeBodyProblem(parsed.value) : parsed.problem;
    if (problem !== null) {
      sendError(res, 400, problem);
      return;
    }
    const { spec } = (parsed as { value: { spec: string } }).value;
    try {
      // What GET returns, PUT takes: the normalised spec must fit a body within the limit.
      checkNormalisedLength(spec, maxBodyBytes - emptyBodyBytes);
      domain.setLogSpec(spec, {
        remoteAddress: req.socket.remoteAddress ?? 'unknown',
        certificateSubject: verifiedClientSubject(req),
      });
    } catch (err) {
      if (err instanceof LogSpecError) {
        sendError(res, 400, err.message);
        return;
      }
      throw err;
    }
    res.statusCode = 204;
    res.end();
  };
}
