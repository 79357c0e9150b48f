import { defaultOf, docOf, settings, settingsOf, spelling, type SettingDeclaration, type SettingName } from './declarations';
import { settingLeaf } from './settings';
import type { Dialect, NormalisedConfig } from './types';
import type { Format } from './values';

/** What the normaliser and the loader need to know about one configuration dialect. */
export interface DialectDefinition {
  dialect: Dialect;
  /** The file Fabric looks for in $FABRIC_CFG_PATH. */
  fileName: 'core.yaml' | 'orderer.yaml';
  /** Environment variables are `<envPrefix>_<KEY PATH UPPER-CASED, . AS _>`. */
  envPrefix: 'CORE' | 'ORDERER';
  /** The convict schema of the sections read, built from the declarations (./declarations). */
  schema: object;
  /** Top-level keys that only this dialect's files have (dialect detection). */
  topLevelKeys: readonly string[];
  /** The dialect's key for each normalised setting. */
  keys: NormalisedConfig['keys'];
  /** The dialect's spelling of a setting (an internal error when the dialect has none). */
  key: (name: SettingName) => string;
  /** Whether the dialect has the setting (the peer's Docker keys, say). */
  has: (name: SettingName) => boolean;
  /** The format declared for the setting spelled `key`, if any. */
  formatOf: (key: string) => Format<unknown> | undefined;
  /** Settings naming CA certificate files the node uses for organizations (string or list leaves). */
  organizationCAFiles: readonly SettingName[];
}

/** The settings whose spelling NormalisedConfig.keys carries (for errors found after normalisation). */
const normalisedKeyNames = [
  'listenAddress',
  'maxConnections',
  'tlsEnabled',
  'tlsCertFile',
  'tlsKeyFile',
  'tlsClientRootCAs',
  'tlsClientAuthRequired',
  'tlsRequireDedicatedCA',
  'metricsProvider',
  'statsdNetwork',
  'statsdAddress',
  'statsdWriteInterval',
  'statsdPrefix',
  'healthTimeout',
  'containerRuntimeType',
  'containerRuntimeEndpoint',
  'containerRuntimeRequiredConditions',
  'kubernetesEventsEnabled',
  'kubernetesCertificateExpiryWarningDays',
  'kubernetesLogspecConfigMapName',
  'kubernetesLogspecConfigMapKey',
] as const satisfies ReadonlyArray<keyof NormalisedConfig['keys'] & SettingName>;

/** Compile-time only: every field of NormalisedConfig.keys is in the list above. */
export const normalisedKeysListed: Exclude<keyof NormalisedConfig['keys'], (typeof normalisedKeyNames)[number]> extends never ? true : false = true;

/** The dialect's convict schema: one leaf per declared setting, nested by the dialect's spelling. */
function convictSchema(dialect: Dialect): object {
  const root: Record<string, object> = {};
  for (const name of settingsOf(dialect)) {
    const segments = spelling(dialect, name).split('.');
    let node = root;
    for (const segment of segments.slice(0, -1)) node = (node[segment] ??= {}) as Record<string, object>;
    node[segments[segments.length - 1] ?? ''] = settingLeaf(settings[name].kind, defaultOf(dialect, name), docOf(dialect, name));
  }
  return root;
}

function define(dialect: Dialect, facts: Pick<DialectDefinition, 'fileName' | 'envPrefix' | 'topLevelKeys' | 'organizationCAFiles'>): DialectDefinition {
  const key = (name: SettingName): string => spelling(dialect, name);
  const formats = new Map<string, Format<unknown>>();
  for (const name of settingsOf(dialect)) {
    const declaration: SettingDeclaration = settings[name];
    if (declaration.format !== undefined) formats.set(key(name), declaration.format);
  }
  return {
    dialect,
    ...facts,
    schema: convictSchema(dialect),
    keys: Object.fromEntries(normalisedKeyNames.map((name) => [name, key(name)])) as NormalisedConfig['keys'],
    key,
    has: (name) => settings[name][dialect] !== null,
    formatOf: (spelled) => formats.get(spelled),
  };
}

export const peerDialect = define('peer', {
  fileName: 'core.yaml',
  envPrefix: 'CORE',
  topLevelKeys: ['peer', 'operations', 'metrics', 'vm', 'chaincode', 'ledger'],
  organizationCAFiles: ['peerTlsRootCertFile', 'nodeTlsClientRootCAs'],
});

const ordererDialect = define('orderer', {
  fileName: 'orderer.yaml',
  envPrefix: 'ORDERER',
  topLevelKeys: ['General', 'Operations', 'Metrics', 'FileLedger', 'Consensus', 'Admin', 'ChannelParticipation'],
  organizationCAFiles: ['ordererTlsRootCAs', 'nodeTlsClientRootCAs'],
});

export function dialectDefinition(dialect: Dialect): DialectDefinition {
  return dialect === 'peer' ? peerDialect : ordererDialect;
}
