import * as fs from 'node:fs';
import * as path from 'node:path';
import { loadConfig } from '../../../src/config/load';
import { makeTempDir, removeTempDirs, sampleConfigDir } from '../../unit/config/helpers';

afterAll(removeTempDirs);

describe("Fabric's sample configuration files load unchanged", () => {
  it('core.yaml gives the peer defaults, with the docker checker registered by vm.endpoint', () => {
    const file = path.join(sampleConfigDir, 'core.yaml');
    const { config, source } = loadConfig({ configFile: file, env: {} });
    expect(source).toBe(`core.yaml at ${file} (peer dialect)`);
    expect(config).toEqual({
      dialect: 'peer',
      configFile: file,
      operations: {
        listen: { host: '127.0.0.1', port: 9443 },
        maxConnections: 1024,
        tls: { enabled: false, certFile: '', keyFile: '', clientAuthRequired: false, clientRootCAFiles: [], requireDedicatedCA: false },
      },
      kubernetes: { events: { enabled: false, certificateExpiryWarningDays: 30 }, logspecConfigMap: { name: '', key: 'logspec' } },
      organizationCAs: {
        // peer.tls.rootcert.file and peer.tls.clientRootCAs.files both name tls/ca.crt
        files: [path.join(sampleConfigDir, 'tls/ca.crt')],
        dirs: [path.join(sampleConfigDir, 'msp/cacerts'), path.join(sampleConfigDir, 'msp/tlscacerts')],
      },
      metrics: {
        provider: 'disabled',
        statsd: { network: 'udp', address: { host: '127.0.0.1', port: 8125 }, writeIntervalMs: 10000, prefix: '' },
      },
      health: {
        timeoutMs: 2000,
        containerRuntime: {
          type: 'docker',
          endpoint: 'unix:///var/run/docker.sock',
          requiredConditions: ['RuntimeReady', 'NetworkReady'],
          dockerTls: {
            enabled: false,
            caFile: path.join(sampleConfigDir, 'docker/ca.crt'),
            certFile: path.join(sampleConfigDir, 'docker/tls.crt'),
            keyFile: path.join(sampleConfigDir, 'docker/tls.key'),
          },
        },
      },
      keys: {
        listenAddress: 'operations.listenAddress',
        maxConnections: 'operations.maxConnections',
        tlsEnabled: 'operations.tls.enabled',
        tlsCertFile: 'operations.tls.cert.file',
        tlsKeyFile: 'operations.tls.key.file',
        tlsClientRootCAs: 'operations.tls.clientRootCAs.files',
        tlsClientAuthRequired: 'operations.tls.clientAuthRequired',
        tlsRequireDedicatedCA: 'operations.tls.requireDedicatedCA',
        metricsProvider: 'metrics.provider',
        statsdNetwork: 'metrics.statsd.network',
        statsdAddress: 'metrics.statsd.address',
        statsdWriteInterval: 'metrics.statsd.writeInterval',
        statsdPrefix: 'metrics.statsd.prefix',
        healthTimeout: 'operations.healthCheck.timeout',
        containerRuntimeType: 'operations.healthCheck.containerRuntime.type',
        // the endpoint in use came from Fabric's own key
        containerRuntimeEndpoint: 'vm.endpoint',
        containerRuntimeRequiredConditions: 'operations.healthCheck.containerRuntime.requiredConditions',
        kubernetesEventsEnabled: 'operations.kubernetes.events.enabled',
        kubernetesCertificateExpiryWarningDays: 'operations.kubernetes.events.certificateExpiryWarningDays',
        kubernetesLogspecConfigMapName: 'operations.kubernetes.logspecConfigMap.name',
        kubernetesLogspecConfigMapKey: 'operations.kubernetes.logspecConfigMap.key',
      },
    });
  });

  it('orderer.yaml gives the orderer defaults, with no health checker', () => {
    const file = path.join(sampleConfigDir, 'orderer.yaml');
    const { config, source } = loadConfig({ configFile: file, env: {} });
    expect(source).toBe(`orderer.yaml at ${file} (orderer dialect)`);
    expect(config).toEqual({
      dialect: 'orderer',
      configFile: file,
      operations: {
        listen: { host: '127.0.0.1', port: 8443 },
        maxConnections: 1024,
        tls: { enabled: false, certFile: '', keyFile: '', clientAuthRequired: false, clientRootCAFiles: [], requireDedicatedCA: false },
      },
      kubernetes: { events: { enabled: false, certificateExpiryWarningDays: 30 }, logspecConfigMap: { name: '', key: 'logspec' } },
      organizationCAs: {
        // General.TLS.RootCAs; General.TLS.ClientRootCAs is empty in the sample
        files: [path.join(sampleConfigDir, 'tls/ca.crt')],
        dirs: [path.join(sampleConfigDir, 'msp/cacerts'), path.join(sampleConfigDir, 'msp/tlscacerts')],
      },
      metrics: {
        provider: 'disabled',
        statsd: { network: 'udp', address: { host: '127.0.0.1', port: 8125 }, writeIntervalMs: 30000, prefix: '' },
      },
      health: {
        timeoutMs: 2000,
        containerRuntime: {
          type: 'none',
          endpoint: '',
          requiredConditions: ['RuntimeReady', 'NetworkReady'],
          dockerTls: { enabled: false, caFile: '', certFile: '', keyFile: '' },
        },
      },
      keys: {
        listenAddress: 'Operations.ListenAddress',
        maxConnections: 'Operations.MaxConnections',
        tlsEnabled: 'Operations.TLS.Enabled',
        tlsCertFile: 'Operations.TLS.Certificate',
        tlsKeyFile: 'Operations.TLS.PrivateKey',
        tlsClientRootCAs: 'Operations.TLS.ClientRootCAs',
        tlsClientAuthRequired: 'Operations.TLS.ClientAuthRequired',
        tlsRequireDedicatedCA: 'Operations.TLS.RequireDedicatedCA',
        metricsProvider: 'Metrics.Provider',
        statsdNetwork: 'Metrics.Statsd.Network',
        statsdAddress: 'Metrics.Statsd.Address',
        statsdWriteInterval: 'Metrics.Statsd.WriteInterval',
        statsdPrefix: 'Metrics.Statsd.Prefix',
        healthTimeout: 'Operations.HealthCheck.Timeout',
        containerRuntimeType: 'Operations.HealthCheck.ContainerRuntime.Type',
        containerRuntimeEndpoint: 'Operations.HealthCheck.ContainerRuntime.Endpoint',
        containerRuntimeRequiredConditions: 'Operations.HealthCheck.ContainerRuntime.RequiredConditions',
        kubernetesEventsEnabled: 'Operations.Kubernetes.Events.Enabled',
        kubernetesCertificateExpiryWarningDays: 'Operations.Kubernetes.Events.CertificateExpiryWarningDays',
        kubernetesLogspecConfigMapName: 'Operations.Kubernetes.LogspecConfigMap.Name',
        kubernetesLogspecConfigMapKey: 'Operations.Kubernetes.LogspecConfigMap.Key',
      },
    });
  });

  it('both are found through FABRIC_CFG_PATH, by file name, with --dialect choosing between them', () => {
    const peer = loadConfig({ env: { FABRIC_CFG_PATH: sampleConfigDir }, dialect: 'peer' });
    const orderer = loadConfig({ env: { FABRIC_CFG_PATH: sampleConfigDir }, dialect: 'orderer' });
    expect(peer.config.configFile).toBe(path.join(sampleConfigDir, 'core.yaml'));
    expect(peer.config.operations.listen.port).toBe(9443);
    expect(orderer.config.configFile).toBe(path.join(sampleConfigDir, 'orderer.yaml'));
    expect(orderer.config.operations.listen.port).toBe(8443);
  });

  it('a copy elsewhere resolves its relative paths against its own directory', () => {
    const dir = makeTempDir();
    fs.copyFileSync(path.join(sampleConfigDir, 'core.yaml'), path.join(dir, 'core.yaml'));
    const { config } = loadConfig({ configFile: path.join(dir, 'core.yaml'), env: {} });
    expect(config.organizationCAs.files).toEqual([path.join(dir, 'tls/ca.crt')]);
    expect(config.health.containerRuntime.dockerTls.caFile).toBe(path.join(dir, 'docker/ca.crt'));
  });

  it('the sample core.yaml with Fabric-style environment overrides turns TLS and statsd on', () => {
    const file = path.join(sampleConfigDir, 'core.yaml');
    const { config } = loadConfig({
      configFile: file,
      env: {
        CORE_OPERATIONS_LISTENADDRESS: '0.0.0.0:9443',
        CORE_OPERATIONS_TLS_ENABLED: 'true',
        CORE_OPERATIONS_TLS_CERT_FILE: '/certs/ops/tls.crt',
        CORE_OPERATIONS_TLS_KEY_FILE: '/certs/ops/tls.key',
        CORE_OPERATIONS_TLS_CLIENTROOTCAS_FILES: '/certs/ops/client-ca.crt',
        CORE_METRICS_PROVIDER: 'statsd',
        CORE_METRICS_STATSD_ADDRESS: 'statsd.monitoring:8125',
        CORE_METRICS_STATSD_PREFIX: 'peer0',
        CORE_VM_ENDPOINT: 'tcp://127.0.0.1:2375',
      },
    });
    expect(config.operations.listen).toEqual({ host: '0.0.0.0', port: 9443 });
    expect(config.operations.tls).toMatchObject({
      enabled: true,
      certFile: '/certs/ops/tls.crt',
      keyFile: '/certs/ops/tls.key',
      clientRootCAFiles: ['/certs/ops/client-ca.crt'],
    });
    expect(config.metrics).toEqual({
      provider: 'statsd',
      statsd: { network: 'udp', address: { host: 'statsd.monitoring', port: 8125 }, writeIntervalMs: 10000, prefix: 'peer0.' },
    });
    expect(config.health.containerRuntime).toMatchObject({ type: 'docker', endpoint: 'tcp://127.0.0.1:2375' });
  });
});
