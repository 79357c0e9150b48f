import { ConfigError } from '../../../src/errors';
import { normaliseConfig } from '../../../src/config/normalise';
import { callableHost } from '../../../src/config/companion-settings';
import { settings } from '../../../src/config/declarations';

const parseDays = settings.companionWarningDays.format;
import { companionOnlyNodeKeys } from '../../../src/config/companion-keys';

const configDir = '/etc/hyperledger/fabric';

function peer(document: unknown, env: Record<string, string> = {}) {
  return normaliseConfig({ dialect: 'peer', document, env, configDir, configFile: `${configDir}/core.yaml` });
}

function problems(run: () => unknown): string[] {
  try {
    run();
  } catch (error) {
    if (error instanceof ConfigError) return [...error.problems];
    throw error;
  }
  throw new Error('no ConfigError');
}

describe('companion mode off', () => {
  test('no companion section; the server is the operations keys', () => {
    const config = peer({ operations: { listenAddress: '0.0.0.0:9443' } });
    expect(config.companion).toBeUndefined();
    expect(config.operations.listen).toEqual({ host: '0.0.0.0', port: 9443 });
    expect(config.keys.listenAddress).toBe('operations.listenAddress');
  });

  test("a bad value in a node key only companion mode reads is the node's business", () => {
    expect(() => peer({ peer: { tls: { enabled: 'maybe', cert: { file: ['a', 'b'] } } } })).not.toThrow();
  });

  test('the node keys only companion mode reads are not the shared ones', () => {
    expect(companionOnlyNodeKeys('peer')).toEqual([
      'peer.tls.cert.file',
      'peer.tls.enabled',
      'peer.tls.clientCert.file',
      'peer.tls.clientAuthRequired',
      'peer.fileSystemPath',
      'ledger.snapshots.rootDir',
    ]);
    expect(companionOnlyNodeKeys('orderer')).toEqual([
      'General.TLS.Certificate',
      'General.TLS.Enabled',
      'General.TLS.ClientAuthRequired',
      'General.Cluster.ClientCertificate',
      'General.Cluster.RootCAs',
      'Admin.TLS.Certificate',
      'Admin.TLS.Enabled',
      'Admin.TLS.ClientRootCAs',
      'FileLedger.Location',
      'Consensus.WALDir',
      'Consensus.SnapDir',
    ]);
  });
});

describe('companion mode on', () => {
  const document = {
    operations: {
      listenAddress: '0.0.0.0:9443',
      tls: { enabled: true, cert: { file: 'ops/server.crt' }, key: { file: 'ops/server.key' }, clientRootCAs: { files: ['ops/ca.crt'] } },
      companion: { enabled: true, node: { rootCAs: { files: ['ops/ca.crt'] } } },
    },
    peer: {
      mspConfigPath: 'msp',
      fileSystemPath: '/var/hyperledger/production',
      tls: { enabled: true, cert: { file: 'tls/server.crt' }, rootcert: { file: 'tls/ca.crt' }, clientRootCAs: { files: ['tls/ca.crt', '/abs/other.crt'] } },
    },
  };

  test("fabric-ops' own server comes from the companion's keys, with its default port; the node's endpoint is the node's", () => {
    const config = peer(document);
    expect(config.operations.listen).toEqual({ host: '127.0.0.1', port: 9449 });
    expect(config.operations.tls.enabled).toBe(false);
    expect(config.metrics.provider).toBe('prometheus');
    expect(config.keys.listenAddress).toBe('operations.companion.listenAddress');
    expect(config.companion?.node).toEqual({
      address: { host: '127.0.0.1', port: 9443 },
      addressKey: 'operations.listenAddress',
      tls: { enabled: true, rootCAFiles: [`${configDir}/ops/ca.crt`], certFile: '', keyFile: '', serverName: '127.0.0.1' },
    });
  });

  test("every certificate source, resolved against the config file's folder; never a key file", () => {
    const sources = peer(document, { CORE_PEER_TLS_CLIENTAUTHREQUIRED: 'true' }).companion?.certificates.sources ?? [];
    expect(sources.map((source) => [source.kind, source.key, source.form, source.path])).toEqual([
      ['msp_signcert', 'peer.mspConfigPath', 'folder', `${configDir}/msp/signcerts`],
      ['msp_cacert', 'peer.mspConfigPath', 'folder', `${configDir}/msp/cacerts`],
      ['msp_intermediatecert', 'peer.mspConfigPath', 'folder', `${configDir}/msp/intermediatecerts`],
      ['msp_tlscacert', 'peer.mspConfigPath', 'folder', `${configDir}/msp/tlscacerts`],
      ['msp_tlsintermediatecert', 'peer.mspConfigPath', 'folder', `${configDir}/msp/tlsintermediatecerts`],
      ['msp_admincert', 'peer.mspConfigPath', 'folder', `${configDir}/msp/admincerts`],
      ['tls_server', 'peer.tls.cert.file', 'file', `${configDir}/tls/server.crt`],
      ['tls_root_ca', 'peer.tls.rootcert.file', 'file', `${configDir}/tls/ca.crt`],
      ['tls_client_root_ca', 'peer.tls.clientRootCAs.files', 'file', `${configDir}/tls/ca.crt`],
      ['tls_client_root_ca', 'peer.tls.clientRootCAs.files', 'file', '/abs/other.crt'],
      ['operations_server', 'operations.tls.cert.file', 'file', `${configDir}/ops/server.crt`],
      ['operations_client_root_ca', 'operations.tls.clientRootCAs.files', 'file', `${configDir}/ops/ca.crt`],
    ]);
    expect(sources.some((source) => /key|keystore/i.test(source.path))).toBe(false);
  });

  test('without client authentication the peer does not use its client root CAs: not reported (no false file problem)', () => {
    const kinds = peer(document).companion?.certificates.sources.map((source) => source.kind);
    expect(kinds).toContain('tls_server');
    expect(kinds).not.toContain('tls_client_root_ca');
    expect(kinds).not.toContain('tls_client');
  });

  test("a switched-off TLS's files are not the node's: not reported", () => {
    const config = peer(document, { CORE_PEER_TLS_ENABLED: 'false', CORE_OPERATIONS_TLS_ENABLED: 'false' });
    expect(config.companion?.certificates.sources.map((source) => source.kind)).not.toContain('tls_server');
    expect(config.companion?.certificates.sources.map((source) => source.kind)).not.toContain('operations_server');
  });

  test("Fabric's environment overrides apply, relative paths included", () => {
    const config = peer(document, { CORE_PEER_TLS_CERT_FILE: 'other/tls.crt', CORE_OPERATIONS_COMPANION_NODE_ADDRESS: 'peer0.org1:9443' });
    expect(config.companion?.certificates.sources.find((source) => source.kind === 'tls_server')?.path).toBe(`${configDir}/other/tls.crt`);
    expect(config.companion?.node.address).toEqual({ host: 'peer0.org1', port: 9443 });
    expect(config.companion?.node.addressKey).toBe('operations.companion.node.address');
  });

  test('the windows: defaults 7 and 30 days; a bad value names its key', () => {
    expect(peer(document).companion?.certificates).toMatchObject({ warningDays: 7, planningDays: 30, recheckIntervalMs: 60_000 });
    expect(problems(() => peer(document, { CORE_OPERATIONS_COMPANION_CERTIFICATES_WARNINGDAYS: 'a week' }))).toEqual([
      'operations.companion.certificates.warningDays (from CORE_OPERATIONS_COMPANION_CERTIFICATES_WARNINGDAYS): must be a whole number of days from 0 to 3650; got "a week"',
    ]);
  });

  test("the node's TLS without root CAs, or half a client pair, is refused naming the keys", () => {
    const without = { ...document, operations: { ...document.operations, companion: { enabled: true } } };
    expect(problems(() => peer(without, { CORE_OPERATIONS_COMPANION_NODE_CLIENTCERT_FILE: 'me.crt' }))).toEqual([
      "operations.companion.node.rootCAs.files: required when operations.tls.enabled is true: the CA certificates that issued the node's operations certificate",
      'operations.companion.node.clientKey.file: required when operations.companion.node.clientCert.file (from CORE_OPERATIONS_COMPANION_NODE_CLIENTCERT_FILE) is set',
    ]);
  });

  test("the companion's own TLS, when on, needs its own files, named by the companion's keys", () => {
    expect(problems(() => peer(document, { CORE_OPERATIONS_COMPANION_TLS_ENABLED: 'true' }))).toEqual([
      'operations.companion.tls.cert.file: required when operations.companion.tls.enabled is true',
      'operations.companion.tls.key.file: required when operations.companion.tls.enabled is true',
      'operations.companion.tls.clientRootCAs.files: required when operations.companion.tls.enabled is true (client certificates for /logspec and /metrics are verified against these CAs; without one nobody can use them)',
    ]);
  });

  test('an unknown key in the companion section is refused (a section only fabric-ops reads)', () => {
    // unknownKeys runs in the loader; here the orderer dialect's own names are read.
    const config = normaliseConfig({
      dialect: 'orderer',
      document: {
        Operations: { ListenAddress: '127.0.0.1:8443', Companion: { Enabled: true } },
        General: { LocalMSPDir: 'msp', Cluster: { ClientCertificate: 'cluster/client.crt', RootCAs: ['cluster/ca.crt'] } },
        Admin: { TLS: { Enabled: true, Certificate: 'admin/server.crt' } },
        FileLedger: { Location: '/var/ledger' },
      },
      env: {},
      configDir: '/etc/orderer',
      configFile: '/etc/orderer/orderer.yaml',
    });
    expect(config.operations.listen).toEqual({ host: '127.0.0.1', port: 9449 });
    expect(config.companion?.node.address).toEqual({ host: '127.0.0.1', port: 8443 });
    expect(config.companion?.certificates.sources.filter((source) => source.form === 'file').map((source) => [source.kind, source.path])).toEqual([
      ['cluster_client', '/etc/orderer/cluster/client.crt'],
      ['cluster_root_ca', '/etc/orderer/cluster/ca.crt'],
      ['admin_server', '/etc/orderer/admin/server.crt'],
    ]);
    expect(config.companion?.dataFolders).toEqual([
      { key: 'FileLedger.Location', path: '/var/ledger' },
      { key: 'Consensus.WALDir', path: '/var/hyperledger/production/orderer/etcdraft/wal' },
      { key: 'Consensus.SnapDir', path: '/var/hyperledger/production/orderer/etcdraft/snapshot' },
    ]);
  });
});

describe('helpers', () => {
  test('an every-interface host is called on the loopback address of its family', () => {
    expect(['', '0.0.0.0', '::', 'peer0'].map(callableHost)).toEqual(['127.0.0.1', '127.0.0.1', '::1', 'peer0']);
  });

  test('days: whole numbers from 0 to 3650', () => {
    expect(parseDays(' 7 ')).toEqual({ ok: true, value: 7 });
    expect(parseDays('3651').ok).toBe(false);
    expect(parseDays('-1').ok).toBe(false);
  });
});
