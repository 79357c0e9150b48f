import * as fs from 'node:fs';
import * as path from 'node:path';
import { ConfigError } from '../errors';
import { dialectDefinition } from './dialect';
import { normaliseConfig } from './normalise';
import { dialects, type Dialect, type NormalisedConfig } from './types';
import { describeFileError } from '../file-errors';
import { emptyEnvironmentVariables } from './settings';
import { unknownKeys, unknownVariables } from './unknown-keys';
import { firstInvalidUtf8 } from './utf8';
import { quoteValue } from './values';
import type * as YamlModule from './yaml';

export interface LoadConfigOptions {
  /** A core.yaml or orderer.yaml; relative to the working directory. */
  configFile?: string;
  /** Forces the dialect; otherwise it comes from the file's top-level keys (or the file name in $FABRIC_CFG_PATH). */
  dialect?: Dialect;
  /** Environment for $FABRIC_CFG_PATH and the CORE_* / ORDERER_* overrides (default: process.env). */
  env?: NodeJS.ProcessEnv;
}

export interface LoadedConfig {
  config: NormalisedConfig;
  /** Human text: "core.yaml at /x/core.yaml (peer dialect)" or "embedded peer defaults". */
  source: string;
  /** Lines to log at warning level once logging is up (a near miss of a known key, ...). */
  warnings: string[];
}

type DialectHint = { kind: 'clear'; dialect: Dialect; keys: string[] } | { kind: 'unclear'; topLevelKeys: string[] };

/** Top-level keys for a message: at most eight, each bounded (the keys are the file's). */
function keyList(keys: readonly string[]): string {
  const shown = keys.slice(0, 8).map((key) => (key.length > 40 ? quoteValue(key, 40) : key));
  return keys.length > shown.length ? `${shown.join(', ')}, ... (${keys.length} keys)` : shown.join(', ');
}

function dialectHint(document: unknown): DialectHint {
  const topLevelKeys = typeof document === 'object' && document !== null && !Array.isArray(document) ? Object.keys(document) : [];
  const matches = dialects.map((dialect) => ({
    dialect,
    keys: topLevelKeys.filter((key) => dialectDefinition(dialect).topLevelKeys.includes(key)),
  }));
  const found = matches.filter((match) => match.keys.length > 0);
  const only = found[0];
  return found.length === 1 && only !== undefined ? { kind: 'clear', dialect: only.dialect, keys: only.keys } : { kind: 'unclear', topLevelKeys };
}

/**
 * The dialect of a parsed document, from its top-level keys: peer, operations, vm, chaincode,
 * ledger (peer) or General, Operations, Metrics, FileLedger, Consensus (orderer).
 */
export function detectDialect(document: unknown, file: string): Dialect {
  const hint = dialectHint(document);
  if (hint.kind === 'clear') return hint.dialect;
  const found = hint.topLevelKeys.length === 0 ? 'no top-level keys' : `top-level keys ${keyList(hint.topLevelKeys)}`;
  throw new ConfigError([
    `${file}: cannot tell whether this is a peer core.yaml or an orderer orderer.yaml (${found}); pass --dialect peer or --dialect orderer`,
  ]);
}

function checkDialectMatches(document: unknown, file: string, dialect: Dialect): void {
  const hint = dialectHint(document);
  if (hint.kind === 'clear' && hint.dialect !== dialect) {
    const theirs = dialectDefinition(hint.dialect).fileName;
    throw new ConfigError([
      `${file}: its top-level keys (${keyList(hint.keys)}) are those of ${hint.dialect === 'orderer' ? 'an' : 'a'} ${hint.dialect} ${theirs}, but the ${dialect} dialect was asked for; pass --dialect ${hint.dialect} or the right file`,
    ]);
  }
}

/** Reads and parses a YAML file as Fabric's reader does; ConfigError naming the path (and the line of a YAML problem). */
function readYamlFile(file: string): unknown {
  let bytes: Buffer;
  let fd: number | undefined;
  try {
    // O_NONBLOCK: opening a FIFO does not wait for a writer; only a regular file is read.
    fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK);
    const stats = fs.fstatSync(fd);
    if (!stats.isFile() && !stats.isDirectory()) throw new ConfigError([`config file ${file}: cannot be read: not a regular file`]);
    bytes = fs.readFileSync(fd);
  } catch (error) {
    if (error instanceof ConfigError) throw error;
    throw new ConfigError([`config file ${file}: cannot be read: ${describeFileError(error)}`]);
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
  // Decoding would turn bad bytes into U+FFFD and read on; Fabric's reader refuses the file.
  const invalid = firstInvalidUtf8(bytes);
  if (invalid !== null) {
    const byte = `0x${(bytes[invalid.offset] ?? 0).toString(16).padStart(2, '0')}`;
    throw new ConfigError([
      `config file ${file}: not valid UTF-8 at byte ${invalid.offset} (line ${invalid.line}, column ${invalid.column}): byte ${byte}; Fabric refuses such a file, and reading it would turn the bytes into U+FFFD`,
    ]);
  }
  const text = bytes.toString('utf8');
  // The YAML parser is loaded only when there is a file: a start from the environment alone skips it.
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded on first use, synchronously (start time)
  const { parseConfigYaml } = require('./yaml') as typeof YamlModule;
  return parseConfigYaml(text, file);
}

/**
 * One warning per environment variable set to the empty string. fabric-ops reads an empty
 * variable as unset on every release (Fabric 2.5 LTS's rule), where Fabric 3.x applies the
 * empty value (`CORE_OPERATIONS_TLS_ENABLED=` serves plain HTTP there): the operator of a mixed
 * fleet is told which value applies instead, and that TLS is never turned off this way.
 */
function emptyVariableWarnings(dialect: Dialect, document: unknown, env: NodeJS.ProcessEnv, file: string | null): string[] {
  const definition = dialectDefinition(dialect);
  const tlsSection = definition.keys.tlsEnabled.slice(0, definition.keys.tlsEnabled.lastIndexOf('.') + 1);
  return emptyEnvironmentVariables(definition.schema, document, env, definition.envPrefix).map((empty) => {
    const applies =
      empty.fileValue !== null && file !== null
        ? `the value of ${empty.path} in ${file} (${quoteValue(empty.fileValue)}) is used`
        : `the default of ${empty.path} (${quoteValue(Array.isArray(empty.defaultValue) ? `[${empty.defaultValue.join(', ')}]` : String(empty.defaultValue))}) is used`;
    const tls = empty.path.startsWith(tlsSection) ? (file === null ? '; TLS stays as configured without it' : '; TLS stays as the file sets it') : '';
    // Measured (docs/compatibility.md, D22): Fabric 3.0's peer applies an empty variable, its orderer ignores it as 2.5 does.
    const fabric = dialect === 'peer' ? "Fabric 3.x's peer would apply the empty value" : "Fabric's orderer (2.5 and 3.0) ignores it too";
    return `${empty.variable} is set but empty: read as unset (Fabric 2.5's rule), so ${applies}${tls}; ${fabric}`;
  });
}

function loadFile(file: string, dialect: Dialect | undefined, env: NodeJS.ProcessEnv): LoadedConfig {
  const document = readYamlFile(file);
  const chosen = dialect ?? detectDialect(document, file);
  checkDialectMatches(document, file, chosen);
  const keys = unknownKeys(dialectDefinition(chosen), document, file);
  let config: NormalisedConfig;
  try {
    config = normaliseConfig({ dialect: chosen, document, env, configDir: path.dirname(file), configFile: file });
  } catch (error) {
    if (error instanceof ConfigError && keys.problems.length > 0) throw new ConfigError([...keys.problems, ...error.problems]);
    throw error;
  }
  if (keys.problems.length > 0) throw new ConfigError(keys.problems);
  return {
    config,
    source: `${path.basename(file)} at ${file} (${chosen} dialect)`,
    warnings: [...keys.warnings, ...emptyVariableWarnings(chosen, document, env, file)],
  };
}

function isFile(file: string): boolean {
  try {
    return fs.statSync(file).isFile();
  } catch {
    return false;
  }
}

function fileInConfigPath(configPath: string, dialect: Dialect | undefined): { file: string; dialect: Dialect } {
  const directory = path.resolve(configPath);
  const present = dialects.filter((candidate) => isFile(path.join(directory, dialectDefinition(candidate).fileName)));
  const at = (candidate: Dialect): string => path.join(directory, dialectDefinition(candidate).fileName);
  if (dialect !== undefined) {
    if (present.includes(dialect)) return { file: at(dialect), dialect };
    throw new ConfigError([`FABRIC_CFG_PATH=${configPath}: no ${dialectDefinition(dialect).fileName} in ${directory} (for the ${dialect} dialect)`]);
  }
  const only = present[0];
  if (present.length === 1 && only !== undefined) return { file: at(only), dialect: only };
  if (present.length === 0) {
    throw new ConfigError([`FABRIC_CFG_PATH=${configPath}: neither core.yaml nor orderer.yaml in ${directory}`]);
  }
  throw new ConfigError([`FABRIC_CFG_PATH=${configPath}: both core.yaml and orderer.yaml are in ${directory}; pass --dialect peer or --dialect orderer`]);
}

/**
 * Finds, reads and normalises the configuration: `configFile` if given, else
 * `$FABRIC_CFG_PATH/core.yaml` or `orderer.yaml`, else the embedded defaults of the dialect
 * (peer unless told). Environment overrides apply in every case. Throws ConfigError.
 */
export function loadConfig(options: LoadConfigOptions): LoadedConfig {
  const env = options.env ?? process.env;
  const variableProblems = unknownVariables(dialectDefinition(options.dialect ?? 'peer'), env).concat(
    options.dialect === undefined ? unknownVariables(dialectDefinition('orderer'), env) : [],
  );
  if (variableProblems.length > 0) throw new ConfigError(variableProblems);
  if (options.configFile !== undefined && options.configFile !== '') {
    return loadFile(path.resolve(options.configFile), options.dialect, env);
  }
  const configPath = env.FABRIC_CFG_PATH;
  if (configPath !== undefined && configPath !== '') {
    const found = fileInConfigPath(configPath, options.dialect);
    return loadFile(found.file, found.dialect, env);
  }
  const dialect = options.dialect ?? 'peer';
  const config = normaliseConfig({ dialect, document: null, env, configDir: process.cwd(), configFile: null });
  return { config, source: `embedded ${dialect} defaults`, warnings: emptyVariableWarnings(dialect, null, env, null) };
}
