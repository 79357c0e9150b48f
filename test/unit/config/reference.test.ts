import { settingsReference } from '../../../src/config/reference';

describe('settingsReference', () => {
  it('lists every peer key with its Fabric environment variable and default', () => {
    const peer = new Map(settingsReference('peer').map((setting) => [setting.key, setting]));
    expect([...peer.keys()]).toEqual([
      'operations.listenAddress',
      'operations.maxConnections',
      'operations.tls.enabled',
      'operations.tls.cert.file',
      'operations.tls.key.file',
      'operations.tls.clientAuthRequired',
      'operations.tls.clientRootCAs.files',
      'operations.tls.requireDedicatedCA',
      'operations.healthCheck.timeout',
      'operations.healthCheck.containerRuntime.type',
      'operations.healthCheck.containerRuntime.endpoint',
      'operations.healthCheck.containerRuntime.requiredConditions',
      'operations.kubernetes.events.enabled',
      'operations.kubernetes.events.certificateExpiryWarningDays',
      'operations.kubernetes.logspecConfigMap.name',
      'operations.kubernetes.logspecConfigMap.key',
      'operations.companion.enabled',
      'operations.companion.listenAddress',
      'operations.companion.metricsProvider',
      'operations.companion.tls.enabled',
      'operations.companion.tls.cert.file',
      'operations.companion.tls.key.file',
      'operations.companion.tls.clientAuthRequired',
      'operations.companion.tls.clientRootCAs.files',
      'operations.companion.node.address',
      'operations.companion.node.serverName',
      'operations.companion.node.rootCAs.files',
      'operations.companion.node.clientCert.file',
      'operations.companion.node.clientKey.file',
      'operations.companion.certificates.warningDays',
      'operations.companion.certificates.planningDays',
      'operations.companion.certificates.recheckInterval',
      'operations.companion.disk.minFreePercent',
      'operations.companion.disk.minFreeBytes',
      'operations.companion.disk.recheckInterval',
      'operations.companion.logspec.writable',
      'operations.companion.logspec.stateDirectory',
      'operations.companion.logspec.pollInterval',
      'metrics.provider',
      'metrics.statsd.network',
      'metrics.statsd.address',
      'metrics.statsd.writeInterval',
      'metrics.statsd.prefix',
      'vm.endpoint',
      'vm.docker.tls.enabled',
      'vm.docker.tls.ca.file',
      'vm.docker.tls.cert.file',
      'vm.docker.tls.key.file',
      'peer.tls.enabled',
      'peer.tls.clientAuthRequired',
      'peer.tls.cert.file',
      'peer.tls.rootcert.file',
      'peer.tls.clientCert.file',
      'peer.tls.clientRootCAs.files',
      'peer.mspConfigPath',
      'peer.fileSystemPath',
      'ledger.snapshots.rootDir',
    ]);
    expect(peer.get('operations.companion.enabled')?.environmentVariable).toBe('CORE_OPERATIONS_COMPANION_ENABLED');
    expect(peer.get('operations.companion.listenAddress')?.defaultValue).toBe('127.0.0.1:9449');
    expect(peer.get('peer.tls.cert.file')?.environmentVariable).toBe('CORE_PEER_TLS_CERT_FILE');
    expect(peer.get('operations.tls.clientRootCAs.files')).toMatchObject({
      environmentVariable: 'CORE_OPERATIONS_TLS_CLIENTROOTCAS_FILES',
      kind: 'list',
      defaultValue: [],
    });
    expect(peer.get('operations.healthCheck.timeout')).toMatchObject({
      environmentVariable: 'CORE_OPERATIONS_HEALTHCHECK_TIMEOUT',
      kind: 'duration',
      defaultValue: '2s',
    });
    expect(peer.get('peer.mspConfigPath')?.environmentVariable).toBe('CORE_PEER_MSPCONFIGPATH');
    expect(peer.get('vm.endpoint')?.environmentVariable).toBe('CORE_VM_ENDPOINT');
    expect(peer.get('metrics.statsd.writeInterval')?.defaultValue).toBe('10s');
  });

  it('lists every orderer key with its Fabric environment variable and default', () => {
    const orderer = new Map(settingsReference('orderer').map((setting) => [setting.key, setting]));
    expect(orderer.size).toBe(57);
    expect(orderer.get('Operations.Companion.Enabled')?.environmentVariable).toBe('ORDERER_OPERATIONS_COMPANION_ENABLED');
    expect(orderer.get('General.Cluster.RootCAs')).toMatchObject({ environmentVariable: 'ORDERER_GENERAL_CLUSTER_ROOTCAS', kind: 'list' });
    expect(orderer.get('FileLedger.Location')?.defaultValue).toBe('/var/hyperledger/production/orderer');
    expect(orderer.get('Consensus.WALDir')).toMatchObject({
      environmentVariable: 'ORDERER_CONSENSUS_WALDIR',
      defaultValue: '/var/hyperledger/production/orderer/etcdraft/wal',
    });
    expect(orderer.get('Operations.Companion.Disk.MinFreeBytes')).toMatchObject({
      environmentVariable: 'ORDERER_OPERATIONS_COMPANION_DISK_MINFREEBYTES',
      defaultValue: '1GiB',
    });
    expect(orderer.get('Operations.Kubernetes.LogspecConfigMap.Name')).toMatchObject({
      environmentVariable: 'ORDERER_OPERATIONS_KUBERNETES_LOGSPECCONFIGMAP_NAME',
      defaultValue: '',
    });
    expect(orderer.get('Operations.TLS.Certificate')?.environmentVariable).toBe('ORDERER_OPERATIONS_TLS_CERTIFICATE');
    expect(orderer.get('Metrics.Statsd.Address')).toMatchObject({ environmentVariable: 'ORDERER_METRICS_STATSD_ADDRESS', defaultValue: '127.0.0.1:8125' });
    expect(orderer.get('Metrics.Statsd.WriteInterval')?.defaultValue).toBe('30s');
    expect(orderer.get('General.LocalMSPDir')?.environmentVariable).toBe('ORDERER_GENERAL_LOCALMSPDIR');
    expect(orderer.get('Operations.HealthCheck.ContainerRuntime.RequiredConditions')?.defaultValue).toEqual(['RuntimeReady', 'NetworkReady']);
  });
});
