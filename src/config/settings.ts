import convict from 'convict';
import { quoteValue } from './values';
import { messageOf } from '../errors';

/**
 * The dialect-independent machinery behind the convict schemas: leaf declarations, reading
 * a leaf from a parsed YAML document the way Fabric (viper) does, environment overrides
 * with Fabric's names, and merging everything into a convict instance.
 */

export type SettingValue = string | boolean | string[];
/** `integer` and `duration` leaves hold their text (the normaliser parses it, naming the key); the kind is what --list-keys and the docs show. */
export type SettingKind = 'string' | 'integer' | 'duration' | 'boolean' | 'list';

/** A problem found while reading one setting; `message` already names the key. */
export interface SettingProblem {
  path: string;
  message: string;
}

function describeYamlValue(value: unknown): string {
  if (value === null || value === undefined) return 'nothing';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'a mapping';
  // At most the first line of a text (a whole file read as one YAML scalar, say), bounded.
  if (typeof value === 'string') return value.includes('\n') ? `text starting ${quoteValue(value.slice(0, value.indexOf('\n')))}` : quoteValue(value);
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return `${typeof value} ${value}`;
  return typeof value;
}

function isMapping(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isStringList(value: unknown): value is string[] {
  return Array.isArray(value) && value.every((item) => typeof item === 'string');
}

/* convict formats: the type a leaf holds once read (reading converts, see readYamlValue). */
function stringFormat(value: unknown): asserts value is string {
  if (typeof value !== 'string') throw new Error(`must be a string; got ${describeYamlValue(value)}`);
}
/* Text holding a whole number, or a Go duration: checked as text here, parsed by the normaliser. */
function integerTextFormat(value: unknown): asserts value is string {
  stringFormat(value);
}
function durationTextFormat(value: unknown): asserts value is string {
  stringFormat(value);
}
function booleanFormat(value: unknown): asserts value is boolean {
  if (typeof value !== 'boolean') throw new Error(`must be true or false; got ${describeYamlValue(value)}`);
}
function stringListFormat(value: unknown): asserts value is string[] {
  if (!isStringList(value)) throw new Error(`must be a list of strings; got ${describeYamlValue(value)}`);
}

const formatOfKind = {
  string: stringFormat,
  integer: integerTextFormat,
  duration: durationTextFormat,
  boolean: booleanFormat,
  list: stringListFormat,
} as const;

/** A convict leaf of `kind` (the setting's declaration in ./declarations gives all three). */
export function settingLeaf(kind: SettingKind, defaultValue: SettingValue, doc: string): convict.SchemaObj {
  return { default: Array.isArray(defaultValue) ? [...defaultValue] : defaultValue, doc, format: formatOfKind[kind] };
}

export interface SchemaLeaf {
  /** Dotted key path as the dialect spells it, e.g. `operations.tls.cert.file`. */
  path: string;
  kind: SettingKind;
  defaultValue: SettingValue;
  doc: string;
}

function kindOfFormat(format: unknown, path: string): SettingKind {
  const kind = (Object.keys(formatOfKind) as SettingKind[]).find((candidate) => formatOfKind[candidate] === format);
  if (kind === undefined) throw new Error(`internal error: schema leaf ${path} was not made by settingLeaf`);
  return kind;
}

/** Every leaf of a convict schema, depth first, in declaration order. */
export function schemaLeaves(schema: object, prefix = ''): SchemaLeaf[] {
  const leaves: SchemaLeaf[] = [];
  for (const [name, node] of Object.entries(schema)) {
    const path = prefix === '' ? name : `${prefix}.${name}`;
    if (isMapping(node) && 'default' in node) {
      const defaultValue = node.default as SettingValue;
      leaves.push({ path, kind: kindOfFormat(node.format, path), defaultValue, doc: typeof node.doc === 'string' ? node.doc : '' });
    } else if (isMapping(node)) {
      leaves.push(...schemaLeaves(node, path));
    }
  }
  return leaves;
}

/** Fabric's environment variable for a key: `CORE_` + `operations.listenAddress` → `CORE_OPERATIONS_LISTENADDRESS`. */
export function environmentVariableFor(envPrefix: string, path: string): string {
  return `${envPrefix}_${path.toUpperCase().replace(/\./g, '_')}`;
}

type Lookup = { kind: 'absent' } | { kind: 'found'; value: unknown } | { kind: 'notMapping'; path: string; value: unknown };

/** Viper matches keys case-insensitively; an exact match wins. */
function childOf(mapping: Record<string, unknown>, name: string): unknown {
  if (Object.prototype.hasOwnProperty.call(mapping, name)) return mapping[name];
  const lower = name.toLowerCase();
  const key = Object.keys(mapping).find((candidate) => candidate.toLowerCase() === lower);
  return key === undefined ? undefined : mapping[key];
}

function lookup(document: unknown, path: string): Lookup {
  const segments = path.split('.');
  let node: unknown = document;
  for (let index = 0; index < segments.length; index += 1) {
    if (node === null || node === undefined) return { kind: 'absent' };
    if (!isMapping(node)) return { kind: 'notMapping', path: segments.slice(0, index).join('.'), value: node };
    node = childOf(node, segments[index] ?? '');
  }
  return node === null || node === undefined ? { kind: 'absent' } : { kind: 'found', value: node };
}

type Read = { ok: true; value: SettingValue } | { ok: false; problem: string };

/** Go's strconv.ParseBool: what viper (peer) and mapstructure (orderer) accept in a string, environment variables included. */
const goBoolSpellings = {
  true: ['1', 't', 'T', 'TRUE', 'true', 'True'],
  false: ['0', 'f', 'F', 'FALSE', 'false', 'False'],
} as const;

/** YAML 1.1 booleans as go-yaml v2 resolves them (unquoted only). */
const yaml11BoolSpellings = {
  true: ['y', 'Y', 'yes', 'Yes', 'YES', 'true', 'True', 'TRUE', 'on', 'On', 'ON'],
  false: ['n', 'N', 'no', 'No', 'NO', 'false', 'False', 'FALSE', 'off', 'Off', 'OFF'],
} as const;

function parseGoBool(text: string): boolean | null {
  if ((goBoolSpellings.true as readonly string[]).includes(text)) return true;
  if ((goBoolSpellings.false as readonly string[]).includes(text)) return false;
  return null;
}

const yamlBooleanSpellings =
  `accepted: ${[...new Set([...yaml11BoolSpellings.true, ...goBoolSpellings.true])].join(', ')} (true), ` +
  `${[...new Set([...yaml11BoolSpellings.false, ...goBoolSpellings.false])].join(', ')} (false); ` +
  'quoted, only 1, t, T, TRUE, true, True, 0, f, F, FALSE, false, False';

function scalarToString(value: unknown): string | null {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return String(value);
  return null;
}

/** A YAML value for a leaf, converted as viper does (scalars to strings, `"true"` and `"1"` to true, a string to a whitespace-separated list). */
function readYamlValue(kind: SettingKind, value: unknown): Read {
  switch (kind) {
    case 'string':
    case 'integer':
    case 'duration': {
      const text = scalarToString(value);
      return text === null ? { ok: false, problem: `must be a string; got ${describeYamlValue(value)}` } : { ok: true, value: text };
    }
    case 'boolean': {
      if (typeof value === 'boolean') return { ok: true, value };
      // viper and mapstructure cast a string with strconv.ParseBool, an integer as != 0 (only 0 and 1 are taken here).
      if (typeof value === 'string') {
        const parsed = parseGoBool(value);
        if (parsed !== null) return { ok: true, value: parsed };
      }
      if (value === 0 || value === 1) return { ok: true, value: value === 1 };
      return { ok: false, problem: `must be true or false; got ${describeYamlValue(value)}; ${yamlBooleanSpellings}` };
    }
    case 'list': {
      if (typeof value === 'string') return { ok: true, value: splitWhitespace(value) };
      if (!Array.isArray(value)) return { ok: false, problem: `must be a list; got ${describeYamlValue(value)}` };
      const items: string[] = [];
      for (const [index, item] of value.entries()) {
        const text = scalarToString(item);
        if (text === null) return { ok: false, problem: `item ${index + 1} must be a string; got ${describeYamlValue(item)}` };
        items.push(text);
      }
      return { ok: true, value: items };
    }
  }
}

function splitWhitespace(text: string): string[] {
  return text.split(/\s+/).filter((item) => item !== '');
}

function unquote(item: string): string {
  const quoted = /^"(.*)"$|^'(.*)'$/.exec(item);
  return quoted ? (quoted[1] ?? quoted[2] ?? '') : item;
}

/** A list from the environment: whitespace-separated, or `[a, b]`. */
function parseEnvironmentList(text: string): string[] {
  const trimmed = text.trim();
  if (trimmed.startsWith('[') && trimmed.endsWith(']')) {
    return trimmed
      .slice(1, -1)
      .split(',')
      .map((item) => unquote(item.trim()))
      .filter((item) => item !== '');
  }
  return splitWhitespace(trimmed);
}

function readEnvironmentValue(kind: SettingKind, text: string): Read {
  switch (kind) {
    case 'string':
    case 'integer':
    case 'duration':
      return { ok: true, value: text };
    case 'boolean': {
      const parsed = parseGoBool(text);
      return parsed === null
        ? {
            ok: false,
            problem: `${quoteValue(text)} is not true or false; accepted: ${goBoolSpellings.true.join(', ')} (true), ${goBoolSpellings.false.join(', ')} (false)`,
          }
        : { ok: true, value: parsed };
    }
    case 'list':
      return { ok: true, value: parseEnvironmentList(text) };
  }
}

export type Environment = Readonly<Record<string, string | undefined>>;

/** The resolved value of every leaf, by key path. */
export class SettingValues {
  constructor(private readonly values: ReadonlyMap<string, SettingValue>) {}

  private get(path: string): SettingValue {
    const value = this.values.get(path);
    if (value === undefined) throw new Error(`internal error: ${path} is not a key of this schema`);
    return value;
  }
  string(path: string): string {
    const value = this.get(path);
    stringFormat(value);
    return value;
  }
  boolean(path: string): boolean {
    const value = this.get(path);
    booleanFormat(value);
    return value;
  }
  list(path: string): string[] {
    const value = this.get(path);
    stringListFormat(value);
    return [...value];
  }
  /** A string leaf as a list of one (none when empty), a list leaf as it is. */
  paths(path: string): string[] {
    const value = this.get(path);
    if (typeof value === 'string') return value === '' ? [] : [value];
    return this.list(path);
  }
}

export interface ResolvedSettings {
  values: SettingValues;
  /** Key path → the environment variable its value came from. */
  fromEnvironment: ReadonlyMap<string, string>;
  problems: SettingProblem[];
}

function valueAt(tree: unknown, path: string): unknown {
  let node = tree;
  for (const segment of path.split('.')) node = isMapping(node) ? node[segment] : undefined;
  return node;
}

/** An environment variable set to the empty string, which is read as unset (Fabric 2.5's rule; Fabric 3.x applies the empty value). */
export interface EmptyVariable {
  variable: string;
  path: string;
  /** The value the file gives the key, as written (text), or null when the file does not set it (the default applies). */
  fileValue: string | null;
  defaultValue: SettingValue;
}

function describeSetting(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map((item) => String(item)).join(', ')}]`;
  return String(value);
}

/** Every leaf whose environment variable is set but empty, with what applies instead. */
export function emptyEnvironmentVariables(schema: object, document: unknown, env: Environment, envPrefix: string): EmptyVariable[] {
  const found: EmptyVariable[] = [];
  for (const leaf of schemaLeaves(schema)) {
    const variable = environmentVariableFor(envPrefix, leaf.path);
    if (env[variable] !== '') continue;
    const inFile = isMapping(document) ? lookup(document, leaf.path) : ({ kind: 'absent' } as const);
    found.push({ variable, path: leaf.path, fileValue: inFile.kind === 'found' ? describeSetting(inFile.value) : null, defaultValue: leaf.defaultValue });
  }
  return found;
}

/**
 * Reads every leaf of `schema` from `document` (null/missing = the default; every other
 * section of the document is ignored), then from the environment (`<envPrefix>_<KEY>`;
 * an empty variable is ignored, as viper does), into a convict instance holding the defaults.
 */
export function resolveSettings(schema: object, document: unknown, env: Environment, envPrefix: string, documentName: string): ResolvedSettings {
  const config = convict<unknown>(schema, { env: {}, args: [] });
  const leaves = schemaLeaves(schema);
  const fromEnvironment = new Map<string, string>();
  const problems: SettingProblem[] = [];
  const reportedSections = new Set<string>();

  if (document !== null && document !== undefined && !isMapping(document)) {
    problems.push({ path: '', message: `${documentName}: the document must be a mapping of sections; got ${describeYamlValue(document)}` });
  }

  for (const leaf of leaves) {
    const variable = environmentVariableFor(envPrefix, leaf.path);
    const environmentText = env[variable];
    if (environmentText !== undefined && environmentText !== '') {
      const read = readEnvironmentValue(leaf.kind, environmentText);
      if (read.ok) {
        config.set(leaf.path, read.value);
        fromEnvironment.set(leaf.path, variable);
      } else {
        problems.push({ path: leaf.path, message: `${variable} (${leaf.path}): ${read.problem}` });
      }
      continue;
    }
    if (!isMapping(document)) continue;
    const found = lookup(document, leaf.path);
    if (found.kind === 'notMapping') {
      if (!reportedSections.has(found.path)) {
        reportedSections.add(found.path);
        problems.push({ path: found.path, message: `${found.path}: must be a mapping; got ${describeYamlValue(found.value)}` });
      }
    } else if (found.kind === 'found') {
      const read = readYamlValue(leaf.kind, found.value);
      if (read.ok) config.set(leaf.path, read.value);
      else problems.push({ path: leaf.path, message: `${leaf.path}: ${read.problem}` });
    }
  }

  try {
    config.validate({ allowed: 'warn', output: () => undefined });
  } catch (error) {
    throw new Error(`internal error: settings read do not match their convict schema: ${messageOf(error)}`, { cause: error });
  }
  const properties = config.getProperties();
  const values = new Map<string, SettingValue>();
  for (const leaf of leaves) values.set(leaf.path, valueAt(properties, leaf.path) as SettingValue);
  return { values: new SettingValues(values), fromEnvironment, problems };
}
