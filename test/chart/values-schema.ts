import { readdirSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import Ajv, { type ErrorObject } from 'ajv';
import { parse } from 'yaml';

/**
 * The chart's values as Helm checks them, without helm: values.yaml and the user's values merged
 * the way Helm merges them, then validated against values.schema.json (JSON Schema draft-07) with
 * ajv. Helm validates the merged values (chart defaults + user values), not the user's file alone
 * (pkg/chartutil: CoalesceValues, then ValidateAgainstSchema), and so does this.
 */

export const repoRoot = path.resolve(__dirname, '../..');
export const chartDir = path.join(repoRoot, 'charts', 'fabric-ops');
export const ciDir = path.join(chartDir, 'ci');

export type Values = Record<string, unknown>;
/** A JSON Schema node, read by keyword. */
export type SchemaNode = Record<string, unknown>;

export const schema = JSON.parse(readFileSync(path.join(chartDir, 'values.schema.json'), 'utf8')) as SchemaNode;

export function isMap(value: unknown): value is Values {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/**
 * A values file as Helm reads it. Helm parses YAML 1.1 (go-yaml: `yes`, `on`, `off` are booleans),
 * the yaml package YAML 1.2; a file that reads differently under the two is refused, naming it, so
 * what is validated here is what Helm would see. An empty file is an empty map, as for Helm.
 */
export function parseValues(text: string, source: string): Values {
  const modern: unknown = parse(text);
  const helmRead: unknown = parse(text, { version: '1.1' });
  if (!isDeepStrictEqual(modern, helmRead)) {
    throw new Error(`${source}: reads differently under YAML 1.1 (Helm) and 1.2: ${JSON.stringify(helmRead)} vs ${JSON.stringify(modern)}; quote the value`);
  }
  if (modern === null || modern === undefined) return {};
  if (!isMap(modern)) throw new Error(`${source}: chart values must be a map, not ${JSON.stringify(modern)}`);
  return modern;
}

export const defaults: Values = parseValues(readFileSync(path.join(chartDir, 'values.yaml'), 'utf8'), 'charts/fabric-ops/values.yaml');

/** The example values files, charts/fabric-ops/ci/*-values.yaml (file names, sorted). */
export const ciFiles: string[] = readdirSync(ciDir)
  .filter((file) => file.endsWith('-values.yaml'))
  .sort();

export function readCiValues(file: string): Values {
  return parseValues(readFileSync(path.join(ciDir, file), 'utf8'), `charts/fabric-ops/ci/${file}`);
}

function clone<T>(value: T): T {
  return structuredClone(value);
}

/** Helm's mergeMaps (pkg/cli/values): `-f` files, later over earlier: maps merged, anything else replaced, null kept. */
export function mergeMaps(base: Values, over: Values): Values {
  const out: Values = { ...base };
  for (const [key, value] of Object.entries(over)) {
    const current = out[key];
    out[key] = isMap(value) && isMap(current) ? mergeMaps(current, value) : clone(value);
  }
  return out;
}

/** The segments of a `--set` key: `a.b\.c[0].d` is a, b.c, 0, d (Helm's strvals). */
export function setKeySegments(key: string): (string | number)[] {
  const segments: (string | number)[] = [];
  let current = '';
  for (let i = 0; i < key.length; i += 1) {
    const char = key.charAt(i);
    if (char === '\\' && i + 1 < key.length) {
      current += key.charAt(i + 1);
      i += 1;
    } else if (char === '.') {
      if (current !== '') segments.push(current);
      current = '';
    } else if (char === '[') {
      const close = key.indexOf(']', i);
      if (close < 0) throw new Error(`--set key ${key}: unclosed [`);
      if (current !== '') segments.push(current);
      current = '';
      const index = key.slice(i + 1, close);
      if (!/^[0-9]+$/.test(index)) throw new Error(`--set key ${key}: [${index}] is not a list index`);
      segments.push(Number(index));
      i = close;
    } else {
      current += char;
    }
  }
  if (current !== '') segments.push(current);
  return segments;
}

/**
 * `--set key=value` into the user's values, as Helm's strvals does: maps along the key are
 * entered (made when missing), and the value replaces whatever is at the key (a map included);
 * `[n]` sets one item of a list, made or padded with nulls when shorter.
 */
export function setPath(values: Values, key: string, value: unknown): void {
  const segments = setKeySegments(key);
  let container: unknown = values;
  segments.forEach((segment, i) => {
    const last = i === segments.length - 1;
    const next = segments[i + 1];
    const fresh = (): unknown => (typeof next === 'number' ? [] : {});
    if (typeof segment === 'number') {
      if (!Array.isArray(container)) throw new Error(`--set ${key}: [${segment}] on something that is not a list`);
      const list = container as unknown[];
      while (list.length <= segment) list.push(null);
      if (last) list[segment] = clone(value);
      else if (!(typeof next === 'number' ? Array.isArray(list[segment]) : isMap(list[segment]))) list[segment] = fresh();
      container = list[segment];
    } else {
      if (!isMap(container)) throw new Error(`--set ${key}: ${segment} under something that is not a map`);
      if (last) container[segment] = clone(value);
      else if (!(typeof next === 'number' ? Array.isArray(container[segment]) : isMap(container[segment]))) container[segment] = fresh();
      container = container[segment];
    }
  });
}

/**
 * Helm's coalescing of the user's values over the chart's (pkg/chartutil/coalesce.go): maps are
 * merged key by key, lists and scalars of the user replace the chart's, and a user null deletes
 * the key when the chart has it (a null under a key the chart does not have stays null).
 */
export function coalesce(user: Values, chart: Values): Values {
  const out = clone(user);
  for (const [key, chartValue] of Object.entries(chart)) {
    if (!(key in out)) {
      out[key] = clone(chartValue);
      continue;
    }
    const userValue = out[key];
    if (userValue === null) delete out[key];
    else if (isMap(userValue) && isMap(chartValue)) out[key] = coalesce(userValue, chartValue);
  }
  return out;
}

/** What a user gives helm: `-f` files (in order), `--set-json` and `--set` (keys as Helm takes them). */
export interface UserValues {
  files?: Values[];
  setJson?: Record<string, unknown>;
  set?: Record<string, unknown>;
}

/** The values Helm validates and renders with: the user's (files, then --set-json, then --set) over values.yaml. */
export function mergedValues(user: UserValues = {}): Values {
  let base: Values = {};
  for (const file of user.files ?? []) base = mergeMaps(base, file);
  for (const [key, value] of Object.entries(user.setJson ?? {})) setPath(base, key, value);
  for (const [key, value] of Object.entries(user.set ?? {})) setPath(base, key, value);
  return coalesce(base, defaults);
}

export interface SchemaError {
  /** Where in the values: `fleet.nodes[0].url`, `nodeSelector["kubernetes.io/os"]`. */
  path: string;
  keyword: string;
  /** The failing keyword in the schema, as ajv names it: `#/properties/fleet/properties/concurrency/minimum`. */
  schemaPath: string;
  message: string;
}

const ajv = new Ajv({ allErrors: true, verbose: true, strict: true, allowUnionTypes: true, strictRequired: false });
const validator = ajv.compile(schema);

/** `fleet`, `fleet.nodes[0]`, `env["1BAD"]`. */
export function renderPath(segments: readonly (string | number)[]): string {
  return segments
    .map((segment, i) => {
      if (typeof segment === 'number') return `[${segment}]`;
      if (/^[^.[\]"\s/]+$/.test(segment)) return i === 0 ? segment : `.${segment}`;
      return `[${JSON.stringify(segment)}]`;
    })
    .join('');
}

/** The value's segments of a JSON pointer (numbers where the value is a list). */
function pointerSegments(pointer: string, values: unknown): (string | number)[] {
  if (pointer === '') return [];
  let current: unknown = values;
  return pointer
    .slice(1)
    .split('/')
    .map((raw) => {
      const token = raw.replace(/~1/g, '/').replace(/~0/g, '~');
      const segment = Array.isArray(current) ? Number(token) : token;
      current = Array.isArray(current) ? current[Number(token)] : isMap(current) ? current[token] : undefined;
      return segment;
    });
}

function shown(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}

function describeError(error: ErrorObject, values: unknown): SchemaError {
  const at = pointerSegments(error.instancePath, values);
  // ajv writes the schema path as a URI fragment (%5Ename%24 for ^name$): read it as a plain JSON pointer.
  const base = { keyword: error.keyword, schemaPath: decodeURIComponent(error.schemaPath) };
  const params = error.params as Record<string, unknown>;
  const propertyName = (error as ErrorObject & { propertyName?: string }).propertyName;
  if (propertyName !== undefined) {
    // A key refused by propertyNames: the key is the value checked.
    return { ...base, path: renderPath([...at, propertyName]), message: `key ${error.message ?? 'is not valid'}` };
  }
  switch (error.keyword) {
    case 'required':
      return { ...base, path: renderPath([...at, String(params.missingProperty)]), message: 'is required' };
    case 'additionalProperties': {
      const known = Object.keys((error.parentSchema?.properties as Values | undefined) ?? {});
      const where = at.length === 0 ? 'the top level' : renderPath(at);
      return { ...base, path: renderPath([...at, String(params.additionalProperty)]), message: `is not a key of ${where} (keys: ${known.join(', ')})` };
    }
    case 'enum':
      return {
        ...base,
        path: renderPath(at),
        message: `must be one of ${(params.allowedValues as unknown[]).map(shown).join(', ')} (is ${shown(error.data)})`,
      };
    case 'type':
      return { ...base, path: renderPath(at), message: `must be ${String(params.type).split(',').join(' or ')} (is ${shown(error.data)})` };
    case 'not':
      return { ...base, path: renderPath(at), message: `must not match ${JSON.stringify(error.schema)}` };
    case 'anyOf':
    case 'oneOf':
    case 'propertyNames':
      return { ...base, path: renderPath(at), message: error.message ?? error.keyword };
    default:
      return { ...base, path: renderPath(at), message: `${error.message ?? error.keyword} (is ${shown(error.data)})` };
  }
}

/** Every schema error of these (merged) values; none when valid. */
export function validateValues(values: Values): SchemaError[] {
  if (validator(values)) return [];
  const errors = (validator.errors ?? []).filter((error) => error.keyword !== 'propertyNames').map((error) => describeError(error, values));
  const seen = new Set<string>();
  return errors.filter((error) => {
    const key = `${error.schemaPath} ${error.path} ${error.message}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/** `path: message`. */
export function renderError(error: SchemaError): string {
  return `${error.path}: ${error.message}`;
}

/** The errors Helm's schema check would give for these user values, as `path: message` lines. */
export function schemaErrors(user: UserValues = {}): string[] {
  return validateValues(mergedValues(user)).map(renderError);
}
