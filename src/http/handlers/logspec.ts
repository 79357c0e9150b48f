import type { Request, Response } from 'express';
import { z } from 'zod';
import { LogSpecError } from '../../errors';
import type { OperationsDomain } from '../domain';
import { sendError } from '../errors';
import { verifiedClientSubject } from '../middleware/client-auth';

const LogSpecBody = z.object({ spec: z.string() }).strict();

type ParsedBody = { ok: true; value: unknown } | { ok: false; problem: string };

function parseJsonBody(raw: unknown): ParsedBody {
  const text = typeof raw === 'string' ? raw : '';
  if (text.trim() === '') return { ok: false, problem: 'request body is empty; expected {"spec": "<logging specification>"}' };
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch (err) {
    return { ok: false, problem: `request body is not valid JSON: ${(err as Error).message}` };
  }
}

/** Explains, in one sentence, why a parsed JSON body is not `{"spec": "<string>"}`. */
export function describeBodyProblem(body: unknown): string | null {
  const result = LogSpecBody.safeParse(body);
  if (result.success) return null;
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    return `request body must be a JSON object {"spec": "<logging specification>"}; got ${Array.isArray(body) ? 'an array' : typeof body === 'object' ? 'null' : `a ${typeof body}`}`;
  }
  const extra = Object.keys(body).filter((key) => key !== 'spec');
  if (extra.length > 0) {
    return `unknown ${extra.length === 1 ? 'property' : 'properties'} ${extra.map((k) => JSON.stringify(k)).join(', ')}: the body must contain only "spec"`;
  }
  if (!('spec' in body)) return 'request body has no "spec" property';
  return `"spec" must be a string; got ${JSON.stringify((body as { spec: unknown }).spec)}`;
}

export function getLogSpec(domain: OperationsDomain) {
  return (_req: Request, res: Response): void => {
    res.status(200).json({ spec: domain.getLogSpec() });
  };
}

export function putLogSpec(domain: OperationsDomain) {
  return (req: Request, res: Response): void => {
    const parsed = parseJsonBody(req.body);
    const problem = parsed.ok ? describeBodyProblem(parsed.value) : parsed.problem;
    if (problem !== null) {
      sendError(res, 400, problem);
      return;
    }
    const { spec } = (parsed as { value: { spec: string } }).value;
    try {
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
    res.status(204).end();
  };
}
