export { detectDialect, loadConfig, type LoadConfigOptions, type LoadedConfig } from './load';
export { defaultCriEndpoint, defaultDockerEndpoint, dialectDefinition, normaliseConfig, type NormaliseInput } from './normalise';
export { settingsReference, type SettingReference } from './reference';
export { peerSchema, type PeerSettings } from './peer-schema';
export { ordererSchema, type OrdererSettings } from './orderer-schema';
export * from './types';
export * from './schema';
