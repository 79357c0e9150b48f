import * as path from 'node:path';
import { ConfigError } from '../errors';
import { dialectDefinition, type DialectDefinition } from './dialect';
import { resolveSettings, schemaLeaves, type Environment, type SettingValues } from './settings';
import {
  containerRuntimeTypes,
  criConditions,
  type ContainerRuntimeType,
  type Dialect,
  type HostPort,
  type MetricsProviderName,
  type NormalisedConfig,
  type StatsdNetwork,
} from './types';
import { parseEndpoint, quoteValue, timerDelayProblem, type Format, type Parsed } from './values';
import { companionKeysFor, companionOnlyNodeKeys } from './companion-keys';
import { readCompanion } from './companion-settings';

const defaultDockerEndpoint = 'unix:///var/run/docker.sock';
const defaultCriEndpoint = 'unix:///run/containerd/containerd.sock';

export interface NormaliseInput {
  dialect: Dialect;
  /** The parsed YAML document (null/undefined: an empty file, or the embedded defaults). */
  document: unknown;
  env: Environment;
  /** Absolute directory that relative paths resolve against (the config file's directory). */
  configDir: string;
  /** Absolute path of the file the document came from, or null for the embedded defaults. */
  configFile: string | null;
}

function isOneOf<T extends string>(allowed: readonly T[], value: string): value is T {
  return (allowed as readonly string[]).includes(value);
}

const quoted = (value: string): string => quoteValue(value);

/** What each section's reader shares: the values read, and where a problem goes. */
interface Reading {
  readonly definition: DialectDefinition;
  readonly keys: DialectDefinition['keys'];
  readonly values: SettingValues;
  /** Keys whose value could not be read at all (their problem is reported already). */
  readonly unreadable: ReadonlySet<string>;
  /** The key, and the environment variable when the value came from one. */
  readonly label: (key: string) => string;
  readonly report: (key: string, message: string) => void;
  /** The parsed value, or the fallback once the problem is reported. */
  readonly check: <T>(key: string, parsed: Parsed<T>, fallback: T) => T;
  /**
   * The value of the setting spelled `key` through its declared format (./declarations); when
   * its text does not parse, the problem is reported (unless `report` is false) and the
   * default's value is used.
   */
  readonly formatted: <T>(key: string, options?: { report?: boolean }) => T;
  /** A file path resolved against the config file's directory ('' stays ''). */
  readonly absolute: (file: string) => string;
  readonly absoluteList: (files: readonly string[]) => string[];
}

/**
 * Turns one dialect's document plus environment overrides into the NormalisedConfig.
 * Pure: reads no files. Throws ConfigError listing every problem, one line each, each
 * naming the dialect's own key (and the environment variable when the value came from one).
 * The sections are read in the order their problems are listed.
 */
export function normaliseConfig(input: NormaliseInput): NormalisedConfig {
  const definition = dialectDefinition(input.dialect);
  const documentName = input.configFile === null ? definition.fileName : `config file ${input.configFile}`;
  const resolved = resolveSettings(definition.schema, input.document, input.env, definition.envPrefix, documentName);
  const problems: string[] = [];
  const defaults = new Map(schemaLeaves(definition.schema).map((leaf) => [leaf.path, leaf.defaultValue]));
  const label = (key: string): string => {
    const variable = resolved.fromEnvironment.get(key);
    return variable === undefined ? key : `${key} (from ${variable})`;
  };
  const report = (key: string, message: string): void => {
    problems.push(`${label(key)}: ${message}`);
  };
  const absolute = (file: string): string => (file === '' ? '' : path.resolve(input.configDir, file));
  // Companion mode (docs/companion.md): fabric-ops' own server is read from the companion's keys; the node's are the node's.
  const companionKeys = companionKeysFor(input.dialect);
  const companionOn = resolved.values.boolean(companionKeys.enabled);
  const keys = companionOn ? { ...definition.keys, ...companionKeys.server } : definition.keys;
  const reading: Reading = {
    definition,
    keys,
    values: resolved.values,
    unreadable: new Set(resolved.problems.map((problem) => problem.path)),
    label,
    report,
    check: <T>(key: string, parsed: Parsed<T>, fallback: T): T => {
      if (parsed.ok) return parsed.value;
      report(key, parsed.problem);
      return fallback;
    },
    formatted: <T>(key: string, options: { report?: boolean } = {}): T => {
      const format = definition.formatOf(key) as Format<T> | undefined;
      if (format === undefined) throw new Error(`internal error: ${key} declares no format`);
      const parsed = format(resolved.values.string(key));
      if (parsed.ok) return parsed.value;
      if (options.report !== false) report(key, parsed.problem);
      const fallback = format(String(defaults.get(key)));
      if (!fallback.ok) throw new Error(`internal error: the default of ${key} does not parse: ${fallback.problem}`);
      return fallback.value;
    },
    absolute,
    absoluteList: (files) => [...new Set(files.filter((file) => file !== '').map(absolute))],
  };

  const operations = readOperations(reading);
  const metrics = readMetrics(reading);
  // The statsd section is read only when the provider is statsd: otherwise its unreadable values are no problem.
  const statsdSection = keys.statsdNetwork.slice(0, keys.statsdNetwork.lastIndexOf('.'));
  const nodeOnlyKeys = new Set(companionOn ? [] : companionOnlyNodeKeys(input.dialect));
  const readProblems = resolved.problems.filter(
    (problem) =>
      (metrics.provider === 'statsd' || !(problem.path === statsdSection || problem.path.startsWith(`${statsdSection}.`))) && !nodeOnlyKeys.has(problem.path),
  );
  const { health, containerRuntimeEndpointKey } = readHealth(reading, companionOn);
  const organizationCAs = readOrganizationCAs(reading);
  const kubernetes = readKubernetes(reading);
  const companion = companionOn ? readCompanion(input.dialect, reading) : undefined;

  const allProblems = [...readProblems.map((problem) => problem.message), ...problems];
  if (allProblems.length > 0) throw new ConfigError(allProblems);

  const config: NormalisedConfig = {
    dialect: input.dialect,
    configFile: input.configFile,
    operations,
    organizationCAs,
    kubernetes,
    metrics,
    health,
    keys: { ...keys, containerRuntimeEndpoint: containerRuntimeEndpointKey },
    ...(companion === undefined ? {} : { companion }),
  };
  return config;
}

/** The operations server: listen address, connection cap, TLS (whose files are required when it is on). */
function readOperations({ keys, values, unreadable, report, formatted, absolute, absoluteList }: Reading): NormalisedConfig['operations'] {
  const listen = formatted<HostPort>(keys.listenAddress);
  const maxConnections = formatted<number>(keys.maxConnections);
  const tlsEnabled = values.boolean(keys.tlsEnabled);
  const tls = {
    enabled: tlsEnabled,
    certFile: absolute(values.string(keys.tlsCertFile)),
    keyFile: absolute(values.string(keys.tlsKeyFile)),
    clientAuthRequired: values.boolean(keys.tlsClientAuthRequired),
    clientRootCAFiles: absoluteList(values.list(keys.tlsClientRootCAs)),
    requireDedicatedCA: values.boolean(keys.tlsRequireDedicatedCA),
  };
  if (tlsEnabled) {
    const requiredWhenEnabled = `required when ${keys.tlsEnabled} is true`;
    if (tls.certFile === '' && !unreadable.has(keys.tlsCertFile)) report(keys.tlsCertFile, requiredWhenEnabled);
    if (tls.keyFile === '' && !unreadable.has(keys.tlsKeyFile)) report(keys.tlsKeyFile, requiredWhenEnabled);
    if (tls.clientRootCAFiles.length === 0 && !unreadable.has(keys.tlsClientRootCAs)) {
      report(
        keys.tlsClientRootCAs,
        `${requiredWhenEnabled} (client certificates for /logspec and /metrics are verified against these CAs; without one nobody can use them)`,
      );
    }
  }
  return { listen, tls, maxConnections };
}

/** The metrics provider, and the statsd settings (checked only when the provider is statsd). */
function readMetrics({ keys, values, formatted }: Reading): NormalisedConfig['metrics'] {
  const provider = formatted<MetricsProviderName>(keys.metricsProvider);
  // The statsd keys are checked only when the provider is statsd; otherwise a bad value falls back to the default.
  const report = provider === 'statsd';
  const statsd = {
    network: formatted<StatsdNetwork>(keys.statsdNetwork, { report }),
    address: formatted<HostPort>(keys.statsdAddress, { report }),
    writeIntervalMs: formatted<number>(keys.statsdWriteInterval, { report }),
    prefix: ((prefix: string) => (prefix === '' || prefix.endsWith('.') ? prefix : `${prefix}.`))(values.string(keys.statsdPrefix)),
  };
  return { provider, statsd };
}

/** Health: the checkers' timeout and the container runtime (type, endpoint, required conditions, Docker TLS). */
function readHealth(reading: Reading, companionOn: boolean): { health: NormalisedConfig['health']; containerRuntimeEndpointKey: string } {
  const { definition, keys, values, unreadable, label, report, formatted, absolute } = reading;
  const timeoutMs = formatted<number>(keys.healthTimeout);
  const requiredConditions: string[] = [];
  const unknownConditions: string[] = [];
  for (const condition of values.list(keys.containerRuntimeRequiredConditions)) {
    if (!isOneOf(criConditions, condition)) unknownConditions.push(condition);
    else if (!requiredConditions.includes(condition)) requiredConditions.push(condition);
  }
  const [firstUnknown] = unknownConditions;
  if (firstUnknown !== undefined) {
    // One line whatever the length of the list: the first unknown item and how many more.
    const more = unknownConditions.length > 1 ? ` (and ${unknownConditions.length - 1} more)` : '';
    report(keys.containerRuntimeRequiredConditions, `${quoted(firstUnknown)}${more} is not a CRI condition; allowed: ${criConditions.join(', ')}`);
  }
  const runtime = resolveContainerRuntime(definition, values, label, report, companionOn);

  // Fabric's Docker settings (the peer's vm.docker.tls.*; an orderer has none).
  const dockerTls = { enabled: false, caFile: '', certFile: '', keyFile: '' };
  if (definition.has('dockerTlsEnabled')) {
    const key = definition.key;
    dockerTls.enabled = values.boolean(key('dockerTlsEnabled'));
    dockerTls.caFile = absolute(values.string(key('dockerTlsCaFile')));
    dockerTls.certFile = absolute(values.string(key('dockerTlsCertFile')));
    dockerTls.keyFile = absolute(values.string(key('dockerTlsKeyFile')));
    if (dockerTls.enabled) {
      const fileKeys: Array<[string, string]> = [
        [key('dockerTlsCaFile'), dockerTls.caFile],
        [key('dockerTlsCertFile'), dockerTls.certFile],
        [key('dockerTlsKeyFile'), dockerTls.keyFile],
      ];
      for (const [fileKey, file] of fileKeys) {
        if (file === '' && !unreadable.has(fileKey)) report(fileKey, `required when ${key('dockerTlsEnabled')} is true`);
      }
    }
  }
  return {
    health: { timeoutMs, containerRuntime: { type: runtime.type, endpoint: runtime.endpoint, requiredConditions, dockerTls } },
    containerRuntimeEndpointKey: runtime.endpointKey,
  };
}

/** The CAs the node uses for organizations (the dedicated-CA rule): their files, and the MSP's CA folders. */
function readOrganizationCAs({ definition, values, absolute, absoluteList }: Reading): NormalisedConfig['organizationCAs'] {
  const mspDir = absolute(values.string(definition.key('mspDir')));
  return {
    files: absoluteList(definition.organizationCAFiles.flatMap((name) => values.paths(definition.key(name)))),
    dirs: mspDir === '' ? [] : [path.join(mspDir, 'cacerts'), path.join(mspDir, 'tlscacerts')],
  };
}

/** The Kubernetes integration: Events, and the ConfigMap the logging spec may be read from. */
function readKubernetes({ keys, values, report, formatted }: Reading): NormalisedConfig['kubernetes'] {
  const kubernetes = {
    events: {
      enabled: values.boolean(keys.kubernetesEventsEnabled),
      certificateExpiryWarningDays: formatted<number>(keys.kubernetesCertificateExpiryWarningDays),
    },
    logspecConfigMap: {
      name: values.string(keys.kubernetesLogspecConfigMapName),
      key: values.string(keys.kubernetesLogspecConfigMapKey),
    },
  };
  if (kubernetes.logspecConfigMap.name !== '' && !configMapName.test(kubernetes.logspecConfigMap.name)) {
    report(
      keys.kubernetesLogspecConfigMapName,
      `${quoted(kubernetes.logspecConfigMap.name)} is not a ConfigMap name (lower-case letters, digits, '-' and '.', at most 253 characters, starting and ending with a letter or digit)`,
    );
  }
  if (!configMapKey.test(kubernetes.logspecConfigMap.key)) {
    report(
      keys.kubernetesLogspecConfigMapKey,
      `${quoted(kubernetes.logspecConfigMap.key)} is not a ConfigMap key (letters, digits, '-', '_' and '.', at most 253 characters)`,
    );
  }
  return kubernetes;
}

export function configDelayProblems(config: NormalisedConfig, options: { tlsPollIntervalMs?: number } = {}): string[] {
  const problems = [timerDelayProblem('health.timeoutMs', config.health.timeoutMs)];
  if (config.metrics.provider === 'statsd') problems.push(timerDelayProblem('metrics.statsd.writeIntervalMs', config.metrics.statsd.writeIntervalMs));
  if (options.tlsPollIntervalMs !== undefined) problems.push(timerDelayProblem('tlsPollIntervalMs', options.tlsPollIntervalMs));
  return problems.filter((problem): problem is string => problem !== null);
}

const configMapName = /^(?=.{1,253}$)[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const configMapKey = /^[-._a-zA-Z0-9]{1,253}$/;
interface ContainerRuntime {
  type: ContainerRuntimeType;
  endpoint: string;
  /** The key the endpoint came from (vm.endpoint when Fabric's Docker setting is used). */
  endpointKey: string;
}

function resolveContainerRuntime(
  definition: DialectDefinition,
  values: SettingValues,
  label: (key: string) => string,
  report: (key: string, message: string) => void,
  companionOn: boolean,
): ContainerRuntime {
  const keys = definition.keys;
  const typeText = values.string(keys.containerRuntimeType);
  const endpointText = values.string(keys.containerRuntimeEndpoint);
  const vmEndpointKey = definition.has('vmEndpoint') ? definition.key('vmEndpoint') : null;
  const vmEndpoint = vmEndpointKey === null ? '' : values.string(vmEndpointKey);
  const none: ContainerRuntime = { type: 'none', endpoint: '', endpointKey: keys.containerRuntimeEndpoint };

  let type: Exclude<ContainerRuntimeType, 'none'>;
  let endpoint: string;
  let endpointKey = keys.containerRuntimeEndpoint;
  if (typeText === '') {
    if (endpointText !== '') {
      report(keys.containerRuntimeEndpoint, `is set but ${label(keys.containerRuntimeType)} is empty; set it to docker, cri or auto`);
      return none;
    }
    // In companion mode vm.endpoint is the node's chaincode runtime, which the node's own /healthz
    // checks (the companion's `node` checker reports it): no checker of fabric-ops' own on it
    // unless the type is set (docs/companion.md, "What changes meaning in companion mode").
    if (vmEndpointKey === null || vmEndpoint === '' || companionOn) return none;
    type = 'docker';
    endpoint = vmEndpoint;
    endpointKey = vmEndpointKey;
  } else if (!isOneOf(containerRuntimeTypes, typeText)) {
    report(keys.containerRuntimeType, `must be one of ${containerRuntimeTypes.join(', ')} (or empty); got ${quoted(typeText)}`);
    return none;
  } else if (typeText === 'none') {
    return none;
  } else {
    type = typeText;
    endpoint = endpointText;
    if (endpoint === '' && type === 'docker') {
      if (vmEndpointKey !== null && vmEndpoint !== '') {
        endpoint = vmEndpoint;
        endpointKey = vmEndpointKey;
      } else {
        endpoint = defaultDockerEndpoint;
      }
    } else if (endpoint === '' && type === 'cri') {
      endpoint = defaultCriEndpoint;
    } else if (endpoint === '') {
      report(keys.containerRuntimeEndpoint, `required when ${label(keys.containerRuntimeType)} is auto`);
      return none;
    }
  }

  const parsed = parseEndpoint(endpoint);
  if (!parsed.ok) {
    report(endpointKey, parsed.problem);
    return none;
  }
  if (parsed.value.kind === 'tcp' && type !== 'docker') {
    report(endpointKey, `${quoted(endpoint)} is a TCP endpoint; only type docker can use TCP (${label(keys.containerRuntimeType)} is ${type})`);
    return none;
  }
  return { type, endpoint: parsed.value.url, endpointKey };
}
