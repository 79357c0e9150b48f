import { clip } from '../text';
import { isAlias, isMap, isPair, isScalar, isSeq, LineCounter, parseDocument, visit, type Document, type Node, type Pair, type Tags, type YAMLMap } from 'yaml';
import { ConfigError, messageOf } from '../errors';
import { quoteValue } from './values';

/**
 * Reads a core.yaml / orderer.yaml as Fabric's reader does (go-yaml v2 under viper): YAML 1.1
 * scalars (`yes`, `on`, `off` are booleans), merge keys (`<<: *anchor`, `<<: [*a, *b]`), and
 * timestamps and base-60 numbers left as strings. Whatever that reader would treat differently,
 * or that fabric-ops would otherwise drop without a word (unknown tags, keys that are mappings,
 * keys that differ only in case, a `%YAML 1.2` directive, ...) is refused, one line each, so
 * that no key silently ends up at its default.
 */

/** Alias expansions allowed in one document (an "alias bomb" makes billions). */
const maxYamlAliasCount = 1000;

/** Go-yaml v2 reads these tags as strings, or not at all; their explicit use is refused. */
const tagsFabricDoesNotRead = new Set(['binary', 'omap', 'pairs', 'set', 'timestamp'].map((name) => `tag:yaml.org,2002:${name}`));

function goYamlV2Tags(tags: Tags): Tags {
  // `format: 'TIME'` is the base-60 int and float (`1:30` is 90 in YAML 1.1, "1:30" in go-yaml v2).
  return tags.filter((tag) => typeof tag === 'object' && !tagsFabricDoesNotRead.has(tag.tag) && tag.format !== 'TIME');
}

const shortTag = (text: string): string => text.replace(/tag:yaml\.org,2002:/g, '!!');

interface Position {
  line: number;
  col: number;
}

/** One problem line about a place in the file: `config file F: <what> at line L, column C: <reason> ("<line text>")`. */
function placed(file: string, lines: readonly string[], what: string, reason: string, position: Position | undefined): string {
  if (!position) return `config file ${file}: ${what}: ${reason}`;
  const whole = lines[position.line - 1] ?? '';
  return `config file ${file}: ${what} at line ${position.line}, column ${position.col}: ${reason} (${quoteValue(whole, 100)})`;
}

function firstLine(message: string): string {
  return (message.split('\n')[0] ?? '').replace(/ at line \d+, column \d+:$/, '');
}

/** The parser's reason, without the source text it may quote (the line is quoted by placed()). */
function parserReason(message: string): string {
  const reason = firstLine(message).replace(/: ".*$/, '');
  return clip(reason, 120);
}

function isMergeKey(pair: Pair): boolean {
  const key = pair.key;
  return isScalar(key) && typeof key.value === 'symbol' && key.value.description === '<<';
}

/** Keys a merge source gives (its own keys and, recursively, those of its own merges). */
function keysGivenBy(source: unknown, doc: Document, seen: Set<unknown>): Set<string> {
  const keys = new Set<string>();
  const node = isAlias(source) ? source.resolve(doc) : source;
  if (seen.has(node)) return keys;
  seen.add(node);
  if (isSeq(node)) {
    for (const item of node.items) for (const key of keysGivenBy(item, doc, seen)) keys.add(key);
  } else if (isMap(node)) {
    for (const pair of node.items) {
      if (isMergeKey(pair)) for (const key of keysGivenBy(pair.value, doc, seen)) keys.add(key);
      else if (isScalar(pair.key)) keys.add(String(pair.key.value));
    }
  }
  return keys;
}

/**
 * Merge keys where go-yaml v2 and the YAML 1.1 merge rule disagree: go-yaml v2 applies each
 * `<<` where it stands, so a key written before it is overwritten by the merged value, and of
 * two `<<` in one mapping the second wins; the rule says explicit keys and earlier sources win.
 */
function mergeKeyProblems(
  doc: Document,
  at: (node: Node | Pair) => Position | undefined,
  report: (what: string, reason: string, position: Position | undefined) => void,
): void {
  visit(doc, {
    Map(_key, map: YAMLMap) {
      const merges = map.items.map((pair, index) => (isMergeKey(pair) ? index : -1)).filter((index) => index >= 0);
      const second = merges[1];
      if (second !== undefined) {
        const pair = map.items[second];
        report(
          'a second merge key',
          "use one merge key with a list of sources, <<: [*first, *second] (Fabric's reader lets the later << win, the YAML rule the earlier)",
          pair ? at(pair) : undefined,
        );
        return;
      }
      const first = merges[0];
      if (first === undefined) return;
      const merged = keysGivenBy(map.items[first]?.value, doc, new Set());
      for (const pair of map.items.slice(0, first)) {
        if (!isScalar(pair.key) || !merged.has(String(pair.key.value))) continue;
        report(
          `key ${quoteValue(String(pair.key.value))} before a merge key that also sets it`,
          "Fabric's reader takes the merged value, the YAML rule this one; write the key after the << line",
          at(pair),
        );
      }
    },
  });
}

type Plain = string | number | boolean | bigint | null | Plain[] | { [key: string]: Plain };

function describeKey(key: unknown): string {
  if (key instanceof Map) return 'a mapping';
  if (Array.isArray(key)) return 'a sequence';
  if (key === null || key === undefined) return 'empty (null)';
  return `of type ${typeof key}`;
}

const showKey = (key: string | number | boolean | bigint): string => (typeof key === 'string' ? quoteValue(key) : String(key));

/**
 * The parsed document (with `mapAsMap`) as plain objects, keys as viper makes them (scalars
 * as text); a key that is not a scalar, or keys that viper would fold into one, are problems.
 */
function toPlain(value: unknown, path: string, problems: string[], converting: Set<unknown>, done: Map<unknown, Plain>): Plain {
  if (value === null || value === undefined) return null;
  if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return value;
  const where = path === '' ? 'the document' : path;
  const known = done.get(value);
  if (known !== undefined) return known;
  if (converting.has(value)) {
    problems.push(`${where}: an alias that contains itself`);
    return null;
  }
  if (Array.isArray(value)) {
    converting.add(value);
    const items = value.map((item, index) => toPlain(item, `${path}[${index}]`, problems, converting, done));
    converting.delete(value);
    done.set(value, items);
    return items;
  }
  if (value instanceof Map) {
    converting.add(value);
    const result: { [key: string]: Plain } = {};
    const byFoldedKey = new Map<string, string | number | boolean | bigint>();
    for (const [key, item] of value as Map<unknown, unknown>) {
      if (!(typeof key === 'string' || typeof key === 'number' || typeof key === 'boolean' || typeof key === 'bigint')) {
        problems.push(`${where}: a key that is ${describeKey(key)}; only scalar keys (text, numbers, booleans) can be read`);
        continue;
      }
      const name = String(key);
      const folded = name.toLowerCase();
      const earlier = byFoldedKey.get(folded);
      if (earlier !== undefined) {
        problems.push(
          `${where}: keys ${showKey(earlier)} and ${showKey(key)} are one key to Fabric's reader, which ignores case and keeps either value; keep one`,
        );
        continue;
      }
      byFoldedKey.set(folded, key);
      const child = toPlain(item, path === '' ? name : `${path}.${name}`, problems, converting, done);
      Object.defineProperty(result, name, { value: child, enumerable: true, writable: true, configurable: true });
    }
    converting.delete(value);
    done.set(value, result);
    return result;
  }
  problems.push(`${where}: holds a ${typeof value === 'symbol' ? 'merge key (<<) as a value' : 'value of a YAML type'} that fabric-ops does not read`);
  return null;
}

/**
 * Parses the text of `file`; throws ConfigError with one line per problem, each naming the
 * file (and the line and column, or the key path, of the problem).
 */
export function parseConfigYaml(text: string, file: string): unknown {
  const lineCounter = new LineCounter();
  const lines = text.split(/\r?\n/);
  let doc: Document;
  try {
    doc = parseDocument(text, { version: '1.1', merge: true, uniqueKeys: true, customTags: goYamlV2Tags, lineCounter, prettyErrors: false });
  } catch (error) {
    throw new ConfigError([`config file ${file}: cannot be read as YAML: ${messageOf(error)}`]);
  }
  const positionOf = (offset: number | undefined): Position | undefined => (offset === undefined ? undefined : lineCounter.linePos(offset));

  const [firstError] = doc.errors;
  if (firstError !== undefined) {
    // The first error only: a file that is not YAML at all (the wrong --config) gives one per line.
    const more = doc.errors.length > 1 ? ` (and ${doc.errors.length - 1} more YAML errors)` : '';
    throw new ConfigError([placed(file, lines, 'not valid YAML', `${parserReason(firstError.message)}${more}`, positionOf(firstError.pos[0]))]);
  }

  const problems: string[] = [];
  const report = (what: string, reason: string, position: Position | undefined): void => {
    problems.push(placed(file, lines, what, reason, position));
  };
  for (const warning of doc.warnings) {
    report(
      'YAML that fabric-ops does not apply',
      `${shortTag(firstLine(warning.message))}; Fabric's reader would refuse or read it otherwise`,
      positionOf(warning.pos[0]),
    );
  }
  if (doc.directives?.yaml.explicit && doc.directives.yaml.version !== '1.1') {
    report('a %YAML directive', `YAML ${doc.directives.yaml.version} is not read; Fabric's reader takes only YAML 1.1 (remove the directive)`, positionOf(0));
  }
  if (problems.length > 0) throw new ConfigError(problems);

  let js: unknown;
  try {
    js = doc.toJS({ mapAsMap: true, maxAliasCount: maxYamlAliasCount });
  } catch (error) {
    const message = messageOf(error);
    if (/excessive alias count/i.test(message)) {
      throw new ConfigError([`config file ${file}: too many YAML aliases (expanding them goes past the limit of ${maxYamlAliasCount}; an alias bomb?)`]);
    }
    if (/merge sources must be maps/i.test(message)) {
      throw new ConfigError([`config file ${file}: a merge key (<<) whose value is not a mapping, an alias of one, or a list of them`]);
    }
    throw new ConfigError([`config file ${file}: cannot be read as YAML: ${message}`]);
  }

  const at = (node: Node | Pair): Position | undefined => {
    const range = isPair(node) ? (node.key as Node | null)?.range : node.range;
    return positionOf(range?.[0]);
  };
  mergeKeyProblems(doc, at, report);
  const valueProblems: string[] = [];
  const plain = toPlain(js, '', valueProblems, new Set(), new Map());
  problems.push(...valueProblems.map((problem) => `config file ${file}: ${problem}`));
  if (problems.length > 0) throw new ConfigError(problems);
  return plain;
}
