import { isDeepStrictEqual } from 'node:util';
import { defaults, isMap, mergedValues, renderPath, schema as chartSchema, type SchemaNode, type Values } from './values-schema';

/**
 * Every refusal values.schema.json promises, read from the schema itself: each constraint
 * (type, enum, pattern, lengths, bounds, required keys, closed maps, key patterns, unique items,
 * property counts, anyOf/oneOf/not) with a values document that breaks exactly it. A constraint
 * added to the schema gets its case without a test change; a keyword this file cannot break yet
 * gives a case that fails, naming it.
 *
 * A broken document is made from valid ones (values.yaml, the ci/ files, the documented
 * examples: the corpus), so that the only thing wrong in it is the value under test, and is
 * given to Helm's merge as a user's values file. The value is chosen only when this file's own
 * small evaluator (`rejects`, below) is sure the schema refuses the document; ajv is then asked,
 * and must refuse it with an error at that schema keyword and that values path.
 */

export type Segment = string | number;

/** Keywords that only describe. */
const annotations = new Set(['description', '$comment', 'title', '$schema', 'default', 'examples', 'definitions', '$id']);
/** Keywords that only hold other schemas (walked into). */
const containers = new Set(['properties', 'patternProperties', 'items', 'propertyNames', '$ref']);
/** Constraints this file breaks. */
const breakable = new Set([
  'type',
  'enum',
  'pattern',
  'minLength',
  'maxLength',
  'minimum',
  'maximum',
  'required',
  'additionalProperties',
  'minProperties',
  'maxProperties',
  'uniqueItems',
  'anyOf',
  'oneOf',
  'not',
]);

/** Constraints no values document can break, with why (checked to exist, so the list cannot go stale). */
export const unbreakable: Record<string, string> = {
  '#/type': 'Helm always hands the schema a map: values files and --set can only make one',
};

function escapePointer(token: string): string {
  return token.replace(/~/g, '~0').replace(/\//g, '~1');
}

function resolve(ref: string): SchemaNode {
  const match = /^#\/definitions\/([^/]+)$/.exec(ref);
  const target = match ? (chartSchema.definitions as Record<string, SchemaNode> | undefined)?.[match[1] ?? ''] : undefined;
  if (target === undefined) throw new Error(`$ref ${ref}: only #/definitions/<name> of values.schema.json is followed here`);
  return target;
}

function children(node: SchemaNode, keyword: string): Record<string, SchemaNode> {
  return (node[keyword] as Record<string, SchemaNode> | undefined) ?? {};
}

function branches(node: SchemaNode, keyword: 'anyOf' | 'oneOf'): SchemaNode[] {
  return (node[keyword] as SchemaNode[] | undefined) ?? [];
}

function types(node: SchemaNode): string[] | undefined {
  const type = node.type;
  if (type === undefined) return undefined;
  return Array.isArray(type) ? (type as string[]) : [type as string];
}

function jsonType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value;
}

function typeAllows(allowed: string[], value: unknown): boolean {
  const actual = jsonType(value);
  return allowed.includes(actual) || (actual === 'integer' && allowed.includes('number'));
}

function regex(pattern: unknown): RegExp {
  // As ajv compiles them.
  return new RegExp(String(pattern), 'u');
}

function length(text: string): number {
  return [...text].length;
}

/** Whether a key of `node` is a declared one (properties or patternProperties). */
function declaredKey(node: SchemaNode, key: string): boolean {
  return key in children(node, 'properties') || Object.keys(children(node, 'patternProperties')).some((pattern) => regex(pattern).test(key));
}

/** True only when `node` surely accepts `value`: nodes of required keys (and a type) alone. */
function surelyAccepts(node: SchemaNode, value: unknown): boolean {
  if (!Object.keys(node).every((keyword) => keyword === 'required' || keyword === 'type' || annotations.has(keyword))) return false;
  const allowed = types(node);
  if (allowed !== undefined && !typeAllows(allowed, value)) return false;
  const required = (node.required as string[] | undefined) ?? [];
  return required.length === 0 || (isMap(value) && required.every((key) => key in value));
}

/**
 * True only when the schema surely refuses `value` (a sound, partial JSON Schema evaluator:
 * "false" means "not shown to be refused"). Used to choose the values to break with.
 */
export function rejects(node: SchemaNode, value: unknown): boolean {
  if (typeof node.$ref === 'string') return rejects(resolve(node.$ref), value);
  const allowed = types(node);
  if (allowed !== undefined && !typeAllows(allowed, value)) return true;
  if (Array.isArray(node.enum) && !node.enum.some((item) => isDeepStrictEqual(item, value))) return true;
  if (typeof value === 'string') {
    if (node.pattern !== undefined && !regex(node.pattern).test(value)) return true;
    if (typeof node.minLength === 'number' && length(value) < node.minLength) return true;
    if (typeof node.maxLength === 'number' && length(value) > node.maxLength) return true;
  }
  if (typeof value === 'number') {
    if (typeof node.minimum === 'number' && value < node.minimum) return true;
    if (typeof node.maximum === 'number' && value > node.maximum) return true;
  }
  if (isMap(value)) {
    const keys = Object.keys(value);
    if (((node.required as string[] | undefined) ?? []).some((key) => !(key in value))) return true;
    if (typeof node.minProperties === 'number' && keys.length < node.minProperties) return true;
    if (typeof node.maxProperties === 'number' && keys.length > node.maxProperties) return true;
    if (node.additionalProperties === false && keys.some((key) => !declaredKey(node, key))) return true;
    const names = node.propertyNames as SchemaNode | undefined;
    if (names !== undefined && keys.some((key) => rejects(names, key))) return true;
    for (const key of keys) {
      const property = children(node, 'properties')[key];
      if (property !== undefined && rejects(property, value[key])) return true;
      for (const [pattern, child] of Object.entries(children(node, 'patternProperties')))
        if (regex(pattern).test(key) && rejects(child, value[key])) return true;
      if (isMap(node.additionalProperties) && !declaredKey(node, key) && rejects(node.additionalProperties, value[key])) return true;
    }
  }
  if (Array.isArray(value)) {
    if (isMap(node.items) && value.some((item) => rejects(node.items as SchemaNode, item))) return true;
    if (node.uniqueItems === true && value.some((item, i) => value.findIndex((other) => isDeepStrictEqual(other, item)) !== i)) return true;
  }
  for (const keyword of ['anyOf', 'oneOf'] as const) {
    const options = branches(node, keyword);
    if (options.length > 0 && options.every((option) => rejects(option, value))) return true;
  }
  if (isMap(node.not) && surelyAccepts(node.not, value)) return true;
  return false;
}

/** Every keyword of every schema node, walked plainly (a `not` counts as one constraint): [pointer, keyword]. */
export function schemaKeywords(node: SchemaNode = chartSchema, pointer = '#'): [string, string][] {
  const out: [string, string][] = Object.keys(node).map((keyword) => [pointer, keyword]);
  for (const keyword of ['properties', 'patternProperties', 'definitions']) {
    for (const [key, child] of Object.entries(children(node, keyword))) out.push(...schemaKeywords(child, `${pointer}/${keyword}/${escapePointer(key)}`));
  }
  for (const keyword of ['items', 'additionalProperties', 'propertyNames']) {
    if (isMap(node[keyword])) out.push(...schemaKeywords(node[keyword], `${pointer}/${keyword}`));
    else if (Array.isArray(node[keyword])) out.push([`${pointer}/${keyword}`, '(a list: tuple items are not walked)']);
  }
  for (const keyword of ['anyOf', 'oneOf', 'allOf'] as const) {
    ((node[keyword] as SchemaNode[] | undefined) ?? []).forEach((child, i) => out.push(...schemaKeywords(child, `${pointer}/${keyword}/${i}`)));
  }
  return out;
}

/** The constraints among those keywords, as ids: `<schema path>` or `<schema path>:<key>` for each required key. */
export function schemaConstraintIds(): string[] {
  const ids: string[] = [];
  for (const [pointer, keyword] of schemaKeywords()) {
    if (annotations.has(keyword) || containers.has(keyword)) continue;
    if (keyword === 'additionalProperties' && lookup(pointer)[keyword] !== false) continue;
    if (keyword === 'required') for (const key of lookup(pointer).required as string[]) ids.push(`${pointer}/required:${key}`);
    else ids.push(`${pointer}/${keyword}`);
  }
  return ids;
}

/** Keywords of the schema this file knows nothing about: [pointer, keyword]. */
export function unknownKeywords(): [string, string][] {
  return schemaKeywords().filter(([, keyword]) => !annotations.has(keyword) && !containers.has(keyword) && !breakable.has(keyword));
}

function lookup(pointer: string): SchemaNode {
  let node: unknown = chartSchema;
  for (const token of pointer.split('/').slice(1)) {
    const key = token.replace(/~1/g, '/').replace(/~0/g, '~');
    node = Array.isArray(node) ? node[Number(key)] : (node as SchemaNode)[key];
  }
  return node as SchemaNode;
}

/**
 * A schema node as it applies at a values path. `applies`: every node that applies there, from
 * the outermost to this one (a branch of an anyOf applies with the node holding the anyOf);
 * `parents[i]`: the nodes that apply at `at.slice(0, i)`.
 */
interface Site {
  node: SchemaNode;
  pointer: string;
  at: Segment[];
  applies: SchemaNode[];
  parents: SchemaNode[][];
}

function resolved(node: SchemaNode): SchemaNode {
  return typeof node.$ref === 'string' ? resolve(node.$ref) : node;
}

/**
 * The nodes that apply at one place, as one (for making a valid value there): properties merged,
 * required keys joined; the anyOf/oneOf of outer nodes dropped (the place is in one branch of them).
 */
function view(nodes: readonly SchemaNode[]): SchemaNode {
  const out: SchemaNode = {};
  nodes.map(resolved).forEach((node, i, all) => {
    for (const [keyword, value] of Object.entries(node)) {
      if (keyword === 'properties') out.properties = { ...children(out, 'properties'), ...(value as Record<string, SchemaNode>) };
      else if (keyword === 'required') out.required = [...new Set([...((out.required as string[] | undefined) ?? []), ...(value as string[])])];
      else if ((keyword === 'anyOf' || keyword === 'oneOf') && i < all.length - 1) continue;
      else out[keyword] = value;
    }
  });
  return out;
}

function refusedByAny(nodes: readonly SchemaNode[], value: unknown): boolean {
  return nodes.some((node) => rejects(node, value));
}

/** Values found at `at` in the corpus (any item of a list where `at` has an index). */
function found(corpus: Values[], at: readonly Segment[]): unknown[] {
  let current: unknown[] = corpus;
  for (const segment of at) {
    current = current.flatMap((value) => {
      if (typeof segment === 'number') return Array.isArray(value) ? (value as unknown[]) : [];
      return isMap(value) && segment in value ? [value[segment]] : [];
    });
  }
  return current;
}

export class Generator {
  constructor(private readonly corpus: Values[]) {}

  /**
   * A value the corpus has at `at` that none of `nodes` refuses (one that goes on along `deeper`
   * when there is one), else one built from them.
   */
  instance(at: readonly Segment[], nodes: readonly SchemaNode[], deeper: readonly Segment[] = []): unknown {
    const valid = found(this.corpus, at).filter((value) => !refusedByAny(nodes, value));
    const known = valid.find((value) => reaches(value, deeper)) ?? valid[0];
    return known !== undefined ? structuredClone(known) : this.build(at, view(nodes));
  }

  private build(at: readonly Segment[], given: SchemaNode): unknown {
    const node = resolved(given);
    const fail = (why: string): never => {
      throw new Error(`no valid example of ${renderPath(at)} (${why}): add one to the corpus (the test's seed values)`);
    };
    if (Array.isArray(node.enum)) return structuredClone(node.enum[0]);
    const options = [...branches(node, 'anyOf'), ...branches(node, 'oneOf')];
    const type = types(node)?.find((name) => name !== 'null') ?? (node.properties || node.required ? 'object' : options.length > 0 ? undefined : 'null');
    if (type === undefined) return this.build(at, options[0] as SchemaNode);
    switch (type) {
      case 'object': {
        // Its required keys, those of its first anyOf/oneOf branch, then declared ones up to minProperties.
        const properties = children(node, 'properties');
        const keys = [...((node.required as string[] | undefined) ?? []), ...((options[0]?.required as string[] | undefined) ?? [])];
        for (const key of Object.keys(properties)) if (keys.length < ((node.minProperties as number | undefined) ?? 0) && !keys.includes(key)) keys.push(key);
        const out: Values = {};
        for (const key of keys) {
          const property = properties[key] ?? (isMap(node.additionalProperties) ? node.additionalProperties : undefined);
          if (property === undefined) fail(`required ${key} has no schema`);
          out[key] = this.instance([...at, key], [property as SchemaNode]);
        }
        return rejects(node, out) ? fail(`${JSON.stringify(out)} is refused`) : out;
      }
      case 'array':
        return [];
      case 'string': {
        const candidates = ['', 'a', 'x1', 'a'.repeat(typeof node.minLength === 'number' ? node.minLength : 1)];
        const value = candidates.find((candidate) => !rejects(node, candidate));
        return value ?? fail(`no simple string matches ${JSON.stringify(node.pattern)}`);
      }
      case 'integer':
      case 'number':
        return typeof node.minimum === 'number' ? node.minimum : 1;
      case 'boolean':
        return false;
      default:
        return null;
    }
  }

  /** A key for a map's free entries at `at`: one the corpus uses, else `sample`. */
  private mapKey(node: SchemaNode, at: readonly Segment[]): string {
    const names = node.propertyNames as SchemaNode | undefined;
    const usable = (key: string): boolean => !declaredKey(node, key) && (names === undefined || !rejects(names, key));
    const key = found(this.corpus, at)
      .flatMap((value) => (isMap(value) ? Object.keys(value) : []))
      .find(usable);
    if (key !== undefined) return key;
    if (usable('sample')) return 'sample';
    throw new Error(`no key for the entries of ${renderPath(at)}: add one to the corpus`);
  }

  /** A key matching a patternProperties pattern: one the corpus uses, else the pattern's literal (^name$). */
  private patternKey(pattern: string, at: readonly Segment[]): string {
    const key = found(this.corpus, at)
      .flatMap((value) => (isMap(value) ? Object.keys(value) : []))
      .find((candidate) => regex(pattern).test(candidate));
    if (key !== undefined) return key;
    const literal = /^\^([-\w.]+)\$$/.exec(pattern)?.[1];
    if (literal !== undefined) return literal;
    throw new Error(`no key matching ${pattern} under ${renderPath(at)}: add one to the corpus`);
  }

  sites(node: SchemaNode = chartSchema, pointer = '#', at: Segment[] = [], outer: SchemaNode[] = [], parents: SchemaNode[][] = []): Site[] {
    const applies = [...outer, node];
    if (typeof node.$ref === 'string') {
      // The node's own keywords besides $ref are annotations here (a description); the walk goes on in the definition.
      return [{ node, pointer, at, applies, parents }, ...this.sites(resolve(node.$ref), node.$ref, at, applies, parents)];
    }
    const out: Site[] = [{ node, pointer, at, applies, parents }];
    const inside = [...parents, applies];
    for (const [key, child] of Object.entries(children(node, 'properties'))) {
      out.push(...this.sites(child, `${pointer}/properties/${escapePointer(key)}`, [...at, key], [], inside));
    }
    for (const [pattern, child] of Object.entries(children(node, 'patternProperties'))) {
      out.push(...this.sites(child, `${pointer}/patternProperties/${escapePointer(pattern)}`, [...at, this.patternKey(pattern, at)], [], inside));
    }
    if (isMap(node.additionalProperties)) {
      out.push(...this.sites(node.additionalProperties, `${pointer}/additionalProperties`, [...at, this.mapKey(node, at)], [], inside));
    }
    if (isMap(node.items)) out.push(...this.sites(node.items, `${pointer}/items`, [...at, 0], [], inside));
    for (const keyword of ['anyOf', 'oneOf'] as const) {
      branches(node, keyword).forEach((branch, i) => out.push(...this.sites(branch, `${pointer}/${keyword}/${i}`, at, applies, parents)));
    }
    return out;
  }

  /** values.yaml's values with valid instances (from the corpus, else built) placed along `at`, the last one included when `whole`. */
  private context(site: Site, whole: boolean): Values {
    const doc = mergedValues({});
    const depth = whole ? site.at.length : site.at.length - 1;
    let container: unknown = doc;
    const nodesAt = (depthOf: number): SchemaNode[] => (depthOf < site.at.length ? (site.parents[depthOf] as SchemaNode[]) : site.applies);
    for (let i = 0; i < depth; i += 1) {
      const segment = site.at[i] as Segment;
      const nodes = nodesAt(i + 1);
      const next = site.at[i + 1];
      const holder = container as Record<string | number, unknown>;
      const deeper = site.at.slice(i + 1, depth);
      let child = holder[segment];
      const shaped = next === undefined || (typeof next === 'number' ? Array.isArray(child) && child.length > 0 : isMap(child));
      if (child === undefined || !shaped || refusedByAny(nodes, child) || !reaches(child, deeper)) {
        const replacement = this.instance(site.at.slice(0, i + 1), nodes, deeper);
        // A valid value that does not go on is kept unless the corpus has one that does.
        if (child === undefined || !shaped || refusedByAny(nodes, child) || reaches(replacement, deeper)) child = replacement;
        if (typeof next === 'number' && Array.isArray(child) && child.length === 0)
          child = [this.instance(site.at.slice(0, i + 2), nodesAt(i + 2), site.at.slice(i + 2, depth))];
        holder[segment] = child;
      }
      container = child;
    }
    return doc;
  }

  /** All the cases: one per constraint (one per key of a `required`). */
  cases(): RefusalCase[] {
    return this.sites().flatMap((site) => this.casesAt(site));
  }

  private casesAt(site: Site): RefusalCase[] {
    const { node, pointer } = site;
    const out: RefusalCase[] = [];
    for (const keyword of Object.keys(node)) {
      if (annotations.has(keyword) || keyword === '$ref') continue;
      if (typeof node.$ref === 'string') {
        // Draft-07 ignores every keyword beside $ref, and so may Helm's validator.
        out.push({
          id: `${pointer}/${keyword}`,
          name: `${pointer}/${keyword}`,
          schemaPath: `${pointer}/${keyword}`,
          problem: `${keyword} beside $ref is ignored by draft-07: move it into ${node.$ref}`,
        });
        continue;
      }
      if (keyword === 'propertyNames') {
        for (const inner of Object.keys(node.propertyNames as SchemaNode))
          out.push(this.attempt(site, `${pointer}/propertyNames/${inner}`, () => this.badKey(site, inner)));
        continue;
      }
      if (containers.has(keyword) || (keyword === 'additionalProperties' && node.additionalProperties !== false)) continue;
      if (keyword === 'required') {
        for (const key of node.required as string[]) out.push(this.attempt(site, `${pointer}/required`, () => this.withoutKey(site, key), key));
        continue;
      }
      out.push(this.attempt(site, `${pointer}/${keyword}`, () => this.breaking(site, keyword)));
    }
    return out;
  }

  private attempt(site: Site, schemaPath: string, make: () => Breakage, key?: string): RefusalCase {
    const id = key === undefined ? schemaPath : `${schemaPath}:${key}`;
    const where = renderPath(site.at) || '(top level)';
    if (unbreakable[id] !== undefined) return { id, name: `${id} at ${where}: cannot be broken (${unbreakable[id]})`, schemaPath, unbreakable: true };
    try {
      const breakage = make();
      return { id, name: `${id} at ${where}: ${breakage.what}`, schemaPath, ...breakage };
    } catch (error) {
      return { id, name: `${id} at ${where}`, schemaPath, problem: (error as Error).message };
    }
  }

  /** The first candidate whose document the evaluator shows to be refused. */
  private firstRefused(
    site: Site,
    candidates: unknown[],
    whole: boolean,
    change: (doc: Values, value: unknown) => { path: Segment[]; what: string },
  ): Breakage {
    for (const candidate of candidates) {
      const base = this.context(site, whole);
      const broken = structuredClone(base);
      const { path, what } = change(broken, candidate);
      if (rejects(chartSchema, mergedValues({ files: [broken] }))) return { base, broken, path: renderPath(path), what };
    }
    throw new Error(`no candidate is surely refused: ${JSON.stringify(candidates)}`);
  }

  /** Sets the value at the site. */
  private setting(site: Site, candidates: unknown[]): Breakage {
    return this.firstRefused(site, candidates, false, (doc, value) => {
      put(doc, site.at, value);
      return { path: site.at, what: `${shown(value)} is refused` };
    });
  }

  /** Replaces the site's (valid) value by `edit` of it. */
  private editing(site: Site, edits: ((current: unknown) => unknown)[], what: string): Breakage {
    return this.firstRefused(site, edits, true, (doc, edit) => {
      const value = (edit as (current: unknown) => unknown)(structuredClone(get(doc, site.at)));
      put(doc, site.at, value);
      return { path: site.at, what: `${what}: ${shown(value)} is refused` };
    });
  }

  private breaking(site: Site, keyword: string): Breakage {
    const { node } = site;
    const wrongTypes: unknown[] = ['x', 1.5, 7, true, [], {}];
    switch (keyword) {
      case 'type':
        return this.setting(
          site,
          wrongTypes.filter((value) => !typeAllows(types(node) ?? [], value)),
        );
      case 'enum': {
        const allowed = node.enum as unknown[];
        const first = allowed[0];
        const candidates =
          typeof first === 'string'
            ? [first.toUpperCase(), first.toLowerCase(), `${first}x`]
            : typeof first === 'number'
              ? [Math.max(...(allowed as number[])) + 1]
              : ['x'];
        return this.setting(
          site,
          candidates.filter((value) => !allowed.some((item) => isDeepStrictEqual(item, value))),
        );
      }
      case 'pattern':
        return this.setting(
          site,
          ['not valid!', '', 'x', 'X', '-', 'a b', '/', '0', 'a:b'].filter((value) => !regex(node.pattern).test(value)),
        );
      case 'minLength':
        return this.setting(site, ['a'.repeat(Math.max(0, (node.minLength as number) - 1))]);
      case 'maxLength':
        return this.setting(site, ['a'.repeat((node.maxLength as number) + 1), '0'.repeat((node.maxLength as number) + 1)]);
      case 'minimum':
        return this.setting(site, [(node.minimum as number) - 1, (node.minimum as number) - 0.5]);
      case 'maximum':
        return this.setting(site, [(node.maximum as number) + 1]);
      case 'additionalProperties': {
        const first = Object.keys(children(node, 'properties'))[0] ?? 'key';
        const wrong = misspell(first);
        return this.firstRefused(site, [wrong], true, (doc, key) => {
          const current = get(doc, site.at) as Values;
          current[key as string] = current[first] ?? 'x';
          return { path: [...site.at, key as string], what: `the misspelt key ${key as string} is refused` };
        });
      }
      case 'minProperties': {
        const keep = (node.minProperties as number) - 1;
        const required = (node.required as string[] | undefined) ?? [];
        return this.editing(
          site,
          [
            (current) => {
              const map = isMap(current) ? current : {};
              const keys = [...required, ...Object.keys(map).filter((key) => !required.includes(key))].filter((key) => key in map).slice(0, keep);
              return Object.fromEntries(keys.map((key) => [key, map[key]]));
            },
          ],
          `${keep} key(s)`,
        );
      }
      case 'maxProperties':
        return this.editing(
          site,
          [
            (current) => {
              const map: Values = isMap(current) ? { ...current } : {};
              for (const [key, child] of Object.entries(children(node, 'properties'))) {
                if (Object.keys(map).length > (node.maxProperties as number)) break;
                if (!(key in map)) map[key] = this.instance([...site.at, key], [child]);
              }
              return map;
            },
          ],
          `more than ${node.maxProperties as number} key(s)`,
        );
      case 'uniqueItems':
        return this.editing(
          site,
          [
            (current) => {
              const item: unknown =
                Array.isArray(current) && current.length > 0 ? (current as unknown[])[0] : this.instance([...site.at, 0], [node.items as SchemaNode]);
              return [item, structuredClone(item)];
            },
          ],
          'a repeated item',
        );
      case 'anyOf':
      case 'oneOf': {
        const required = branches(node, keyword).flatMap((branch) => (branch.required as string[] | undefined) ?? []);
        const withoutRequired = (current: unknown): unknown =>
          isMap(current) ? Object.fromEntries(Object.entries(current).filter(([key]) => !required.includes(key))) : current;
        return this.editing(site, [withoutRequired, ...wrongTypes.map((value) => () => value)], `matching none of the ${keyword} schemas`);
      }
      case 'not': {
        const forbidden = node.not as SchemaNode;
        return this.editing(
          site,
          [
            (current) => {
              const map: Values = isMap(current) ? { ...current } : {};
              for (const key of (forbidden.required as string[] | undefined) ?? []) {
                if (!(key in map)) map[key] = this.instance([...site.at, key], [children(view(site.applies), 'properties')[key] ?? {}]);
              }
              return map;
            },
          ],
          `matching ${JSON.stringify(forbidden)}`,
        );
      }
      default:
        throw new Error(`the keyword ${keyword} cannot be broken by this test yet: teach schema-constraints.ts`);
    }
  }

  private withoutKey(site: Site, key: string): Breakage {
    const viaNull = site.at.every((segment) => typeof segment === 'string') && has(defaults, [...site.at, key]);
    return this.firstRefused(site, [key], true, (doc) => {
      const current = get(doc, site.at) as Values;
      // A key values.yaml has comes back in the merge unless the user's null deletes it.
      if (viaNull) current[key] = null;
      else delete current[key];
      return { path: [...site.at, key], what: viaNull ? `${key}: null (deletes it) is refused` : `without ${key} is refused` };
    });
  }

  private badKey(site: Site, keyword: string): Breakage {
    const names = site.node.propertyNames as SchemaNode;
    const candidates =
      keyword === 'pattern'
        ? ['not a key!', '-x', '1x', 'x!', ''].filter((key) => !regex(names.pattern).test(key))
        : keyword === 'maxLength'
          ? ['a'.repeat((names.maxLength as number) + 1)]
          : [];
    if (candidates.length === 0) throw new Error(`propertyNames.${keyword} cannot be broken by this test yet: teach schema-constraints.ts`);
    const valueNode = isMap(site.node.additionalProperties) ? site.node.additionalProperties : {};
    return this.firstRefused(site, candidates, true, (doc, key) => {
      const current = get(doc, site.at) as Values;
      current[key as string] = this.instance([...site.at, key as string], [valueNode]);
      return { path: [...site.at, key as string], what: `the key ${shown(key)} is refused` };
    });
  }
}

interface Breakage {
  /** Valid values around the site: must be accepted. */
  base: Values;
  /** The same with the one value broken. */
  broken: Values;
  /** Where the error must be reported. */
  path: string;
  what: string;
}

export interface RefusalCase {
  id: string;
  name: string;
  schemaPath: string;
  base?: Values;
  broken?: Values;
  path?: string;
  what?: string;
  problem?: string;
  unbreakable?: boolean;
}

/** A plausible misspelling: the key with two letters swapped (clusterDomain → clusterDomian). */
export function misspell(key: string): string {
  if (key.length < 3) return `${key}x`;
  const i = key.length - 2;
  const swapped = `${key.slice(0, i - 1)}${key.charAt(i)}${key.charAt(i - 1)}${key.slice(i + 1)}`;
  return swapped === key ? `${key}x` : swapped;
}

/** A value for a test name: JSON, cut short. */
function shown(value: unknown): string {
  const text = JSON.stringify(value);
  return text.length > 60 ? `${text.slice(0, 45)}... (${text.length} characters)` : text;
}

/** Whether `value` goes on along `at` (an index: any item of the list). */
function reaches(value: unknown, at: readonly Segment[]): boolean {
  if (at.length === 0) return true;
  const [segment, ...rest] = at;
  if (typeof segment === 'number') return Array.isArray(value) && value.some((item) => reaches(item, rest));
  return isMap(value) && (segment as string) in value && reaches(value[segment as string], rest);
}

function get(doc: unknown, at: readonly Segment[]): unknown {
  return at.reduce<unknown>((value, segment) => (value as Record<string | number, unknown> | undefined)?.[segment], doc);
}

function has(doc: unknown, at: readonly Segment[]): boolean {
  const parent = get(doc, at.slice(0, -1));
  return isMap(parent) && String(at[at.length - 1]) in parent;
}

function put(doc: Values, at: readonly Segment[], value: unknown): void {
  const parent = get(doc, at.slice(0, -1)) as Record<string | number, unknown>;
  parent[at[at.length - 1] as Segment] = value;
}
