import { z } from 'zod';
import { parsePositiveDurationMs } from '../config/values';
import { ttlProblem, type SetLogSpecRequest } from './logspec';
import { selectorLabelsSchema } from './selector';
import { fleetDialects, type NodeSelector } from './types';
import { messageOf } from '../errors';

/** The bodies of PUT and DELETE /fleet/logspec; every problem names the field. Pure. */

const SelectorSchema = z
  .object({
    names: z.array(z.string().min(1)).min(1).optional(),
    groups: z.array(z.string().min(1)).min(1).optional(),
    dialect: z.enum(fleetDialects).optional(),
    labels: selectorLabelsSchema.optional(),
  })
  .strict();

const SetSchema = z
  .object({
    spec: z.string(),
    selector: SelectorSchema,
    ttl: z.string().optional(),
    allOrNothing: z.boolean().optional(),
  })
  .strict();

const RestoreSchema = z.object({ selector: SelectorSchema.optional() }).strict();

type Parsed<T> = { ok: true; value: T } | { ok: false; problem: string };

function describe(error: z.ZodError): string {
  return error.issues
    .slice(0, 3)
    .map((issue) => `${issue.path.length > 0 ? issue.path.join('.') : 'body'}: ${issue.message}`)
    .join('; ');
}

function json(text: string, expected: string): Parsed<unknown> {
  if (text.trim() === '') return { ok: false, problem: `request body is empty; expected ${expected}` };
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch (error) {
    return { ok: false, problem: `request body is not valid JSON: ${messageOf(error).slice(0, 120)}` };
  }
}

const setExample = '{"spec": "gossip=debug:info", "selector": {"labels": {"role": "peer"}}, "ttl": "15m", "allOrNothing": true}';

export function parseSetRequest(text: string): Parsed<SetLogSpecRequest> {
  const body = json(text, setExample);
  if (!body.ok) return body;
  const parsed = SetSchema.safeParse(body.value);
  if (!parsed.success) return { ok: false, problem: `${describe(parsed.error)}; expected ${setExample}` };
  const { spec, selector, ttl, allOrNothing } = parsed.data;
  let ttlMs: number | undefined;
  if (ttl !== undefined) {
    const duration = parsePositiveDurationMs(ttl);
    if (!duration.ok) return { ok: false, problem: `ttl: ${duration.problem}` };
    const bounds = ttlProblem(duration.value, ttl);
    if (bounds !== null) return { ok: false, problem: `ttl: ${bounds}` };
    ttlMs = duration.value;
  }
  return {
    ok: true,
    value: { spec, selector, ...(ttlMs !== undefined ? { ttlMs } : {}), ...(allOrNothing !== undefined ? { allOrNothing } : {}) },
  };
}

/** An empty body means every pending put-back. */
export function parseRestoreRequest(text: string): Parsed<NodeSelector> {
  if (text.trim() === '') return { ok: true, value: {} };
  const body = json(text, '{"selector": {...}}');
  if (!body.ok) return body;
  const parsed = RestoreSchema.safeParse(body.value);
  if (!parsed.success) return { ok: false, problem: `${describe(parsed.error)}; expected {"selector": {"names": ["peer0.org1"]}} or no body` };
  return { ok: true, value: parsed.data.selector ?? {} };
}
