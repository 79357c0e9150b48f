import type { Dialect, NormalisedConfig } from './types';

/**
 * Companion mode's key names, per dialect (the keys themselves, with their defaults and
 * environment variables, are declared once in the dialects' convict schemas). Pure data.
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

const peerKeys: CompanionKeys = {
  enabled: 'operations.companion.enabled',
  server: {
    listenAddress: 'operations.companion.listenAddress',
    metricsProvider: 'operations.companion.metricsProvider',
    tlsEnabled: 'operations.companion.tls.enabled',
    tlsCertFile: 'operations.companion.tls.cert.file',
    tlsKeyFile: 'operations.companion.tls.key.file',
    tlsClientAuthRequired: 'operations.companion.tls.clientAuthRequired',
    tlsClientRootCAs: 'operations.companion.tls.clientRootCAs.files',
  },
  nodeListenAddress: 'operations.listenAddress',
  nodeTlsEnabled: 'operations.tls.enabled',
  nodeTlsClientAuthRequired: 'operations.tls.clientAuthRequired',
  nodeAddress: 'operations.companion.node.address',
  nodeServerName: 'operations.companion.node.serverName',
  nodeRootCAs: 'operations.companion.node.rootCAs.files',
  nodeClientCertFile: 'operations.companion.node.clientCert.file',
  nodeClientKeyFile: 'operations.companion.node.clientKey.file',
  warningDays: 'operations.companion.certificates.warningDays',
  planningDays: 'operations.companion.certificates.planningDays',
  recheckInterval: 'operations.companion.certificates.recheckInterval',
  diskMinFreePercent: 'operations.companion.disk.minFreePercent',
  diskMinFreeBytes: 'operations.companion.disk.minFreeBytes',
  diskRecheckInterval: 'operations.companion.disk.recheckInterval',
  logspecWritable: 'operations.companion.logspec.writable',
  logspecStateDirectory: 'operations.companion.logspec.stateDirectory',
  logspecPollInterval: 'operations.companion.logspec.pollInterval',
  certificates: [
    { key: 'peer.mspConfigPath', kind: 'msp', form: 'msp' },
    { key: 'peer.tls.cert.file', kind: 'tls_server', form: 'file', onlyWhen: ['peer.tls.enabled'] },
    { key: 'peer.tls.rootcert.file', kind: 'tls_root_ca', form: 'file', onlyWhen: ['peer.tls.enabled'] },
    { key: 'peer.tls.clientCert.file', kind: 'tls_client', form: 'file', onlyWhen: ['peer.tls.enabled', 'peer.tls.clientAuthRequired'] },
    { key: 'peer.tls.clientRootCAs.files', kind: 'tls_client_root_ca', form: 'files', onlyWhen: ['peer.tls.enabled', 'peer.tls.clientAuthRequired'] },
    { key: 'operations.tls.cert.file', kind: 'operations_server', form: 'file', onlyWhen: ['operations.tls.enabled'] },
    { key: 'operations.tls.clientRootCAs.files', kind: 'operations_client_root_ca', form: 'files', onlyWhen: ['operations.tls.enabled'] },
  ],
  dataFolders: ['peer.fileSystemPath', 'ledger.snapshots.rootDir'],
};

const ordererKeys: CompanionKeys = {
  enabled: 'Operations.Companion.Enabled',
  server: {
    listenAddress: 'Operations.Companion.ListenAddress',
    metricsProvider: 'Operations.Companion.MetricsProvider',
    tlsEnabled: 'Operations.Companion.TLS.Enabled',
    tlsCertFile: 'Operations.Companion.TLS.Certificate',
    tlsKeyFile: 'Operations.Companion.TLS.PrivateKey',
    tlsClientAuthRequired: 'Operations.Companion.TLS.ClientAuthRequired',
    tlsClientRootCAs: 'Operations.Companion.TLS.ClientRootCAs',
  },
  nodeListenAddress: 'Operations.ListenAddress',
  nodeTlsEnabled: 'Operations.TLS.Enabled',
  nodeTlsClientAuthRequired: 'Operations.TLS.ClientAuthRequired',
  nodeAddress: 'Operations.Companion.Node.Address',
  nodeServerName: 'Operations.Companion.Node.ServerName',
  nodeRootCAs: 'Operations.Companion.Node.RootCAs',
  nodeClientCertFile: 'Operations.Companion.Node.ClientCertificate',
  nodeClientKeyFile: 'Operations.Companion.Node.ClientPrivateKey',
  warningDays: 'Operations.Companion.Certificates.WarningDays',
  planningDays: 'Operations.Companion.Certificates.PlanningDays',
  recheckInterval: 'Operations.Companion.Certificates.RecheckInterval',
  diskMinFreePercent: 'Operations.Companion.Disk.MinFreePercent',
  diskMinFreeBytes: 'Operations.Companion.Disk.MinFreeBytes',
  diskRecheckInterval: 'Operations.Companion.Disk.RecheckInterval',
  logspecWritable: 'Operations.Companion.LogSpec.Writable',
  logspecStateDirectory: 'Operations.Companion.LogSpec.StateDirectory',
  logspecPollInterval: 'Operations.Companion.LogSpec.PollInterval',
  certificates: [
    { key: 'General.LocalMSPDir', kind: 'msp', form: 'msp' },
    { key: 'General.TLS.Certificate', kind: 'tls_server', form: 'file', onlyWhen: ['General.TLS.Enabled'] },
    { key: 'General.TLS.RootCAs', kind: 'tls_root_ca', form: 'files', onlyWhen: ['General.TLS.Enabled'] },
    { key: 'General.TLS.ClientRootCAs', kind: 'tls_client_root_ca', form: 'files', onlyWhen: ['General.TLS.Enabled', 'General.TLS.ClientAuthRequired'] },
    { key: 'General.Cluster.ClientCertificate', kind: 'cluster_client', form: 'file' },
    { key: 'General.Cluster.RootCAs', kind: 'cluster_root_ca', form: 'files' },
    { key: 'Admin.TLS.Certificate', kind: 'admin_server', form: 'file', onlyWhen: ['Admin.TLS.Enabled'] },
    { key: 'Admin.TLS.ClientRootCAs', kind: 'admin_client_root_ca', form: 'files', onlyWhen: ['Admin.TLS.Enabled'] },
    { key: 'Operations.TLS.Certificate', kind: 'operations_server', form: 'file', onlyWhen: ['Operations.TLS.Enabled'] },
    { key: 'Operations.TLS.ClientRootCAs', kind: 'operations_client_root_ca', form: 'files', onlyWhen: ['Operations.TLS.Enabled'] },
  ],
  dataFolders: ['FileLedger.Location', 'Consensus.WALDir', 'Consensus.SnapDir'],
};

export function companionKeysFor(dialect: Dialect): CompanionKeys {
  return dialect === 'peer' ? peerKeys : ordererKeys;
}

/**
 * The node's own keys that only companion mode reads (the peer's TLS certificate, the orderer's
 * cluster and admin TLS, the data folders): a bad value there is the node's business, and no
 * problem for fabric-ops, unless companion mode is on.
 */
export function companionOnlyNodeKeys(dialect: Dialect): string[] {
  const keys = companionKeysFor(dialect);
  const shared = new Set([
    'peer.mspConfigPath',
    'peer.tls.rootcert.file',
    'peer.tls.clientRootCAs.files',
    'General.LocalMSPDir',
    'General.TLS.RootCAs',
    'General.TLS.ClientRootCAs',
  ]);
  const operations = new Set([keys.nodeListenAddress, keys.nodeTlsEnabled, keys.nodeTlsClientAuthRequired]);
  const named = [...keys.certificates.flatMap((source) => [source.key, ...(source.onlyWhen ?? [])]), ...keys.dataFolders];
  return [...new Set(named)].filter((key) => !shared.has(key) && !operations.has(key) && !key.startsWith('operations.') && !key.startsWith('Operations.'));
}
