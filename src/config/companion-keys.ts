import { spelling, type SettingName } from './declarations';
import { dialectDefinition } from './dialect';
import type { Dialect, NormalisedConfig } from './types';

/**
 * Companion mode's key names, per dialect, spelled from the settings declared in ./declarations.
 */

/** Where the node's configuration names certificates; the MSP folder stands for its certificate subfolders. */
export interface CertificateSourceKey {
  key: string;
  kind: string;
  form: 'file' | 'files' | 'msp';
  /** Boolean keys that must all be true for the node to use the file (its TLS switch, its client authentication); absent: always used. */
  onlyWhen?: readonly string[];
}

/** The MSP's certificate folders (Fabric's msp/configbuilder.go), and the kind of what each holds. `keystore/` is not one. */
export const mspCertificateFolders: ReadonlyArray<{ folder: string; kind: string }> = [
  { folder: 'signcerts', kind: 'msp_signcert' },
  { folder: 'cacerts', kind: 'msp_cacert' },
  { folder: 'intermediatecerts', kind: 'msp_intermediatecert' },
  { folder: 'tlscacerts', kind: 'msp_tlscacert' },
  { folder: 'tlsintermediatecerts', kind: 'msp_tlsintermediatecert' },
  { folder: 'admincerts', kind: 'msp_admincert' },
];

export interface CompanionKeys {
  enabled: string;
  /** fabric-ops' own server: these replace the dialect's operations keys (NormalisedConfig.keys) in companion mode. */
  server: Pick<
    NormalisedConfig['keys'],
    'listenAddress' | 'metricsProvider' | 'tlsEnabled' | 'tlsCertFile' | 'tlsKeyFile' | 'tlsClientAuthRequired' | 'tlsClientRootCAs'
  >;
  /** The node's operations endpoint, as the node's own keys name it. */
  nodeListenAddress: string;
  nodeTlsEnabled: string;
  nodeTlsClientAuthRequired: string;
  nodeAddress: string;
  nodeServerName: string;
  nodeRootCAs: string;
  nodeClientCertFile: string;
  nodeClientKeyFile: string;
  warningDays: string;
  planningDays: string;
  recheckInterval: string;
  diskMinFreePercent: string;
  diskMinFreeBytes: string;
  diskRecheckInterval: string;
  logspecWritable: string;
  logspecStateDirectory: string;
  logspecPollInterval: string;
  certificates: readonly CertificateSourceKey[];
  /** The node's data folders, whose volumes' free bytes and inodes are reported (the first of a volume names it). */
  dataFolders: readonly string[];
}

/** Where each node names its certificates, by setting (./declarations). */
interface CertificateSourceSetting {
  setting: SettingName;
  kind: string;
  form: CertificateSourceKey['form'];
  onlyWhen?: readonly SettingName[];
}

const certificateSettings: Readonly<Record<Dialect, readonly CertificateSourceSetting[]>> = {
  peer: [
    { setting: 'mspDir', kind: 'msp', form: 'msp' },
    { setting: 'nodeTlsCertFile', kind: 'tls_server', form: 'file', onlyWhen: ['nodeTlsEnabled'] },
    { setting: 'peerTlsRootCertFile', kind: 'tls_root_ca', form: 'file', onlyWhen: ['nodeTlsEnabled'] },
    { setting: 'peerTlsClientCertFile', kind: 'tls_client', form: 'file', onlyWhen: ['nodeTlsEnabled', 'nodeTlsClientAuthRequired'] },
    { setting: 'nodeTlsClientRootCAs', kind: 'tls_client_root_ca', form: 'files', onlyWhen: ['nodeTlsEnabled', 'nodeTlsClientAuthRequired'] },
    { setting: 'tlsCertFile', kind: 'operations_server', form: 'file', onlyWhen: ['tlsEnabled'] },
    { setting: 'tlsClientRootCAs', kind: 'operations_client_root_ca', form: 'files', onlyWhen: ['tlsEnabled'] },
  ],
  orderer: [
    { setting: 'mspDir', kind: 'msp', form: 'msp' },
    { setting: 'nodeTlsCertFile', kind: 'tls_server', form: 'file', onlyWhen: ['nodeTlsEnabled'] },
    { setting: 'ordererTlsRootCAs', kind: 'tls_root_ca', form: 'files', onlyWhen: ['nodeTlsEnabled'] },
    { setting: 'nodeTlsClientRootCAs', kind: 'tls_client_root_ca', form: 'files', onlyWhen: ['nodeTlsEnabled', 'nodeTlsClientAuthRequired'] },
    { setting: 'clusterClientCertFile', kind: 'cluster_client', form: 'file' },
    { setting: 'clusterRootCAs', kind: 'cluster_root_ca', form: 'files' },
    { setting: 'adminTlsCertFile', kind: 'admin_server', form: 'file', onlyWhen: ['adminTlsEnabled'] },
    { setting: 'adminTlsClientRootCAs', kind: 'admin_client_root_ca', form: 'files', onlyWhen: ['adminTlsEnabled'] },
    { setting: 'tlsCertFile', kind: 'operations_server', form: 'file', onlyWhen: ['tlsEnabled'] },
    { setting: 'tlsClientRootCAs', kind: 'operations_client_root_ca', form: 'files', onlyWhen: ['tlsEnabled'] },
  ],
};

/** The node's data folders, by setting. */
const dataFolderSettings: Readonly<Record<Dialect, readonly SettingName[]>> = {
  peer: ['peerFileSystemPath', 'peerSnapshotsDir'],
  orderer: ['fileLedgerLocation', 'consensusWalDir', 'consensusSnapDir'],
};

function companionKeysOf(dialect: Dialect): CompanionKeys {
  const key = (name: SettingName): string => spelling(dialect, name);
  return {
    enabled: key('companionEnabled'),
    server: {
      listenAddress: key('companionListenAddress'),
      metricsProvider: key('companionMetricsProvider'),
      tlsEnabled: key('companionTlsEnabled'),
      tlsCertFile: key('companionTlsCertFile'),
      tlsKeyFile: key('companionTlsKeyFile'),
      tlsClientAuthRequired: key('companionTlsClientAuthRequired'),
      tlsClientRootCAs: key('companionTlsClientRootCAs'),
    },
    nodeListenAddress: key('listenAddress'),
    nodeTlsEnabled: key('tlsEnabled'),
    nodeTlsClientAuthRequired: key('tlsClientAuthRequired'),
    nodeAddress: key('companionNodeAddress'),
    nodeServerName: key('companionNodeServerName'),
    nodeRootCAs: key('companionNodeRootCAs'),
    nodeClientCertFile: key('companionNodeClientCertFile'),
    nodeClientKeyFile: key('companionNodeClientKeyFile'),
    warningDays: key('companionWarningDays'),
    planningDays: key('companionPlanningDays'),
    recheckInterval: key('companionCertificatesRecheckInterval'),
    diskMinFreePercent: key('companionDiskMinFreePercent'),
    diskMinFreeBytes: key('companionDiskMinFreeBytes'),
    diskRecheckInterval: key('companionDiskRecheckInterval'),
    logspecWritable: key('companionLogspecWritable'),
    logspecStateDirectory: key('companionLogspecStateDirectory'),
    logspecPollInterval: key('companionLogspecPollInterval'),
    certificates: certificateSettings[dialect].map(({ setting, kind, form, onlyWhen }) => ({
      key: key(setting),
      kind,
      form,
      ...(onlyWhen === undefined ? {} : { onlyWhen: onlyWhen.map(key) }),
    })),
    dataFolders: dataFolderSettings[dialect].map(key),
  };
}

const companionKeys: Readonly<Record<Dialect, CompanionKeys>> = { peer: companionKeysOf('peer'), orderer: companionKeysOf('orderer') };

export function companionKeysFor(dialect: Dialect): CompanionKeys {
  return companionKeys[dialect];
}

/**
 * The node's own keys that only companion mode reads (the peer's TLS certificate, the orderer's
 * cluster and admin TLS, the data folders): a bad value there is the node's business, and no
 * problem for fabric-ops, unless companion mode is on.
 */
export function companionOnlyNodeKeys(dialect: Dialect): string[] {
  // Read in every mode: the operations server's own keys, and the organization CAs of the dedicated-CA rule.
  const alwaysRead = new Set<SettingName>([
    'listenAddress',
    'tlsEnabled',
    'tlsClientAuthRequired',
    'tlsCertFile',
    'tlsClientRootCAs',
    'mspDir',
    ...dialectDefinition(dialect).organizationCAFiles,
  ]);
  const named = [...certificateSettings[dialect].flatMap((source) => [source.setting, ...(source.onlyWhen ?? [])]), ...dataFolderSettings[dialect]];
  return [...new Set(named)].filter((name) => !alwaysRead.has(name)).map((name) => spelling(dialect, name));
}
