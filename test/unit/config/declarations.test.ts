import { defaultOf, docOf, settings, settingsOf, spelling, type SettingDeclaration, type SettingName } from '../../../src/config/declarations';
import { dialectDefinition } from '../../../src/config/dialect';
import { normaliseConfig } from '../../../src/config/normalise';
import { settingsReference } from '../../../src/config/reference';
import { environmentVariableFor, schemaLeaves } from '../../../src/config/settings';
import { dialects } from '../../../src/config/types';

const names = Object.keys(settings) as SettingName[];

describe('the declarations (src/config/declarations.ts): every key once', () => {
  test.each(dialects)('%s: every declared default passes its own format', (dialect) => {
    for (const name of settingsOf(dialect)) {
      const declaration: SettingDeclaration = settings[name];
      if (declaration.format === undefined) continue;
      expect({ name, parsed: declaration.format(String(defaultOf(dialect, name))) }).toMatchObject({ name, parsed: { ok: true } });
    }
  });

  test.each(dialects)('%s: spellings and environment variables are unique, and every doc renders', (dialect) => {
    const keys = settingsOf(dialect).map((name) => spelling(dialect, name));
    expect(new Set(keys.map((key) => key.toLowerCase())).size).toBe(keys.length);
    const variables = keys.map((key) => environmentVariableFor(dialectDefinition(dialect).envPrefix, key));
    expect(new Set(variables).size).toBe(variables.length);
    for (const name of settingsOf(dialect)) {
      const doc = docOf(dialect, name);
      expect({ name, doc }).toEqual({ name, doc: expect.not.stringMatching(/\{\w+(:section)?\}/) as string });
    }
  });

  test('a doc names the other dialect spelled its own way', () => {
    expect(docOf('peer', 'companionLogspecWritable')).toContain('`operations.companion.tls.enabled`');
    expect(docOf('orderer', 'companionLogspecWritable')).toContain('`Operations.Companion.TLS.Enabled`');
    expect(docOf('orderer', 'companionEnabled')).toContain('serve beside the orderer this file configures');
    expect(docOf('orderer', 'companionEnabled')).toContain('`Operations.TLS.*`');
    expect(docOf('peer', 'tlsCertFile')).toContain('the directory of core.yaml');
    expect(docOf('orderer', 'tlsCertFile')).toContain('the directory of orderer.yaml');
  });

  test('a setting has a spelling in at least one dialect, and a per-dialect default only when both have it', () => {
    for (const name of names) {
      const declaration: SettingDeclaration = settings[name];
      expect({ name, spelled: declaration.peer !== null || declaration.orderer !== null }).toEqual({ name, spelled: true });
      if (typeof declaration.default === 'object' && !Array.isArray(declaration.default)) {
        expect({ name, both: declaration.peer !== null && declaration.orderer !== null }).toEqual({ name, both: true });
      }
    }
  });

  test.each(dialects)('%s: the convict schema, --list-keys and NormalisedConfig.keys come from the declarations', (dialect) => {
    const definition = dialectDefinition(dialect);
    const leaves = schemaLeaves(definition.schema);
    expect(leaves.map((leaf) => leaf.path)).toEqual(settingsOf(dialect).map((name) => spelling(dialect, name)));
    for (const leaf of leaves) {
      const name = settingsOf(dialect).find((candidate) => spelling(dialect, candidate) === leaf.path) as SettingName;
      expect({ path: leaf.path, kind: leaf.kind, defaultValue: leaf.defaultValue }).toEqual({
        path: leaf.path,
        kind: settings[name].kind,
        defaultValue: defaultOf(dialect, name),
      });
    }
    expect(settingsReference(dialect).map((entry) => entry.key)).toEqual(leaves.map((leaf) => leaf.path));
    for (const [name, key] of Object.entries(definition.keys)) expect(key).toBe(spelling(dialect, name as SettingName));
  });

  test('a bad value is refused naming the key and its variable; the format says what is allowed', () => {
    const refuse = (dialect: 'peer' | 'orderer', env: Record<string, string>): string[] => {
      try {
        normaliseConfig({ dialect, document: null, env, configDir: '/srv', configFile: null });
      } catch (error) {
        return (error as { problems: string[] }).problems;
      }
      throw new Error('not refused');
    };
    expect(refuse('orderer', { ORDERER_OPERATIONS_MAXCONNECTIONS: '0' })).toEqual([
      'Operations.MaxConnections (from ORDERER_OPERATIONS_MAXCONNECTIONS): must be a whole number from 1 to 1000000; got "0"',
    ]);
    expect(refuse('peer', { CORE_OPERATIONS_COMPANION_ENABLED: 'true', CORE_OPERATIONS_COMPANION_LOGSPEC_POLLINTERVAL: '50ms' })).toEqual([
      'operations.companion.logspec.pollInterval (from CORE_OPERATIONS_COMPANION_LOGSPEC_POLLINTERVAL): must be at least 100ms; got "50ms"',
    ]);
    expect(refuse('peer', { CORE_METRICS_PROVIDER: 'statsd', CORE_METRICS_STATSD_NETWORK: 'sctp' })).toEqual([
      'metrics.statsd.network (from CORE_METRICS_STATSD_NETWORK): must be one of tcp, udp; got "sctp"',
    ]);
  });
});
