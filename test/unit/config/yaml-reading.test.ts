import * as path from 'node:path';
import { loadConfig } from '../../../src/config/load';
import { dialectDefinition } from '../../../src/config/dialect';
import { settingsReference } from '../../../src/config/reference';
import { environmentVariableFor, resolveSettings } from '../../../src/config/settings';
import type { Dialect } from '../../../src/config/types';
import { parseConfigYaml } from '../../../src/config/yaml';
import { makeTempDir, problemsOf, removeTempDirs, writeFile } from './helpers';

/**
 * The configuration file is read as Fabric reads it (go-yaml v2 under viper: YAML 1.1, merge
 * keys), and whatever that reader would apply differently, or fabric-ops would drop, is refused.
 */

afterAll(removeTempDirs);

function load(fileName: string, text: string, env: Record<string, string> = {}): ReturnType<typeof loadConfig>['config'] {
  const dir = makeTempDir();
  return loadConfig({ configFile: writeFile(dir, fileName, text), env }).config;
}

function problemsLoading(fileName: string, text: string): { file: string; problems: readonly string[] } {
  const dir = makeTempDir();
  const file = writeFile(dir, fileName, text);
  return { file, problems: problemsOf(() => loadConfig({ configFile: file, env: {} })) };
}

describe('YAML merge keys are applied as go-yaml v2 applies them', () => {
  it("tls: {<<: *tlsdefaults, clientAuthRequired: false} turns TLS on with the anchor's files", () => {
    const config = load(
      'core.yaml',
      `
tlsdefaults: &tlsdefaults
  enabled: true
  clientAuthRequired: true
  cert: { file: tls/server.crt }
  key: { file: tls/server.key }
  clientRootCAs: { files: [tls/ca.crt] }
operations:
  listenAddress: 127.0.0.1:0
  tls:
    <<: *tlsdefaults
    clientAuthRequired: false
`,
    );
    expect(config.operations.tls.enabled).toBe(true);
    expect(config.operations.tls.clientAuthRequired).toBe(false);
    expect(path.basename(config.operations.tls.certFile)).toBe('server.crt');
    expect(path.basename(config.operations.tls.keyFile)).toBe('server.key');
    expect(config.operations.tls.clientRootCAFiles.map((file) => path.basename(file))).toEqual(['ca.crt']);
  });

  it('operations: {<<: *base} takes the whole section from the anchor, nested mappings included', () => {
    const config = load(
      'core.yaml',
      `
base: &base
  listenAddress: 127.0.0.1:7777
  tls: { enabled: true, cert: { file: c.crt }, key: { file: c.key }, clientRootCAs: { files: [ca.crt] } }
operations: {<<: *base}
`,
    );
    expect(config.operations.listen).toEqual({ host: '127.0.0.1', port: 7777 });
    expect(config.operations.tls.enabled).toBe(true);
  });

  it('in a merge list the earlier source wins, an explicit key wins over every source, and merges nest', () => {
    const config = load(
      'orderer.yaml',
      `
a: &a { Enabled: true, Certificate: a.crt }
b: &b { Enabled: false, Certificate: b.crt, PrivateKey: b.key, ClientAuthRequired: true }
c: &c { <<: *b, ClientRootCAs: [c.crt] }
Operations:
  ListenAddress: 127.0.0.1:0
  TLS:
    <<: [*a, *c]
    ClientAuthRequired: false
`,
    );
    expect(config.operations.tls).toMatchObject({ enabled: true, clientAuthRequired: false });
    expect(path.basename(config.operations.tls.certFile)).toBe('a.crt');
    expect(path.basename(config.operations.tls.keyFile)).toBe('b.key');
    expect(config.operations.tls.clientRootCAFiles.map((file) => path.basename(file))).toEqual(['c.crt']);
  });

  it('a merge whose value is not a mapping is refused, as go-yaml v2 refuses it', () => {
    const { file, problems } = problemsLoading('core.yaml', 'port: &port 9443\noperations: { <<: *port }\n');
    expect(problems).toEqual([`config file ${file}: a merge key (<<) whose value is not a mapping, an alias of one, or a list of them`]);
  });

  it('a key written before a merge key that also sets it is refused (go-yaml v2 would take the merged value)', () => {
    const { file, problems } = problemsLoading('core.yaml', 'd: &d { enabled: true }\noperations:\n  tls: { enabled: false, <<: *d }\n');
    expect(problems).toEqual([
      `config file ${file}: key "enabled" before a merge key that also sets it at line 3, column 10: Fabric's reader takes the merged value, the YAML rule this one; write the key after the << line ("  tls: { enabled: false, <<: *d }")`,
    ]);
  });

  it('two merge keys in one mapping are refused (go-yaml v2 lets the later win)', () => {
    const { file, problems } = problemsLoading('core.yaml', 'a: &a { enabled: true }\nb: &b { enabled: false }\noperations:\n  tls: { <<: *a, <<: *b }\n');
    expect(problems).toEqual([
      `config file ${file}: a second merge key at line 4, column 18: use one merge key with a list of sources, <<: [*first, *second] (Fabric's reader lets the later << win, the YAML rule the earlier) ("  tls: { <<: *a, <<: *b }")`,
    ]);
  });

  it('a quoted "<<" is an ordinary key, as in go-yaml v2', () => {
    expect(load('core.yaml', 'd: &d { enabled: true }\noperations:\n  tls: { "<<": *d }\n').operations.tls.enabled).toBe(false);
  });
});

describe('YAML constructs that are not applied are refused, naming the file and the line or key', () => {
  it.each([
    ['an unknown tag', 'operations:\n  tls:\n    enabled: !vault true\n', 'line 3, column 14: Unresolved tag: !vault'],
    [
      'a tag from a %TAG directive',
      '%TAG !e! tag:example.com,2000:\n---\noperations: { tls: { enabled: !e!flag on } }\n',
      'line 3, column 31: Unresolved tag: tag:example.com,2000:flag',
    ],
    ['!!binary', 'operations: { tls: { cert: { file: !!binary L2V0Yy9jZXJ0 } } }\n', 'line 1, column 36: Unresolved tag: !!binary'],
    ['!!set', 'operations: { tls: { clientRootCAs: { files: !!set { a.crt, b.crt } } } }\n', 'line 1, column 46: Unresolved tag: !!set'],
    ['!!omap', 'operations: !!omap [ listenAddress: ":1" ]\n', 'line 1, column 13: Unresolved tag: !!omap'],
    ['!!timestamp', 'operations: { listenAddress: !!timestamp 2001-12-14 }\n', 'line 1, column 30: Unresolved tag: !!timestamp'],
    ['an unknown directive', '%FABRIC 2\n---\noperations: {}\n', 'line 1, column 1: Unknown directive %FABRIC'],
  ])('%s', (_what, text, detail) => {
    const { file, problems } = problemsLoading('core.yaml', text);
    expect(problems).toHaveLength(1);
    expect(problems[0]).toContain(`config file ${file}: YAML that fabric-ops does not apply at ${detail}`);
  });

  it('a %YAML 1.2 directive (go-yaml v2 reads YAML 1.1 only; 1.2 would make `on` a string)', () => {
    const { file, problems } = problemsLoading('core.yaml', '%YAML 1.2\n---\noperations: { tls: { enabled: on } }\n');
    expect(problems).toEqual([
      `config file ${file}: a %YAML directive at line 1, column 1: YAML 1.2 is not read; Fabric's reader takes only YAML 1.1 (remove the directive) ("%YAML 1.2")`,
    ]);
    expect(load('core.yaml', '%YAML 1.1\n---\noperations: { tls: { requireDedicatedCA: on } }\n').operations.tls.requireDedicatedCA).toBe(true);
  });

  it.each([
    ['a mapping as a key', '? { enabled: true }\n: x\noperations: {}\n', 'the document: a key that is a mapping'],
    ['a sequence as a key', 'operations:\n  ? [tls]\n  : { enabled: true }\n', 'operations: a key that is a sequence'],
    ['an empty key', 'operations:\n  tls:\n    : true\n', 'operations.tls: a key that is empty (null)'],
    ['keys that differ only in case', 'operations:\n  tls: { enabled: true, ENABLED: false }\n', 'operations.tls: keys "enabled" and "ENABLED" are one key'],
    [
      'a merged key that differs only in case from an explicit one',
      'd: &d { Enabled: true }\noperations:\n  tls: { <<: *d, enabled: false }\n',
      'operations.tls: keys "Enabled" and "enabled" are one key',
    ],
    ['a number key and the same text', 'operations:\n  1: a\n  "1": b\n', 'operations: keys 1 and "1" are one key'],
    ['an alias of its own mapping', 'operations: &ops { again: *ops }\n', 'operations.again: an alias that contains itself'],
  ])('%s', (_what, text, detail) => {
    const { file, problems } = problemsLoading('core.yaml', text);
    expect(problems).toHaveLength(1);
    expect(problems[0]).toContain(`config file ${file}: ${detail}`);
  });

  it('duplicate keys stay refused, with their line', () => {
    const { file, problems } = problemsLoading('core.yaml', 'operations:\n  tls:\n    enabled: true\n    enabled: false\n');
    expect(problems).toEqual([`config file ${file}: not valid YAML at line 4, column 5: Map keys must be unique ("    enabled: false")`]);
  });

  it('every problem of the file is listed, one line each', () => {
    const { problems } = problemsLoading('core.yaml', 'a: !x 1\nb: !y 2\noperations: {}\n');
    expect(problems.map((problem) => /line (\d+)/.exec(problem)?.[1])).toEqual(['1', '2']);
  });
});

describe('YAML aliases', () => {
  it('an alias bomb is a configuration error naming the file, not a crash', () => {
    const lines = ['a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]'];
    for (let level = 1; level < 9; level += 1) {
      const name = String.fromCharCode(97 + level);
      const previous = String.fromCharCode(96 + level);
      lines.push(`${name}: &${name} [${Array(9).fill(`*${previous}`).join(', ')}]`);
    }
    lines.push('operations: { listenAddress: *i }');
    const { file, problems } = problemsLoading('core.yaml', `${lines.join('\n')}\n`);
    expect(problems).toEqual([`config file ${file}: too many YAML aliases (expanding them goes past the limit of 1000; an alias bomb?)`]);
  });

  it('ordinary aliases are read', () => {
    const config = load(
      'core.yaml',
      'ca: &ca [ca1.crt, ca2.crt]\noperations:\n  tls: { clientRootCAs: { files: *ca } }\npeer:\n  tls: { clientRootCAs: { files: *ca } }\n',
    );
    expect(config.operations.tls.clientRootCAFiles.map((file) => path.basename(file))).toEqual(['ca1.crt', 'ca2.crt']);
  });
});

describe('YAML 1.1 scalars as go-yaml v2 resolves them', () => {
  it('keeps timestamps and base-60 numbers as text, and reads 1.1 booleans and octals as viper then prints them', () => {
    const document = parseConfigYaml('a: 2001-12-14\nb: 1:30\nc: on\nd: NO\ne: 010\nf: 0x1F\ng: ~\n', '/x.yaml');
    expect(document).toEqual({ a: '2001-12-14', b: '1:30', c: true, d: false, e: 8, f: 31, g: null });
    const config = load('core.yaml', 'metrics: { provider: prometheus, statsd: { prefix: 2001-12-14 } }\n');
    expect(config.metrics.statsd.prefix).toBe('2001-12-14.');
  });

  it('a key named __proto__ is an ordinary key', () => {
    const document = parseConfigYaml('__proto__: { polluted: true }\noperations: {}\n', '/x.yaml') as Record<string, unknown>;
    expect(Object.keys(document)).toEqual(['__proto__', 'operations']);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});

/** `a.b.c` and a YAML scalar as the nested mapping a: b: c: <scalar>. */
function nestedYaml(key: string, scalar: string): string {
  return key
    .split('.')
    .map((segment, depth, all) => `${'  '.repeat(depth)}${segment}:${depth === all.length - 1 ? ` ${scalar}` : ''}`)
    .join('\n');
}

const yamlTrue = ['y', 'Y', 'yes', 'Yes', 'YES', 'true', 'True', 'TRUE', 'on', 'On', 'ON', '1', 't', 'T', '"1"', '"t"', '"T"', '"TRUE"', '"true"', "'True'"];
const yamlFalse = [
  'n',
  'N',
  'no',
  'No',
  'NO',
  'false',
  'False',
  'FALSE',
  'off',
  'Off',
  'OFF',
  '0',
  'f',
  'F',
  '"0"',
  '"f"',
  '"F"',
  '"FALSE"',
  '"false"',
  "'False'",
];
const yamlRefused = ['maybe', '"yes"', '"on"', "'Y'", 'tRUE', 'oN', '2', '-1', '0.5', '[true]', '{ x: true }', '" true"', '.inf'];
const environmentTrue = ['1', 't', 'T', 'TRUE', 'true', 'True'];
const environmentFalse = ['0', 'f', 'F', 'FALSE', 'false', 'False'];
const environmentRefused = ['yes', 'on', 'y', 'tRUE', ' true', 'true ', '2', 'enabled'];

describe.each(['peer', 'orderer'] as const)("boolean keys of the %s dialect accept exactly Fabric's spellings", (dialect: Dialect) => {
  const definition = dialectDefinition(dialect);
  const booleanKeys = settingsReference(dialect).filter((setting) => setting.kind === 'boolean');

  function readBoolean(key: string, yaml: string | null, env: Record<string, string> = {}): { value: boolean; problems: string[] } {
    const document = yaml === null ? null : parseConfigYaml(nestedYaml(key, yaml), `/etc/${definition.fileName}`);
    const resolved = resolveSettings(definition.schema, document, env, definition.envPrefix, definition.fileName);
    return { value: resolved.values.boolean(key), problems: resolved.problems.map((problem) => problem.message) };
  }

  it('has boolean keys, each false by default', () => {
    expect(booleanKeys.length).toBeGreaterThanOrEqual(3);
    for (const setting of booleanKeys) expect([setting.key, setting.defaultValue]).toEqual([setting.key, false]);
  });

  it.each(booleanKeys.map((setting) => setting.key))('%s in the file', (key) => {
    for (const spelling of yamlTrue) expect([spelling, readBoolean(key, spelling)]).toEqual([spelling, { value: true, problems: [] }]);
    // Every boolean key defaults to false: no problem and false means the spelling was read (a refused one is a problem).
    for (const spelling of yamlFalse) expect([spelling, readBoolean(key, spelling)]).toEqual([spelling, { value: false, problems: [] }]);
    for (const spelling of yamlRefused) {
      const read = readBoolean(key, spelling);
      expect([spelling, read.problems]).toEqual([
        spelling,
        [
          expect.stringMatching(
            new RegExp(
              `^${key.replace(/\./g, '\\.')}: must be true or false; got .*; accepted: y, Y, yes, Yes, YES, true, True, TRUE, on, On, ON, 1, t, T \\(true\\), n, N, no, No, NO, false, False, FALSE, off, Off, OFF, 0, f, F \\(false\\)`,
            ),
          ),
        ],
      ]);
    }
  });

  it.each(booleanKeys.map((setting) => setting.key))('%s from the environment', (key) => {
    const variable = environmentVariableFor(definition.envPrefix, key);
    for (const spelling of environmentTrue)
      expect([spelling, readBoolean(key, 'false', { [variable]: spelling })]).toEqual([spelling, { value: true, problems: [] }]);
    for (const spelling of environmentFalse)
      expect([spelling, readBoolean(key, 'true', { [variable]: spelling })]).toEqual([spelling, { value: false, problems: [] }]);
    for (const spelling of environmentRefused) {
      expect([spelling, readBoolean(key, null, { [variable]: spelling }).problems]).toEqual([
        spelling,
        [
          `${variable} (${key}): ${JSON.stringify(spelling)} is not true or false; accepted: 1, t, T, TRUE, true, True (true), 0, f, F, FALSE, false, False (false)`,
        ],
      ]);
    }
  });
});
