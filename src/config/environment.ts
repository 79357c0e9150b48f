import type ConvictModule from 'convict';
import { ConfigError, messageOf } from '../errors';
import { maxTimerDelayMs, parsePositiveDurationMs, quoteValue } from './values';

/**
 * fabric-ops' own environment variables, each declared once here: a convict schema entry with its
 * variable (`env`), format, default and `doc`, plus who reads it (`readBy`, for the reference).
 * Modules ask readEnvironment() for the values they need; the command reference's table
 * (docs/reference/command.md, `make docs`) is generated from this schema. Not here: Fabric's own
 * variables (the CORE_* / ORDERER_* overrides, which the dialect schemas declare, FABRIC_CFG_PATH,
 * FABRIC_LOGGING_*), Kubernetes' (KUBECONFIG, KUBERNETES_SERVICE_*) and Node's.
 *
 * A new variable: an entry below (a format from `formats`, or a new one there), read with
 * readEnvironment(env, ['itsKey']) where it is used, and a case in test/unit/config/environment.test.ts,
 * which also fails when a FABRIC_OPS_* name in src/ has no entry here.
 */

/** The values each format gives. */
interface FormatValues {
  'fabric-ops-switch': boolean;
  'fabric-ops-duration': number;
  'fabric-ops-whole-number': number;
  'fabric-ops-https-endpoint': string;
  'fabric-ops-path': string;
  'fabric-ops-text': string;
}

/**
 * The names of convict's format registry, which is one per process (convict.addFormat), shared
 * with any other code of the process that uses convict (a chaincode, an embedding application):
 * prefixed, so that neither replaces the other's.
 */
type FormatName = keyof FormatValues;

/** One variable: a convict schema entry (`env`, `format`, `default`, `doc`) and what the reference says besides. */
export interface EnvironmentDeclaration {
  /** The variable. */
  readonly env: string;
  readonly format: FormatName;
  /** The value when the variable is unset or empty. */
  readonly default: boolean | number | string;
  /** What it does, for the reference. */
  readonly doc: string;
  /** Which part of fabric-ops reads it, for the reference. */
  readonly readBy: string;
  /** fabric-ops-whole-number: the bounds, and the unit a message names. */
  readonly minimum?: number;
  readonly maximum?: number;
  readonly unit?: string;
}

const kubernetesReaders = 'the Kubernetes integration, fleet discovery and its ConfigMap';

/**
 * Declared apart from the others only so that src/inspector-guard.ts, which also runs in
 * dist/cli.js (see loadConvict), can name it without bundling the whole schema there.
 */
const allowInspector = {
  env: 'FABRIC_OPS_ALLOW_INSPECTOR',
  format: 'fabric-ops-switch',
  default: false,
  readBy: 'the command',
  doc: '`1`: run with a V8 inspector open, to debug on purpose; without it the command refuses to run when one is open (see SIGUSR1 and the debugger, below)',
} as const satisfies EnvironmentDeclaration;

/** Every variable, by the key modules ask for it with. */
export const environmentSchema = {
  allowInspector,
  fleetConfig: {
    env: 'FABRIC_OPS_FLEET_CONFIG',
    format: 'fabric-ops-path',
    default: '',
    readBy: 'the command',
    doc: 'fleet mode: the fleet file, as `--fleet-config` (which wins)',
  },
  fleetUrl: {
    env: 'FABRIC_OPS_FLEET_URL',
    format: 'fabric-ops-https-endpoint',
    default: '',
    readBy: '`fabric-ops fleet`',
    doc: 'the fleet endpoint, as `--url` (which wins)',
  },
  fleetCert: {
    env: 'FABRIC_OPS_FLEET_CERT',
    format: 'fabric-ops-path',
    default: '',
    readBy: '`fabric-ops fleet`',
    doc: 'the client certificate (PEM), as `--cert` (which wins)',
  },
  fleetKey: {
    env: 'FABRIC_OPS_FLEET_KEY',
    format: 'fabric-ops-path',
    default: '',
    readBy: '`fabric-ops fleet`',
    doc: "the client certificate's key (PEM), as `--key` (which wins)",
  },
  fleetCacert: {
    env: 'FABRIC_OPS_FLEET_CACERT',
    format: 'fabric-ops-path',
    default: '',
    readBy: '`fabric-ops fleet`',
    doc: "the CA of the fleet server's certificate (PEM), as `--cacert` (which wins)",
  },
  chaincodeConfig: {
    env: 'FABRIC_OPS_CHAINCODE_CONFIG',
    format: 'fabric-ops-path',
    default: '',
    readBy: '`fabric-ops/chaincode`',
    doc: "the chaincode's own configuration file (peer dialect: `operations`, `metrics`), read whatever it holds; before FABRIC_CFG_PATH, after the `config` and `configFile` options",
  },
  chaincodeRegistrationTimeout: {
    env: 'FABRIC_OPS_CHAINCODE_REGISTRATION_TIMEOUT',
    format: 'fabric-ops-duration',
    default: 60_000,
    readBy: '`fabric-ops/chaincode`',
    doc: 'a peer must have connected and registered within this time of the chaincode server listening (and of a stream opening); the `registrationTimeoutMs` option wins',
  },
  chaincodeStuckTimeout: {
    env: 'FABRIC_OPS_CHAINCODE_STUCK_TIMEOUT',
    format: 'fabric-ops-duration',
    default: 60_000,
    readBy: '`fabric-ops/chaincode`',
    doc: 'a transaction running longer marks the peer stream stuck (the peer gives up after its `chaincode.executetimeout`, 30 s by default); the `stuckTimeoutMs` option wins',
  },
  chaincodeMaxFunctions: {
    env: 'FABRIC_OPS_CHAINCODE_MAX_FUNCTIONS',
    format: 'fabric-ops-whole-number',
    default: 100,
    minimum: 0,
    // Series are made per channel, function and outcome: beyond this many names a cap protects nothing.
    maximum: 10_000,
    readBy: '`fabric-ops/chaincode`',
    doc: 'plain (Init/Invoke) chaincodes: how many function names get series of their own; the rest are labelled `other`; the `maxFunctionNames` option wins',
  },
  podName: {
    env: 'POD_NAME',
    format: 'fabric-ops-text',
    default: '',
    readBy: 'the Kubernetes integration',
    doc: "the pod's name (downward API: `metadata.name`), which its Events name; needed with Events or the logspec ConfigMap on",
  },
  podNamespace: {
    env: 'POD_NAMESPACE',
    format: 'fabric-ops-text',
    default: '',
    readBy: kubernetesReaders,
    doc: "the pod's namespace (downward API: `metadata.namespace`): its Events' and the logspec ConfigMap's, and fleet discovery's default (else the kubeconfig context's); needed with Events or the logspec ConfigMap on",
  },
  podUid: {
    env: 'POD_UID',
    format: 'fabric-ops-text',
    default: '',
    readBy: 'the Kubernetes integration',
    doc: "the pod's UID (downward API: `metadata.uid`), written in its Events' `involvedObject`",
  },
  nodeName: {
    env: 'NODE_NAME',
    format: 'fabric-ops-text',
    default: '',
    readBy: 'the Kubernetes integration',
    doc: "the Kubernetes node's name (downward API: `spec.nodeName`), written in the Events' `source.host`",
  },
  serviceAccountRoot: {
    env: 'FABRIC_OPS_SERVICEACCOUNT_ROOT',
    format: 'fabric-ops-path',
    default: '',
    readBy: kubernetesReaders,
    doc: 'a folder that holds `var/run/secrets/kubernetes.io/serviceaccount/` in place of `/` (tests)',
  },
  kubernetesWatchTimeout: {
    env: 'FABRIC_OPS_KUBERNETES_WATCH_TIMEOUT_MS',
    format: 'fabric-ops-whole-number',
    default: 30_000,
    minimum: 100,
    maximum: 3_600_000,
    unit: 'milliseconds',
    readBy: 'the Kubernetes integration',
    doc: "the watches' inactivity cut, as client-node's: a watch that has received nothing for this long (a connection that died without a word) is ended and opened again (tests shorten it)",
  },
} as const satisfies Record<string, EnvironmentDeclaration>;

export type EnvironmentKey = keyof typeof environmentSchema;

/** The value of each variable once read. */
export type EnvironmentValues = { -readonly [K in EnvironmentKey]: FormatValues[(typeof environmentSchema)[K]['format']] };

/**
 * A convict format (convict.addFormat): `coerce` turns the variable's text into the value, and
 * leaves text it cannot read as it is; `validate` (convict's check, after coercion) throws the
 * problem, worded without the variable, which the caller puts first. What the reference shows of
 * the format and of a default comes from here too.
 */
interface EnvironmentFormat<T> {
  coerce(text: string): T | string;
  validate(value: unknown, declaration: EnvironmentDeclaration): asserts value is T;
  /** The reference's format column. */
  describe(declaration: EnvironmentDeclaration): string;
  /** A default as an operator would write it ('' for none). */
  show(value: T): string;
}

/** How a value that is not of its format is quoted in a message: as text, bounded (an environment variable can hold megabytes). */
function quoted(value: unknown): string {
  return quoteValue(typeof value === 'string' ? value : String(value));
}

/** `1` on, `0` off; other text stays text. */
function readSwitch(text: string): boolean | string {
  return text === '1' ? true : text === '0' ? false : text;
}

const switchFormat: EnvironmentFormat<boolean> = {
  coerce: readSwitch,
  validate(value) {
    if (typeof value !== 'boolean') throw new Error(`${quoted(value)} is not 1 (on) or 0 (off)`);
  },
  describe: () => '`1` (on) or `0`',
  show: (value) => (value ? '1' : '0'),
};

const durationFormat: EnvironmentFormat<number> = {
  coerce(text) {
    const parsed = parsePositiveDurationMs(text);
    return parsed.ok ? parsed.value : text;
  },
  validate(value) {
    if (typeof value === 'number' && Number.isInteger(value) && value >= 1 && value <= maxTimerDelayMs) return;
    const parsed = typeof value === 'string' ? parsePositiveDurationMs(value) : null;
    throw new Error(parsed !== null && !parsed.ok ? parsed.problem : `${quoted(value)} is not a duration from 1ms to ${maxTimerDelayMs}ms`);
  },
  describe: () => 'Go duration (`500ms`, `1m30s`)',
  show: (value) => (value % 1000 === 0 ? `${value / 1000}s` : `${value}ms`),
};

/** Decimal digits (white space around them allowed), from `minimum` to `maximum`. */
const wholeNumberFormat: EnvironmentFormat<number> = {
  // Digits past Number's exact integers stay text: the message then quotes them as given.
  coerce: (text) => (/^\s*\d+\s*$/.test(text) && Number.isSafeInteger(Number(text)) ? Number(text) : text),
  validate(value, declaration) {
    const { minimum = 0, maximum = Number.MAX_SAFE_INTEGER, unit } = declaration;
    if (typeof value === 'number' && Number.isInteger(value) && value >= minimum && value <= maximum) return;
    throw new Error(`${quoted(value)} is not a whole number${unit === undefined ? '' : ` of ${unit}`} from ${minimum} to ${maximum}`);
  },
  describe: ({ minimum = 0, maximum = Number.MAX_SAFE_INTEGER, unit }) => `whole number${unit === undefined ? '' : ` of ${unit}`}, ${minimum} to ${maximum}`,
  show: (value) => String(value),
};

/** The origin of an https endpoint: the fleet endpoints take mutual TLS only. */
const httpsEndpointFormat: EnvironmentFormat<string> = {
  coerce: (text) => text,
  validate(value) {
    const problem = typeof value === 'string' ? httpsEndpointProblem(value) : `${quoted(value)} is not text`;
    if (problem !== null) throw new Error(problem);
  },
  describe: () => '`https://host:port`',
  show: (value) => value,
};

function validateText(value: unknown): asserts value is string {
  if (typeof value !== 'string') throw new Error(`${quoted(value)} is not text`);
}

/** A file or folder name, as given (relative to the working directory). */
const pathFormat: EnvironmentFormat<string> = { coerce: (text) => text, validate: validateText, describe: () => 'path', show: (value) => value };

const textFormat: EnvironmentFormat<string> = { coerce: (text) => text, validate: validateText, describe: () => 'text', show: (value) => value };

const formats: { readonly [N in FormatName]: EnvironmentFormat<FormatValues[N]> } = {
  'fabric-ops-switch': switchFormat,
  'fabric-ops-duration': durationFormat,
  'fabric-ops-whole-number': wholeNumberFormat,
  'fabric-ops-https-endpoint': httpsEndpointFormat,
  'fabric-ops-path': pathFormat,
  'fabric-ops-text': textFormat,
};

/** Why `text` is not the `https://host:port` of the fleet endpoint, or null: for FABRIC_OPS_FLEET_URL, and for `--url` (src/fleet/cli.ts). */
export function httpsEndpointProblem(text: string): string | null {
  if (text === '' || /^https:\/\/[^/]+\/?$/.test(text)) return null;
  return `${quoteValue(text)} must be https://host:port (the fleet endpoints need mutual TLS)`;
}

let convictWithFormats: typeof ConvictModule | null = null;

/**
 * convict, with this schema's formats added once. Required on first use rather than imported:
 * src/inspector-guard.ts, which takes its variable's declaration from here, is also part of
 * dist/cli.js, the entry that checks the Node.js version before the command's packages are
 * loaded, and bundles nothing of them (scripts/bundle.js).
 */
function loadConvict(): typeof ConvictModule {
  if (convictWithFormats === null) {
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- on first use: see above
    const convict = require('convict') as typeof ConvictModule;
    convict.addFormats(
      Object.fromEntries(
        Object.entries(formats).map(([name, format]: [string, EnvironmentFormat<unknown>]) => [
          name,
          {
            coerce: (value: unknown) => (typeof value === 'string' ? format.coerce(value) : value),
            validate: (value: unknown, declaration: ConvictModule.SchemaObj) => format.validate(value, declaration as unknown as EnvironmentDeclaration),
          },
        ]),
      ),
    );
    convictWithFormats = convict;
  }
  return convictWithFormats;
}

/**
 * The variables `keys` from `env`, through convict (its defaults, formats, environment and
 * validation). A variable set but empty counts as unset, as Fabric's own variables do (viper).
 * Only the variables asked for are read: a module is not stopped by another's bad variable.
 * Throws ConfigError with one problem per bad variable, each naming it and what it takes.
 */
export function readEnvironment<K extends EnvironmentKey>(env: NodeJS.ProcessEnv, keys: readonly K[]): Pick<EnvironmentValues, K> {
  const convict = loadConvict();
  const schema: Record<string, EnvironmentDeclaration> = {};
  // Only the variables asked for, set and not empty (convict takes `given` even when it is empty:
  // it reads process.env only when given no `env` at all).
  const given: Record<string, string> = {};
  for (const key of keys) {
    const declaration: EnvironmentDeclaration = environmentSchema[key];
    schema[key] = declaration;
    const text = env[declaration.env];
    if (text !== undefined && text !== '') given[declaration.env] = text;
  }
  const config = convict<Record<string, unknown>>(schema, { env: given, args: [] });
  try {
    config.validate({ allowed: 'strict' });
  } catch (error) {
    // convict's message joins the problems, each followed by the whole value: each variable gets
    // its own line instead, with the value bounded, from the same formats.
    throw new ConfigError(problemsOf(config.getProperties(), keys, error));
  }
  return config.getProperties() as Pick<EnvironmentValues, K>;
}

function problemsOf(values: Record<string, unknown>, keys: readonly EnvironmentKey[], convictError: unknown): string[] {
  const problems: string[] = [];
  for (const key of keys) {
    const declaration: EnvironmentDeclaration = environmentSchema[key];
    const format: EnvironmentFormat<unknown> = formats[declaration.format];
    try {
      format.validate(values[key], declaration);
    } catch (error) {
      problems.push(`${declaration.env}: ${messageOf(error)}`);
    }
  }
  return problems.length > 0 ? problems : [`internal error: environment variables read do not match their convict schema: ${messageOf(convictError)}`];
}

/**
 * Whether FABRIC_OPS_ALLOW_INSPECTOR allows an open inspector, without convict: the inspector guard
 * also runs in dist/cli.js (see loadConvict), so it reads its one variable with its format's own
 * coercion. Only `1` allows; any other value does not (and the refusal says to set 1), as convict
 * would refuse it.
 */
export function inspectorAllowed(env: NodeJS.ProcessEnv): boolean {
  return readSwitch(env[allowInspector.env] ?? '') === true;
}

/** FABRIC_OPS_ALLOW_INSPECTOR, for src/inspector-guard.ts (see inspectorAllowed). */
export const allowInspectorVariable = allowInspector.env;

export interface EnvironmentVariableReference {
  variable: string;
  readBy: string;
  /** The format, in the reference's words. */
  format: string;
  /** As an operator would write it; '' for none. */
  defaultValue: string;
  doc: string;
}

/** Every variable, in declaration order, as the command reference shows it (scripts/gendocs.ts). */
export function environmentReference(): EnvironmentVariableReference[] {
  return Object.values(environmentSchema).map((declaration: EnvironmentDeclaration) => {
    const format = formats[declaration.format] as EnvironmentFormat<unknown>;
    return {
      variable: declaration.env,
      readBy: declaration.readBy,
      format: format.describe(declaration),
      defaultValue: format.show(declaration.default),
      doc: declaration.doc,
    };
  });
}
