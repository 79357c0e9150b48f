import type { Dialect, NormalisedConfig } from './types';

/** What the normaliser and the loader need to know about one configuration dialect. */
export interface DialectDefinition {
  dialect: Dialect;
  /** The file Fabric looks for in $FABRIC_CFG_PATH. */
  fileName: 'core.yaml' | 'orderer.yaml';
  /** Environment variables are `<envPrefix>_<KEY PATH UPPER-CASED, . AS _>`. */
  envPrefix: 'CORE' | 'ORDERER';
  /** The convict schema of the sections read (built from stringSetting, booleanSetting, listSetting). */
  schema: object;
  /** Top-level keys that only this dialect's files have (dialect detection). */
  topLevelKeys: readonly string[];
  /** The dialect's key for each normalised setting. */
  keys: NormalisedConfig['keys'];
  /** Keys naming CA certificate files the node uses for organizations (string or list leaves). */
  organizationCAFileKeys: readonly string[];
  /** Key of the local MSP directory (its cacerts/ and tlscacerts/ are organization CAs). */
  mspDirKey: string;
  /** Fabric's Docker settings (peer only): `vm.endpoint` registers the Docker health checker. */
  docker: {
    endpointKey: string;
    tlsEnabledKey: string;
    tlsCaFileKey: string;
    tlsCertFileKey: string;
    tlsKeyFileKey: string;
  } | null;
}
