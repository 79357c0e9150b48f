import { normaliseConfig } from '../../../src/config/normalise';
import { normaliseYaml, problemsOf } from './helpers';

const peerTls = `
operations:
  tls:
    enabled: true
    cert: { file: tls/server.crt }
    key: { file: tls/server.key }
    clientRootCAs: { files: [tls/client-ca.crt] }
`;

describe('embedded defaults (no document)', () => {
  it.each([
    ['peer', 9443, 10000],
    ['orderer', 8443, 30000],
  ] as const)('%s: listens on 127.0.0.1:%d, metrics disabled, no health checker', (dialect, port, writeIntervalMs) => {
    const config = normaliseConfig({ dialect, document: null, env: {}, configDir: '/srv', configFile: null });
    expect(config.configFile).toBeNull();
    expect(config.operations.listen).toEqual({ host: '127.0.0.1', port });
    expect(config.operations.tls.enabled).toBe(false);
    expect(config.metrics.provider).toBe('disabled');
    expect(config.metrics.statsd.writeIntervalMs).toBe(writeIntervalMs);
    expect(config.health).toEqual({
      timeoutMs: 2000,
      containerRuntime: {
        type: 'none',
        endpoint: '',
        requiredConditions: ['RuntimeReady', 'NetworkReady'],
        dockerTls: { enabled: false, caFile: '', certFile: '', keyFile: '' },
      },
    });
    expect(config.organizationCAs).toEqual({ files: [], dirs: [] });
  });
});

describe('reading the document', () => {
  it('treats YAML null / empty values as the default', () => {
    const config = normaliseYaml(
      'peer',
      `
operations:
  listenAddress:
  tls:
    enabled:
    cert:
      file:
    clientRootCAs:
metrics:
  statsd:
`,
    );
    expect(config.operations.listen).toEqual({ host: '127.0.0.1', port: 9443 });
    expect(config.operations.tls).toMatchObject({ enabled: false, certFile: '', clientRootCAFiles: [] });
  });

  it('ignores every other section and unknown keys in the sections it reads', () => {
    const config = normaliseYaml(
      'orderer',
      `
General: { ListenPort: 7050, Keepalive: { ServerMinInterval: 60s } }
Consensus: { WALDir: /x }
Operations: { ListenAddress: ":7443", Unknown: [1, 2] }
`,
    );
    expect(config.operations.listen).toEqual({ host: '', port: 7443 });
  });

  it('matches keys case-insensitively, as viper does', () => {
    const config = normaliseYaml(
      'peer',
      `
operations: { ListenAddress: "127.0.0.1:1111", TLS: { Enabled: true, CERT: { file: c }, Key: { FILE: k }, clientrootcas: { Files: [ca] } } }
metrics: { Provider: statsd }
`,
    );
    expect(config.operations.listen.port).toBe(1111);
    expect(config.operations.tls).toMatchObject({ enabled: true, certFile: '/etc/hyperledger/fabric/c', keyFile: '/etc/hyperledger/fabric/k' });
    expect(config.metrics.provider).toBe('statsd');
  });

  it('refuses two keys that differ only in case (viper folds them into one and keeps either value)', () => {
    expect(problemsOf(() => normaliseYaml('peer', 'metrics: { Provider: prometheus, provider: statsd }\n'))).toEqual([
      'config file /etc/hyperledger/fabric/core.yaml: metrics: keys "Provider" and "provider" are one key to Fabric\'s reader, which ignores case and keeps either value; keep one',
    ]);
    expect(problemsOf(() => normaliseYaml('orderer', 'Operations: { TLS: { Enabled: true, enabled: false } }\n'))).toEqual([
      'config file /etc/hyperledger/fabric/orderer.yaml: Operations.TLS: keys "Enabled" and "enabled" are one key to Fabric\'s reader, which ignores case and keeps either value; keep one',
    ]);
  });

  it('converts scalars as viper does: numbers to strings, "true"/"false" strings to booleans, a string to a whitespace-separated list', () => {
    const config = normaliseYaml(
      'peer',
      `
operations:
  tls:
    enabled: "True"
    cert: { file: 123 }
    key: { file: server.key }
    clientAuthRequired: "false"
    clientRootCAs: { files: "a.crt  b.crt" }
metrics: { statsd: { prefix: 7 } }
`,
    );
    expect(config.operations.tls).toEqual({
      enabled: true,
      certFile: '/etc/hyperledger/fabric/123',
      keyFile: '/etc/hyperledger/fabric/server.key',
      clientAuthRequired: false,
      clientRootCAFiles: ['/etc/hyperledger/fabric/a.crt', '/etc/hyperledger/fabric/b.crt'],
      requireDedicatedCA: false,
    });
    expect(config.metrics.statsd.prefix).toBe('7.');
  });

  it('resolves relative paths against the config directory and keeps absolute ones, in both dialects', () => {
    const peer = normaliseYaml(
      'peer',
      `
operations:
  tls: { enabled: true, cert: { file: ops/tls.crt }, key: { file: /abs/tls.key }, clientRootCAs: { files: [../ca/client.crt, /abs/ca.crt] } }
vm: { docker: { tls: { enabled: true, ca: { file: docker/ca.crt }, cert: { file: /d/tls.crt }, key: { file: docker/tls.key } } } }
peer: { tls: { rootcert: { file: tls/ca.crt }, clientRootCAs: { files: [tls/client.crt] } }, mspConfigPath: msp }
`,
    );
    expect(peer.operations.tls).toMatchObject({
      certFile: '/etc/hyperledger/fabric/ops/tls.crt',
      keyFile: '/abs/tls.key',
      clientRootCAFiles: ['/etc/hyperledger/ca/client.crt', '/abs/ca.crt'],
    });
    expect(peer.health.containerRuntime.dockerTls).toEqual({
      enabled: true,
      caFile: '/etc/hyperledger/fabric/docker/ca.crt',
      certFile: '/d/tls.crt',
      keyFile: '/etc/hyperledger/fabric/docker/tls.key',
    });
    expect(peer.organizationCAs).toEqual({
      files: ['/etc/hyperledger/fabric/tls/ca.crt', '/etc/hyperledger/fabric/tls/client.crt'],
      dirs: ['/etc/hyperledger/fabric/msp/cacerts', '/etc/hyperledger/fabric/msp/tlscacerts'],
    });

    const orderer = normaliseYaml(
      'orderer',
      `
Operations: { TLS: { Enabled: true, Certificate: ops/tls.crt, PrivateKey: ops/tls.key, ClientRootCAs: [ops/ca.crt] } }
General: { TLS: { RootCAs: [tls/ca.crt], ClientRootCAs: [/abs/client-ca.crt] }, LocalMSPDir: /var/msp }
`,
    );
    expect(orderer.operations.tls).toMatchObject({
      certFile: '/etc/hyperledger/fabric/ops/tls.crt',
      keyFile: '/etc/hyperledger/fabric/ops/tls.key',
      clientRootCAFiles: ['/etc/hyperledger/fabric/ops/ca.crt'],
    });
    expect(orderer.organizationCAs).toEqual({
      files: ['/etc/hyperledger/fabric/tls/ca.crt', '/abs/client-ca.crt'],
      dirs: ['/var/msp/cacerts', '/var/msp/tlscacerts'],
    });
  });

  it('gives the statsd prefix a trailing dot unless it has one or is empty', () => {
    expect(normaliseYaml('peer', 'metrics: { statsd: { prefix: peer0 } }').metrics.statsd.prefix).toBe('peer0.');
    expect(normaliseYaml('peer', 'metrics: { statsd: { prefix: peer0. } }').metrics.statsd.prefix).toBe('peer0.');
    expect(normaliseYaml('orderer', 'Metrics: { Statsd: { Prefix: "" } }').metrics.statsd.prefix).toBe('');
  });

  it('reads a full statsd setup', () => {
    const config = normaliseYaml(
      'orderer',
      `
Metrics: { Provider: statsd, Statsd: { Network: tcp, Address: "[::1]:9125", WriteInterval: 1m30s, Prefix: orderer1 } }
`,
    );
    expect(config.metrics).toEqual({
      provider: 'statsd',
      statsd: { network: 'tcp', address: { host: '::1', port: 9125 }, writeIntervalMs: 90000, prefix: 'orderer1.' },
    });
  });

  it('accepts TLS enabled without clientAuthRequired, and with it', () => {
    expect(normaliseYaml('peer', peerTls).operations.tls.clientAuthRequired).toBe(false);
    const config = normaliseYaml('peer', peerTls, { CORE_OPERATIONS_TLS_CLIENTAUTHREQUIRED: 'true', CORE_OPERATIONS_TLS_REQUIREDEDICATEDCA: 'TRUE' });
    expect(config.operations.tls).toMatchObject({ clientAuthRequired: true, requireDedicatedCA: true });
  });
});

describe('environment overrides, named as Fabric names them', () => {
  it('override strings, booleans (any case), lists and durations of the peer dialect', () => {
    const config = normaliseYaml('peer', 'operations: { listenAddress: "127.0.0.1:9443" }', {
      CORE_OPERATIONS_LISTENADDRESS: ':7443',
      CORE_OPERATIONS_MAXCONNECTIONS: '64',
      CORE_OPERATIONS_TLS_ENABLED: 'TRUE',
      CORE_OPERATIONS_TLS_CERT_FILE: 'tls/server.crt',
      CORE_OPERATIONS_TLS_KEY_FILE: '/abs/server.key',
      CORE_OPERATIONS_TLS_CLIENTAUTHREQUIRED: 'False',
      CORE_OPERATIONS_TLS_CLIENTROOTCAS_FILES: ' a.crt\tb.crt\n c.crt ',
      CORE_METRICS_PROVIDER: 'statsd',
      CORE_METRICS_STATSD_NETWORK: 'tcp',
      CORE_METRICS_STATSD_ADDRESS: '127.0.0.1:9125',
      CORE_METRICS_STATSD_WRITEINTERVAL: '500ms',
      CORE_METRICS_STATSD_PREFIX: 'p',
      CORE_OPERATIONS_HEALTHCHECK_TIMEOUT: '1m',
      CORE_OPERATIONS_HEALTHCHECK_CONTAINERRUNTIME_TYPE: 'cri',
      CORE_OPERATIONS_HEALTHCHECK_CONTAINERRUNTIME_ENDPOINT: '/run/k3s/containerd/containerd.sock',
      CORE_OPERATIONS_HEALTHCHECK_CONTAINERRUNTIME_REQUIREDCONDITIONS: '[RuntimeReady]',
      CORE_PEER_MSPCONFIGPATH: '/var/msp',
      CORE_PEER_TLS_ROOTCERT_FILE: 'tls/ca.crt',
      CORE_PEER_TLS_CLIENTROOTCAS_FILES: '[tls/c1.crt, "tls/c2.crt"]',
    });
    expect(config.operations).toEqual({
      listen: { host: '', port: 7443 },
      maxConnections: 64,
      tls: {
        enabled: true,
        certFile: '/etc/hyperledger/fabric/tls/server.crt',
        keyFile: '/abs/server.key',
        clientAuthRequired: false,
        clientRootCAFiles: ['/etc/hyperledger/fabric/a.crt', '/etc/hyperledger/fabric/b.crt', '/etc/hyperledger/fabric/c.crt'],
        requireDedicatedCA: false,
      },
    });
    expect(config.metrics).toEqual({
      provider: 'statsd',
      statsd: { network: 'tcp', address: { host: '127.0.0.1', port: 9125 }, writeIntervalMs: 500, prefix: 'p.' },
    });
    expect(config.health.timeoutMs).toBe(60000);
    expect(config.health.containerRuntime).toMatchObject({
      type: 'cri',
      endpoint: 'unix:///run/k3s/containerd/containerd.sock',
      requiredConditions: ['RuntimeReady'],
    });
    expect(config.organizationCAs).toEqual({
      files: ['/etc/hyperledger/fabric/tls/ca.crt', '/etc/hyperledger/fabric/tls/c1.crt', '/etc/hyperledger/fabric/tls/c2.crt'],
      dirs: ['/var/msp/cacerts', '/var/msp/tlscacerts'],
    });
  });

  it('override the vm.* keys of the peer dialect', () => {
    const config = normaliseYaml('peer', '', {
      CORE_VM_ENDPOINT: 'tcp://127.0.0.1:2376',
      CORE_VM_DOCKER_TLS_ENABLED: 'true',
      CORE_VM_DOCKER_TLS_CA_FILE: 'docker/ca.crt',
      CORE_VM_DOCKER_TLS_CERT_FILE: 'docker/tls.crt',
      CORE_VM_DOCKER_TLS_KEY_FILE: 'docker/tls.key',
    });
    expect(config.health.containerRuntime).toEqual({
      type: 'docker',
      endpoint: 'tcp://127.0.0.1:2376',
      requiredConditions: ['RuntimeReady', 'NetworkReady'],
      dockerTls: {
        enabled: true,
        caFile: '/etc/hyperledger/fabric/docker/ca.crt',
        certFile: '/etc/hyperledger/fabric/docker/tls.crt',
        keyFile: '/etc/hyperledger/fabric/docker/tls.key',
      },
    });
  });

  it('override the orderer dialect with ORDERER_ names', () => {
    const config = normaliseYaml('orderer', 'Operations: { ListenAddress: "127.0.0.1:8443" }', {
      ORDERER_OPERATIONS_LISTENADDRESS: '[::1]:0',
      ORDERER_OPERATIONS_MAXCONNECTIONS: '2048',
      ORDERER_OPERATIONS_TLS_ENABLED: 'true',
      ORDERER_OPERATIONS_TLS_CERTIFICATE: 'tls/ops.crt',
      ORDERER_OPERATIONS_TLS_PRIVATEKEY: 'tls/ops.key',
      ORDERER_OPERATIONS_TLS_CLIENTROOTCAS: '[tls/ca1.crt, tls/ca2.crt]',
      ORDERER_OPERATIONS_TLS_CLIENTAUTHREQUIRED: 'true',
      ORDERER_OPERATIONS_TLS_REQUIREDEDICATEDCA: 'true',
      ORDERER_METRICS_PROVIDER: 'prometheus',
      ORDERER_METRICS_STATSD_ADDRESS: 'stats:8125',
      ORDERER_OPERATIONS_HEALTHCHECK_TIMEOUT: '750ms',
      ORDERER_OPERATIONS_HEALTHCHECK_CONTAINERRUNTIME_TYPE: 'docker',
      ORDERER_GENERAL_TLS_ROOTCAS: 'tls/root.crt',
      ORDERER_GENERAL_TLS_CLIENTROOTCAS: 'tls/client-root.crt',
      ORDERER_GENERAL_LOCALMSPDIR: 'msp',
    });
    expect(config.operations).toEqual({
      listen: { host: '::1', port: 0 },
      maxConnections: 2048,
      tls: {
        enabled: true,
        certFile: '/etc/hyperledger/fabric/tls/ops.crt',
        keyFile: '/etc/hyperledger/fabric/tls/ops.key',
        clientAuthRequired: true,
        clientRootCAFiles: ['/etc/hyperledger/fabric/tls/ca1.crt', '/etc/hyperledger/fabric/tls/ca2.crt'],
        requireDedicatedCA: true,
      },
    });
    expect(config.metrics.provider).toBe('prometheus');
    expect(config.metrics.statsd.address).toEqual({ host: 'stats', port: 8125 });
    expect(config.health).toMatchObject({ timeoutMs: 750, containerRuntime: { type: 'docker', endpoint: 'unix:///var/run/docker.sock' } });
    expect(config.organizationCAs).toEqual({
      files: ['/etc/hyperledger/fabric/tls/root.crt', '/etc/hyperledger/fabric/tls/client-root.crt'],
      dirs: ['/etc/hyperledger/fabric/msp/cacerts', '/etc/hyperledger/fabric/msp/tlscacerts'],
    });
  });

  it("ignores the other dialect's variables", () => {
    expect(normaliseYaml('orderer', '', { CORE_OPERATIONS_LISTENADDRESS: ':1' }).operations.listen.port).toBe(8443);
    expect(normaliseYaml('peer', '', { ORDERER_OPERATIONS_LISTENADDRESS: ':1' }).operations.listen.port).toBe(9443);
  });

  it('ignores an empty variable, as viper does', () => {
    const config = normaliseYaml('peer', 'vm: { endpoint: "unix:///var/run/docker.sock" }', { CORE_VM_ENDPOINT: '', CORE_METRICS_PROVIDER: '' });
    expect(config.health.containerRuntime.type).toBe('docker');
    expect(config.metrics.provider).toBe('disabled');
  });

  it("an empty list is [] (and an empty [] clears the file's list)", () => {
    const config = normaliseYaml('peer', 'operations: { healthCheck: { containerRuntime: { requiredConditions: [RuntimeReady] } } }', {
      CORE_OPERATIONS_HEALTHCHECK_CONTAINERRUNTIME_REQUIREDCONDITIONS: '[]',
    });
    expect(config.health.containerRuntime.requiredConditions).toEqual([]);
  });

  it('an environment value that does not parse names the variable and the key', () => {
    const accepted = 'accepted: 1, t, T, TRUE, true, True (true), 0, f, F, FALSE, false, False (false)';
    expect(problemsOf(() => normaliseYaml('peer', '', { CORE_OPERATIONS_TLS_ENABLED: 'yes' }))).toEqual([
      `CORE_OPERATIONS_TLS_ENABLED (operations.tls.enabled): "yes" is not true or false; ${accepted}`,
    ]);
    expect(problemsOf(() => normaliseYaml('orderer', '', { ORDERER_OPERATIONS_TLS_CLIENTAUTHREQUIRED: ' true' }))).toEqual([
      `ORDERER_OPERATIONS_TLS_CLIENTAUTHREQUIRED (Operations.TLS.ClientAuthRequired): " true" is not true or false; ${accepted}`,
    ]);
  });

  it('a bad value from the environment names the key and the variable it came from', () => {
    expect(problemsOf(() => normaliseYaml('peer', '', { CORE_OPERATIONS_LISTENADDRESS: '9443' }))).toEqual([
      'operations.listenAddress (from CORE_OPERATIONS_LISTENADDRESS): "9443" is not host:port',
    ]);
    expect(problemsOf(() => normaliseYaml('orderer', '', { ORDERER_METRICS_PROVIDER: 'statsd', ORDERER_METRICS_STATSD_ADDRESS: 'stats' }))).toEqual([
      'Metrics.Statsd.Address (from ORDERER_METRICS_STATSD_ADDRESS): "stats" is not host:port',
    ]);
  });
});

describe('health: the container runtime', () => {
  const runtimeOf = (dialect: 'peer' | 'orderer', yamlText: string, env: Record<string, string> = {}) => {
    const config = normaliseYaml(dialect, yamlText, env);
    return { type: config.health.containerRuntime.type, endpoint: config.health.containerRuntime.endpoint, key: config.keys.containerRuntimeEndpoint };
  };

  it('peer, type unset: vm.endpoint registers docker, as Fabric does; no vm.endpoint registers none', () => {
    expect(runtimeOf('peer', 'vm: { endpoint: "unix:///var/run/docker.sock" }')).toEqual({
      type: 'docker',
      endpoint: 'unix:///var/run/docker.sock',
      key: 'vm.endpoint',
    });
    expect(runtimeOf('peer', 'vm: { endpoint: "http://localhost:2375" }')).toEqual({ type: 'docker', endpoint: 'tcp://localhost:2375', key: 'vm.endpoint' });
    expect(runtimeOf('peer', 'vm: { endpoint: }')).toEqual({ type: 'none', endpoint: '', key: 'operations.healthCheck.containerRuntime.endpoint' });
  });

  it('peer, type none: no checker even with vm.endpoint set (the Kubernetes fix)', () => {
    expect(runtimeOf('peer', 'vm: { endpoint: "unix:///var/run/docker.sock" }', { CORE_OPERATIONS_HEALTHCHECK_CONTAINERRUNTIME_TYPE: 'none' }).type).toBe(
      'none',
    );
    expect(runtimeOf('peer', 'operations: { healthCheck: { containerRuntime: { type: none, endpoint: /x.sock } } }')).toMatchObject({
      type: 'none',
      endpoint: '',
    });
  });

  it('orderer, type unset: none', () => {
    expect(runtimeOf('orderer', '')).toMatchObject({ type: 'none', endpoint: '' });
  });

  it('docker with no endpoint: vm.endpoint, else the usual Docker socket', () => {
    const docker = 'operations: { healthCheck: { containerRuntime: { type: docker } } }';
    expect(runtimeOf('peer', `${docker}\nvm: { endpoint: "/custom/docker.sock" }`)).toEqual({
      type: 'docker',
      endpoint: 'unix:///custom/docker.sock',
      key: 'vm.endpoint',
    });
    expect(runtimeOf('peer', docker)).toMatchObject({ type: 'docker', endpoint: 'unix:///var/run/docker.sock' });
    expect(runtimeOf('orderer', 'Operations: { HealthCheck: { ContainerRuntime: { Type: docker } } }')).toMatchObject({
      type: 'docker',
      endpoint: 'unix:///var/run/docker.sock',
    });
  });

  it('docker with an endpoint uses it over vm.endpoint', () => {
    expect(
      runtimeOf('peer', 'operations: { healthCheck: { containerRuntime: { type: docker, endpoint: "tcp://127.0.0.1:2375" } } }\nvm: { endpoint: /x.sock }'),
    ).toEqual({
      type: 'docker',
      endpoint: 'tcp://127.0.0.1:2375',
      key: 'operations.healthCheck.containerRuntime.endpoint',
    });
  });

  it("cri with no endpoint: containerd's socket; auto with an endpoint", () => {
    expect(runtimeOf('orderer', 'Operations: { HealthCheck: { ContainerRuntime: { Type: cri } } }')).toMatchObject({
      type: 'cri',
      endpoint: 'unix:///run/containerd/containerd.sock',
    });
    expect(runtimeOf('peer', 'operations: { healthCheck: { containerRuntime: { type: auto, endpoint: /run/crio/crio.sock } } }')).toMatchObject({
      type: 'auto',
      endpoint: 'unix:///run/crio/crio.sock',
    });
  });

  it('refuses auto without an endpoint, a TCP endpoint for cri/auto, a bad endpoint, an unknown type, and an endpoint without a type', () => {
    expect(problemsOf(() => normaliseYaml('peer', 'operations: { healthCheck: { containerRuntime: { type: auto } } }'))).toEqual([
      'operations.healthCheck.containerRuntime.endpoint: required when operations.healthCheck.containerRuntime.type is auto',
    ]);
    expect(problemsOf(() => normaliseYaml('orderer', 'Operations: { HealthCheck: { ContainerRuntime: { Type: cri, Endpoint: "tcp://h:1" } } }'))).toEqual([
      'Operations.HealthCheck.ContainerRuntime.Endpoint: "tcp://h:1" is a TCP endpoint; only type docker can use TCP (Operations.HealthCheck.ContainerRuntime.Type is cri)',
    ]);
    expect(problemsOf(() => normaliseYaml('peer', 'vm: { endpoint: "localhost:2375" }'))).toEqual([
      'vm.endpoint: "localhost:2375" is not an endpoint (use unix:///path/to.sock, /path/to.sock, or tcp://host:port (docker only))',
    ]);
    expect(problemsOf(() => normaliseYaml('orderer', 'Operations: { HealthCheck: { ContainerRuntime: { Type: podman } } }'))).toEqual([
      'Operations.HealthCheck.ContainerRuntime.Type: must be one of none, docker, cri, auto (or empty); got "podman"',
    ]);
    expect(problemsOf(() => normaliseYaml('peer', 'operations: { healthCheck: { containerRuntime: { endpoint: /run/containerd/containerd.sock } } }'))).toEqual(
      ['operations.healthCheck.containerRuntime.endpoint: is set but operations.healthCheck.containerRuntime.type is empty; set it to docker, cri or auto'],
    );
  });

  it('required conditions: a subset of RuntimeReady, NetworkReady, duplicates dropped', () => {
    expect(
      normaliseYaml('peer', 'operations: { healthCheck: { containerRuntime: { requiredConditions: [NetworkReady, NetworkReady] } } }').health.containerRuntime
        .requiredConditions,
    ).toEqual(['NetworkReady']);
    expect(
      problemsOf(() => normaliseYaml('orderer', 'Operations: { HealthCheck: { ContainerRuntime: { RequiredConditions: [RuntimeReady, PodReady] } } }')),
    ).toEqual(['Operations.HealthCheck.ContainerRuntime.RequiredConditions: "PodReady" is not a CRI condition; allowed: RuntimeReady, NetworkReady']);
  });

  it('the checker timeout is a positive Go duration', () => {
    expect(normaliseYaml('orderer', 'Operations: { HealthCheck: { Timeout: 300ms } }').health.timeoutMs).toBe(300);
    expect(problemsOf(() => normaliseYaml('peer', 'operations: { healthCheck: { timeout: 0s } }'))).toEqual([
      'operations.healthCheck.timeout: must be greater than 0; got "0s"',
    ]);
    expect(problemsOf(() => normaliseYaml('orderer', 'Operations: { HealthCheck: { Timeout: 2 } }'))).toEqual([
      'Operations.HealthCheck.Timeout: "2" is not a duration (e.g. 10s, 1m30s, 500ms)',
    ]);
  });

  it('Docker TLS needs its three files when enabled', () => {
    expect(problemsOf(() => normaliseYaml('peer', 'vm: { docker: { tls: { enabled: true, ca: { file: ca.crt } } } }'))).toEqual([
      'vm.docker.tls.cert.file: required when vm.docker.tls.enabled is true',
      'vm.docker.tls.key.file: required when vm.docker.tls.enabled is true',
    ]);
  });
});

const yamlBooleans =
  'accepted: y, Y, yes, Yes, YES, true, True, TRUE, on, On, ON, 1, t, T (true), n, N, no, No, NO, false, False, FALSE, off, Off, OFF, 0, f, F (false); ' +
  'quoted, only 1, t, T, TRUE, true, True, 0, f, F, FALSE, false, False';

describe("problems, one line each, naming the dialect's own key", () => {
  it.each([
    [
      'peer',
      'operations: { tls: { enabled: true, key: { file: k }, clientRootCAs: { files: [ca] } } }',
      'operations.tls.cert.file: required when operations.tls.enabled is true',
    ],
    [
      'orderer',
      'Operations: { TLS: { Enabled: true, Certificate: c, ClientRootCAs: [ca] } }',
      'Operations.TLS.PrivateKey: required when Operations.TLS.Enabled is true',
    ],
    ['peer', 'metrics: { provider: prometeus }', 'metrics.provider: must be one of prometheus, statsd, disabled; got "prometeus"'],
    ['orderer', 'Metrics: { Provider: prometeus }', 'Metrics.Provider: must be one of prometheus, statsd, disabled; got "prometeus"'],
    ['orderer', 'Metrics: { Provider: Prometheus }', 'Metrics.Provider: must be one of prometheus, statsd, disabled; got "Prometheus"'],
    ['peer', 'operations: { listenAddress: "9443" }', 'operations.listenAddress: "9443" is not host:port'],
    ['peer', 'operations: { listenAddress: 9443 }', 'operations.listenAddress: "9443" is not host:port'],
    ['orderer', 'Operations: { ListenAddress: "127.0.0.1:70000" }', 'Operations.ListenAddress: port 70000 in "127.0.0.1:70000" is not in 0..65535'],
    ['peer', 'metrics: { provider: statsd, statsd: { writeInterval: 10 } }', 'metrics.statsd.writeInterval: "10" is not a duration (e.g. 10s, 1m30s, 500ms)'],
    ['peer', 'metrics: { provider: statsd, statsd: { writeInterval: "-1s" } }', 'metrics.statsd.writeInterval: must be greater than 0; got "-1s"'],
    ['orderer', 'Metrics: { Provider: statsd, Statsd: { Network: sctp } }', 'Metrics.Statsd.Network: must be one of tcp, udp; got "sctp"'],
    ['orderer', 'Metrics: { Provider: statsd, Statsd: { Address: "localhost" } }', 'Metrics.Statsd.Address: "localhost" is not host:port'],
    ['peer', 'metrics: { provider: statsd, statsd: { address: "127.0.0.1:0" } }', 'metrics.statsd.address: port 0 in "127.0.0.1:0" is not in 1..65535'],
    [
      'peer',
      'metrics: { provider: statsd, statsd: { address: "127.0.0.1:65536" } }',
      'metrics.statsd.address: port 65536 in "127.0.0.1:65536" is not in 1..65535',
    ],
    ['peer', 'operations: { listenAddress: [a, b] }', 'operations.listenAddress: must be a string; got a list'],
    ['orderer', 'Operations: { TLS: { Enabled: "yes" } }', `Operations.TLS.Enabled: must be true or false; got "yes"; ${yamlBooleans}`],
    ['orderer', 'Operations: { TLS: { Enabled: 2 } }', `Operations.TLS.Enabled: must be true or false; got number 2; ${yamlBooleans}`],
    ['peer', 'operations: { tls: { enabled: 0.5 } }', `operations.tls.enabled: must be true or false; got number 0.5; ${yamlBooleans}`],
    ['peer', 'operations: { tls: { clientRootCAs: { files: { a: b } } } }', 'operations.tls.clientRootCAs.files: must be a list; got a mapping'],
    ['orderer', 'Operations: { TLS: { ClientRootCAs: [ok.crt, [nested]] } }', 'Operations.TLS.ClientRootCAs: item 2 must be a string; got a list'],
    ['peer', 'operations: { tls: { cert: tls/server.crt } }', 'operations.tls.cert: must be a mapping; got "tls/server.crt"'],
    ['orderer', 'Operations: "127.0.0.1:8443"', 'Operations: must be a mapping; got "127.0.0.1:8443"'],
    ['peer', '- just\n- a list', 'config file /etc/hyperledger/fabric/core.yaml: the document must be a mapping of sections; got a list'],
  ] as const)('%s %j → %s', (dialect, yamlText, problem) => {
    expect(problemsOf(() => normaliseYaml(dialect, yamlText))).toEqual([problem]);
  });

  it('TLS enabled needs client CAs, with or without clientAuthRequired (nobody could use /logspec or /metrics otherwise)', () => {
    const expected = [
      'Operations.TLS.ClientRootCAs: required when Operations.TLS.Enabled is true (client certificates for /logspec and /metrics are verified against these CAs; without one nobody can use them)',
    ];
    expect(problemsOf(() => normaliseYaml('orderer', 'Operations: { TLS: { Enabled: true, Certificate: c, PrivateKey: k } }'))).toEqual(expected);
    expect(
      problemsOf(() =>
        normaliseYaml('orderer', 'Operations: { TLS: { Enabled: true, Certificate: c, PrivateKey: k, ClientAuthRequired: true, ClientRootCAs: [] } }'),
      ),
    ).toEqual(expected);
  });

  it('statsd keys are only checked when the provider is statsd; otherwise a bad one falls back to its default', () => {
    const config = normaliseYaml('peer', 'metrics: { provider: prometheus, statsd: { network: sctp, address: nowhere, writeInterval: soon, prefix: p } }');
    expect(config.metrics).toEqual({
      provider: 'prometheus',
      statsd: { network: 'udp', address: { host: '127.0.0.1', port: 8125 }, writeIntervalMs: 10000, prefix: 'p.' },
    });
    expect(normaliseYaml('orderer', 'Metrics: { Statsd: [not, a, mapping] }').metrics.provider).toBe('disabled');
  });

  it('reports every problem at once', () => {
    const problems = problemsOf(() =>
      normaliseYaml(
        'peer',
        `
operations:
  listenAddress: "9443"
  tls: { enabled: true, clientAuthRequired: maybe }
  healthCheck: { timeout: forever, containerRuntime: { type: auto, requiredConditions: [Ready] } }
metrics:
  provider: statsd
  statsd: { network: sctp, address: "statsd", writeInterval: 10 }
vm: { docker: [] }
`,
        { CORE_OPERATIONS_TLS_REQUIREDEDICATEDCA: 'sometimes' },
      ),
    );
    expect(problems).toEqual([
      `operations.tls.clientAuthRequired: must be true or false; got "maybe"; ${yamlBooleans}`,
      'CORE_OPERATIONS_TLS_REQUIREDEDICATEDCA (operations.tls.requireDedicatedCA): "sometimes" is not true or false; accepted: 1, t, T, TRUE, true, True (true), 0, f, F, FALSE, false, False (false)',
      'vm.docker: must be a mapping; got a list',
      'operations.listenAddress: "9443" is not host:port',
      'operations.tls.cert.file: required when operations.tls.enabled is true',
      'operations.tls.key.file: required when operations.tls.enabled is true',
      'operations.tls.clientRootCAs.files: required when operations.tls.enabled is true (client certificates for /logspec and /metrics are verified against these CAs; without one nobody can use them)',
      'metrics.statsd.network: must be one of tcp, udp; got "sctp"',
      'metrics.statsd.address: "statsd" is not host:port',
      'metrics.statsd.writeInterval: "10" is not a duration (e.g. 10s, 1m30s, 500ms)',
      'operations.healthCheck.timeout: "forever" is not a duration (e.g. 10s, 1m30s, 500ms)',
      'operations.healthCheck.containerRuntime.requiredConditions: "Ready" is not a CRI condition; allowed: RuntimeReady, NetworkReady',
      'operations.healthCheck.containerRuntime.endpoint: required when operations.healthCheck.containerRuntime.type is auto',
    ]);
  });
});
