/**
 * fabric-ops' own environment variables (src/config/environment.ts): each one's value, default and
 * refusal through convict, and no FABRIC_OPS_* variable in src/ without its declaration.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { defaultMaxFunctionNames } from '../../../src/chaincode/transactions';
import {
  environmentReference,
  environmentSchema,
  inspectorAllowed,
  readEnvironment,
  type EnvironmentKey,
  type EnvironmentValues,
} from '../../../src/config/environment';
import { ConfigError } from '../../../src/errors';

const keys = Object.keys(environmentSchema) as EnvironmentKey[];

/** The problems readEnvironment throws for `env`, or [] when it reads. */
function problems(env: NodeJS.ProcessEnv, asked: readonly EnvironmentKey[] = keys): readonly string[] {
  try {
    readEnvironment(env, asked);
    return [];
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    return error.problems;
  }
}

const defaults: EnvironmentValues = {
  allowInspector: false,
  fleetConfig: '',
  fleetUrl: '',
  fleetCert: '',
  fleetKey: '',
  fleetCacert: '',
  chaincodeConfig: '',
  chaincodeRegistrationTimeout: 60_000,
  chaincodeStuckTimeout: 60_000,
  chaincodeMaxFunctions: 100,
  podName: '',
  podNamespace: '',
  podUid: '',
  nodeName: '',
  serviceAccountRoot: '',
  kubernetesWatchTimeout: 30_000,
};

describe('each variable through convict', () => {
  test('unset, every variable has its default; set but empty counts as unset', () => {
    expect(readEnvironment({}, keys)).toEqual(defaults);
    const empty = Object.fromEntries(keys.map((key) => [environmentSchema[key].env, '']));
    expect(readEnvironment(empty, keys)).toEqual(defaults);
  });

  test("the defaults other modules use are the schema's", () => {
    // src/chaincode/transactions.ts keeps its own constant (FunctionNames' default): the two must agree.
    expect(environmentSchema.chaincodeMaxFunctions.default).toBe(defaultMaxFunctionNames);
  });

  const read: Array<[EnvironmentKey, string, EnvironmentValues[EnvironmentKey]]> = [
    ['allowInspector', '1', true],
    ['allowInspector', '0', false],
    ['fleetConfig', 'fleet.yaml', 'fleet.yaml'],
    ['fleetUrl', 'https://fleet.example:9443', 'https://fleet.example:9443'],
    ['fleetUrl', 'https://10.0.0.5:9443/', 'https://10.0.0.5:9443/'],
    ['fleetCert', 'certs/me.crt', 'certs/me.crt'],
    ['fleetKey', '/keys/me.key', '/keys/me.key'],
    ['fleetCacert', 'ca.crt', 'ca.crt'],
    ['chaincodeConfig', '/etc/chaincode/operations.yaml', '/etc/chaincode/operations.yaml'],
    ['chaincodeRegistrationTimeout', '1m30s', 90_000],
    ['chaincodeStuckTimeout', '45s', 45_000],
    ['chaincodeStuckTimeout', '1.5ms', 2],
    ['chaincodeMaxFunctions', '20', 20],
    ['chaincodeMaxFunctions', '0', 0],
    ['chaincodeMaxFunctions', ' 10000 ', 10_000],
    ['podName', 'peer0-org1-0', 'peer0-org1-0'],
    ['podNamespace', 'org1', 'org1'],
    ['podUid', '0f7c2a57-3b9e-4a1c-9f1e-2d7f4c8b1a00', '0f7c2a57-3b9e-4a1c-9f1e-2d7f4c8b1a00'],
    ['nodeName', 'worker-3', 'worker-3'],
    ['serviceAccountRoot', '/tmp/sa-root/', '/tmp/sa-root/'],
    ['kubernetesWatchTimeout', '1000', 1000],
    ['kubernetesWatchTimeout', '100', 100],
  ];

  test('every variable has a case below', () => {
    expect(new Set(read.map(([key]) => key))).toEqual(new Set(keys));
  });

  test.each(read)('%s: %j is read as %j', (key, text, value) => {
    expect(readEnvironment({ [environmentSchema[key].env]: text }, [key])).toEqual({ [key]: value });
  });

  const refused: Array<[EnvironmentKey, string, string]> = [
    ['allowInspector', 'true', 'FABRIC_OPS_ALLOW_INSPECTOR: "true" is not 1 (on) or 0 (off)'],
    ['allowInspector', 'yes', 'FABRIC_OPS_ALLOW_INSPECTOR: "yes" is not 1 (on) or 0 (off)'],
    ['fleetUrl', 'http://fleet:9443', 'FABRIC_OPS_FLEET_URL: "http://fleet:9443" must be https://host:port (the fleet endpoints need mutual TLS)'],
    [
      'fleetUrl',
      'https://fleet:9443/fleet',
      'FABRIC_OPS_FLEET_URL: "https://fleet:9443/fleet" must be https://host:port (the fleet endpoints need mutual TLS)',
    ],
    ['chaincodeRegistrationTimeout', '90', 'FABRIC_OPS_CHAINCODE_REGISTRATION_TIMEOUT: "90" is not a duration (e.g. 10s, 1m30s, 500ms)'],
    ['chaincodeStuckTimeout', '45', 'FABRIC_OPS_CHAINCODE_STUCK_TIMEOUT: "45" is not a duration (e.g. 10s, 1m30s, 500ms)'],
    ['chaincodeStuckTimeout', '0s', 'FABRIC_OPS_CHAINCODE_STUCK_TIMEOUT: must be greater than 0; got "0s"'],
    ['chaincodeMaxFunctions', 'lots', 'FABRIC_OPS_CHAINCODE_MAX_FUNCTIONS: "lots" is not a whole number from 0 to 10000'],
    ['chaincodeMaxFunctions', '20000', 'FABRIC_OPS_CHAINCODE_MAX_FUNCTIONS: "20000" is not a whole number from 0 to 10000'],
    ['chaincodeMaxFunctions', '-1', 'FABRIC_OPS_CHAINCODE_MAX_FUNCTIONS: "-1" is not a whole number from 0 to 10000'],
    ['chaincodeMaxFunctions', '1.5', 'FABRIC_OPS_CHAINCODE_MAX_FUNCTIONS: "1.5" is not a whole number from 0 to 10000'],
    ['kubernetesWatchTimeout', '99', 'FABRIC_OPS_KUBERNETES_WATCH_TIMEOUT_MS: "99" is not a whole number of milliseconds from 100 to 3600000'],
    ['kubernetesWatchTimeout', '3600001', 'FABRIC_OPS_KUBERNETES_WATCH_TIMEOUT_MS: "3600001" is not a whole number of milliseconds from 100 to 3600000'],
    ['kubernetesWatchTimeout', '30s', 'FABRIC_OPS_KUBERNETES_WATCH_TIMEOUT_MS: "30s" is not a whole number of milliseconds from 100 to 3600000'],
  ];

  test.each(refused)('%s: %j is refused, naming the variable and what it takes', (key, text, message) => {
    expect(problems({ [environmentSchema[key].env]: text }, [key])).toEqual([message]);
    expect(() => readEnvironment({ [environmentSchema[key].env]: text }, [key])).toThrow(ConfigError);
  });

  test('a variable of text or a path takes any text, as given; every other has a refused case above', () => {
    const anyText = ' name with spaces, ünïcode and / slashes ';
    for (const key of keys) {
      const { env, format } = environmentSchema[key];
      if (format === 'fabric-ops-text' || format === 'fabric-ops-path') expect(readEnvironment({ [env]: anyText }, [key])).toEqual({ [key]: anyText });
      else expect(refused.map(([refusedKey]) => refusedKey)).toContain(key);
    }
  });

  test('every bad variable is named, in the order asked; the value quoted is bounded', () => {
    const env = {
      FABRIC_OPS_CHAINCODE_STUCK_TIMEOUT: 'soon',
      FABRIC_OPS_CHAINCODE_MAX_FUNCTIONS: '9'.repeat(100_000),
      FABRIC_OPS_CHAINCODE_REGISTRATION_TIMEOUT: '2m',
    };
    const found = problems(env, ['chaincodeMaxFunctions', 'chaincodeRegistrationTimeout', 'chaincodeStuckTimeout']);
    expect(found).toEqual([
      expect.stringMatching(/^FABRIC_OPS_CHAINCODE_MAX_FUNCTIONS: "9{64}"\.\.\. \(100000 characters\) is not a whole number from 0 to 10000$/),
      'FABRIC_OPS_CHAINCODE_STUCK_TIMEOUT: "soon" is not a duration (e.g. 10s, 1m30s, 500ms)',
    ]);
  });

  test('only the variables asked for are read: a bad one elsewhere stops nobody else', () => {
    const env = { FABRIC_OPS_KUBERNETES_WATCH_TIMEOUT_MS: 'never', POD_NAME: 'peer0' };
    expect(readEnvironment(env, ['podName'])).toEqual({ podName: 'peer0' });
    expect(problems(env)).toEqual(['FABRIC_OPS_KUBERNETES_WATCH_TIMEOUT_MS: "never" is not a whole number of milliseconds from 100 to 3600000']);
  });
});

describe('FABRIC_OPS_ALLOW_INSPECTOR without convict (the inspector guard, in dist/cli.js)', () => {
  test.each([
    [{ FABRIC_OPS_ALLOW_INSPECTOR: '1' }, true],
    [{ FABRIC_OPS_ALLOW_INSPECTOR: '0' }, false],
    [{ FABRIC_OPS_ALLOW_INSPECTOR: '' }, false],
    [{}, false],
  ])('%j: %s, as convict reads it', (env, allowed) => {
    expect(inspectorAllowed(env)).toBe(allowed);
    expect(readEnvironment(env, ['allowInspector']).allowInspector).toBe(allowed);
  });

  test('a value convict refuses does not allow it either', () => {
    expect(inspectorAllowed({ FABRIC_OPS_ALLOW_INSPECTOR: 'true' })).toBe(false);
    expect(problems({ FABRIC_OPS_ALLOW_INSPECTOR: 'true' }, ['allowInspector'])).toHaveLength(1);
  });
});

describe('the reference (docs/reference/command.md, make docs)', () => {
  test('one row per variable, in declaration order, with its format and default as an operator writes them', () => {
    const rows = environmentReference();
    expect(rows.map((row) => row.variable)).toEqual(keys.map((key) => environmentSchema[key].env));
    const row = (variable: string) => rows.find((candidate) => candidate.variable === variable);
    expect(row('FABRIC_OPS_ALLOW_INSPECTOR')).toMatchObject({ format: '`1` (on) or `0`', defaultValue: '0', readBy: 'the command' });
    expect(row('FABRIC_OPS_CHAINCODE_STUCK_TIMEOUT')).toMatchObject({ format: 'Go duration (`500ms`, `1m30s`)', defaultValue: '60s' });
    expect(row('FABRIC_OPS_CHAINCODE_MAX_FUNCTIONS')).toMatchObject({ format: 'whole number, 0 to 10000', defaultValue: '100' });
    expect(row('FABRIC_OPS_KUBERNETES_WATCH_TIMEOUT_MS')).toMatchObject({ format: 'whole number of milliseconds, 100 to 3600000', defaultValue: '30000' });
    expect(row('FABRIC_OPS_FLEET_URL')).toMatchObject({ format: '`https://host:port`', defaultValue: '', readBy: '`fabric-ops fleet`' });
    for (const { doc, readBy } of rows) {
      expect(doc).not.toBe('');
      expect(readBy).not.toBe('');
    }
  });
});

describe('no variable without its declaration', () => {
  const srcRoot = path.resolve(__dirname, '..', '..', '..', 'src');
  const sources = (readdirSync(srcRoot, { recursive: true }) as string[])
    .filter((file) => file.endsWith('.ts'))
    .map((file) => ({ file: path.join('src', file), text: readFileSync(path.join(srcRoot, file), 'utf8') }));
  /** Error codes (`readonly code = 'FABRIC_OPS_...'`, `error.code === '...'`): names of the same shape that are no variable. */
  const errorCodes = new Set(sources.flatMap(({ text }) => [...text.matchAll(/\bcode\s*(?:=|===|!==)\s*'(FABRIC_OPS_[A-Z0-9_]+)'/g)].map((match) => match[1])));
  /** Every FABRIC_OPS_* name the sources write, and where; `FABRIC_OPS_CHAINCODE_*` (a family, in prose) is no name. */
  const named = new Map<string, string>();
  for (const { file, text } of sources) {
    for (const [name] of text.matchAll(/\bFABRIC_OPS_[A-Z0-9_]*[A-Z0-9]\b/g)) if (!errorCodes.has(name) && !named.has(name)) named.set(name, file);
  }

  test('the scan finds what it looks for (variables, and error codes to leave out)', () => {
    expect(sources.length).toBeGreaterThan(100);
    for (const code of ['FABRIC_OPS_CONFIG', 'FABRIC_OPS_KUBERNETES_API', 'FABRIC_OPS_PUT_BACK_PERSIST']) expect(errorCodes.has(code)).toBe(true);
    for (const variable of ['FABRIC_OPS_FLEET_URL', 'FABRIC_OPS_CHAINCODE_MAX_FUNCTIONS', 'FABRIC_OPS_ALLOW_INSPECTOR']) expect(named.has(variable)).toBe(true);
  });

  test('every FABRIC_OPS_* variable named in src/ is declared in src/config/environment.ts', () => {
    const declared = new Set<string>(keys.map((key) => environmentSchema[key].env));
    const undeclared = [...named].filter(([name]) => !declared.has(name)).map(([name, file]) => `${name} (${file})`);
    expect(undeclared).toEqual([]);
  });
});
