import type { Dialect } from '../../src/config/types';

/**
 * The node pods of the common Fabric deployers, as their source renders them, for the sidecar
 * blocks of docs/kubernetes-companion.md (test/chart/companion-sidecar.test.ts): the pod's
 * volumes, the keys of the Secrets and ConfigMaps behind them, the node's variables and the values
 * of its configuration file that companion mode reads. Written from the deployers' source, each
 * entry naming the file it comes from; the releases are those of the docs' examples.
 *
 * - bevel-operator-fabric: github.com/hyperledger/bevel-operator-fabric at
 *   d400c548d4597bcb1caf75c2189019a74838c4ac (charts/hlf-peer, charts/hlf-ordnode; its operator,
 *   "hlf-operator", installs those charts with fullnameOverride = the resource's name:
 *   controllers/peer/peer_controller.go).
 * - fabric-operator: github.com/hyperledger-labs/fabric-operator at
 *   10283a697ac1f408e436e9fedcc8dc80541c1e02 (definitions/peer/deployment.yaml,
 *   pkg/offering/base/peer/override/deployment.go, pkg/offering/base/peer/peer.go GetLabels,
 *   pkg/initializer/common/secretmanager, defaultconfig/peer/v25/core.yaml).
 */

export type Volume = Record<string, unknown> & { name: string };

export interface DeployerPod {
  /** The block's id in the docs: `# fabric-ops sidecar: <id> (<dialect>)`. */
  id: string;
  dialect: Dialect;
  workload: { kind: 'Deployment'; name: string };
  podLabels: Record<string, string>;
  /** The node pod's volumes, as rendered (the key-holding ones included). */
  volumes: Volume[];
  /** Secret name -> its keys. */
  secrets: Record<string, string[]>;
  /** ConfigMap name -> its data (the variables of an env ConfigMap; a file's content is not needed, only its key). */
  configMaps: Record<string, Record<string, string>>;
  /** The node's configuration file: the ConfigMap key the sidecar's `--config` must reach. */
  configKey: string;
  /**
   * The values of the node's own configuration file (its ConfigMap) for the keys companion mode
   * reads, where they differ from Fabric's sample file, which stands in for the rest of it. Given as
   * Fabric's variables, under the node's environment.
   */
  fileValues: Record<string, string>;
  /** The node's operations port (where the sidecar calls it on 127.0.0.1). */
  nodeOperationsPort: number;
  /** Data folders the sidecar cannot see, with why (said in the docs). */
  unmountedDataFolders: Record<string, string>;
  /** The node container's own variables, where the deployer writes them into the container (no env ConfigMap to share): the sidecar must repeat those fabric-ops reads. */
  nodeEnv?: Record<string, string>;
}

const secret = (name: string, secretName: string): Volume => ({ name, secret: { secretName } });
const configMap = (name: string, configMapName: string): Volume => ({ name, configMap: { name: configMapName } });
const claim = (name: string, claimName: string): Volume => ({ name, persistentVolumeClaim: { claimName } });

/** charts/hlf-peer templates/deployment.yaml, configmap--peer.yaml and secret--*.yaml, for fullname `<fullname>`, release `<release>`. */
function hlfPeer(id: string, fullname: string, release: string): DeployerPod {
  return {
    id,
    dialect: 'peer',
    workload: { kind: 'Deployment', name: fullname },
    podLabels: { app: 'hlf-peer', release },
    volumes: [
      claim('data', fullname),
      configMap('peerconfig', `${fullname}--peer--core`),
      { name: 'dockersocket', hostPath: { path: '/var/run/docker.sock' } },
      secret('id-cert', `${fullname}-idcert`),
      secret('id-key', `${fullname}-idkey`),
      secret('cacert', `${fullname}-cacert`),
      secret('tls-clientrootcert', `${fullname}--tlsclientrootcerts`),
      { name: 'nodeou', configMap: { name: `${fullname}-nodeou`, items: [{ key: 'config.yaml', path: 'config.yaml' }] } },
      secret('tls', `${fullname}-tls`),
      secret('tls-ops', `${fullname}-tls-ops`),
      secret('tls-rootcert', `${fullname}-tlsrootcert`),
      secret('tls-client', `${fullname}-tls`),
    ],
    secrets: {
      [`${fullname}-idcert`]: ['cert.pem'],
      [`${fullname}-idkey`]: ['key.pem'],
      [`${fullname}-cacert`]: ['cacert.pem'],
      [`${fullname}--tlsclientrootcerts`]: ['cert.pem'],
      [`${fullname}-tls`]: ['tls.crt', 'tls.key'],
      [`${fullname}-tls-ops`]: ['tls.crt', 'tls.key'],
      [`${fullname}-tlsrootcert`]: ['cacert.pem'],
    },
    configMaps: {
      [`${fullname}--peer--core`]: { 'core.yaml': '' },
      [`${fullname}-nodeou`]: { 'config.yaml': '' },
      // configmap--peer.yaml with the chart's defaults (peer.tls.server.enabled "true", dockerSocketPath set).
      [`${fullname}--peer`]: {
        CORE_PEER_ID: release,
        CORE_PEER_LISTENADDRESS: '0.0.0.0:7051',
        CORE_PEER_LOCALMSPID: 'Org1MSP',
        CORE_PEER_MSPCONFIGPATH: '/var/hyperledger/msp',
        CORE_OPERATIONS_TLS_ENABLED: 'false',
        CORE_OPERATIONS_TLS_KEY_FILE: '/var/hyperledger/tls/operations/pair/tls.key',
        CORE_OPERATIONS_TLS_CERT_FILE: '/var/hyperledger/tls/operations/pair/tls.crt',
        CORE_OPERATIONS_TLS_CLIENTAUTHREQUIRED: 'false',
        CORE_OPERATIONS_LISTENADDRESS: '0.0.0.0:9443',
        CORE_OPERATIONS_TLS_CLIENTROOTCAS_FILES: '/var/hyperledger/tls/server/cert/cacert.pem',
        CORE_METRICS_PROVIDER: 'prometheus',
        FABRIC_LOGGING_SPEC: 'info',
        CORE_LOGGING_PEER: 'info',
        CORE_PEER_TLS_ENABLED: 'true',
        CORE_PEER_TLS_CERT_FILE: '/var/hyperledger/tls/server/pair/tls.crt',
        CORE_PEER_TLS_KEY_FILE: '/var/hyperledger/tls/server/pair/tls.key',
        CORE_PEER_TLS_ROOTCERT_FILE: '/var/hyperledger/tls/server/cert/cacert.pem',
        CORE_PEER_TLS_CLIENTAUTHREQUIRED: 'false',
        CORE_PEER_TLS_CLIENTROOTCAS_FILES: '/var/hyperledger/tls/client/cert/*',
        CORE_PEER_TLS_CLIENTCERT_FILE: '/var/hyperledger/tls/client/pair/tls.crt',
        CORE_PEER_TLS_CLIENTKEY_FILE: '/var/hyperledger/tls/client/pair/tls.key',
        CORE_VM_ENDPOINT: 'unix:///host/var/run/docker.sock',
        CORE_LEDGER_STATE_STATEDATABASE: 'goleveldb',
        PEER_CFG_PATH: '/var/hyperledger/config',
        FABRIC_CFG_PATH: '/var/hyperledger/fabric_cfg',
      },
    },
    configKey: 'core.yaml',
    // configmap--peer--core.yaml: fileSystemPath and snapshots.rootDir as Fabric's sample; operations.listenAddress 127.0.0.1:9443 (the variable wins).
    fileValues: {},
    nodeOperationsPort: 9443,
    unmountedDataFolders: {},
  };
}

/** charts/hlf-ordnode templates/deployment.yaml, configmap--ord.yaml (channelParticipationEnabled on), configmap--ord--core.yaml and secret--*.yaml. */
function hlfOrdnode(fullname: string, release: string): DeployerPod {
  return {
    id: 'hlf-ordnode',
    dialect: 'orderer',
    workload: { kind: 'Deployment', name: fullname },
    podLabels: { app: 'hlf-ordnode', release },
    volumes: [
      claim('data', fullname),
      secret('id-cert', `${fullname}-idcert`),
      secret('id-key', `${fullname}-idkey`),
      secret('cacert', `${fullname}-cacert`),
      secret('tls', `${fullname}-tls`),
      secret('tls-rootcert', `${fullname}-tlsrootcert`),
      secret('tls-clientrootcert', `${fullname}-peer-tlsrootcert`),
      secret('genesis', `${fullname}--genesis`),
      secret('admin', `${fullname}-admin`),
      { name: 'nodeou', configMap: { name: `${fullname}-nodeou`, items: [{ key: 'config.yaml', path: 'config.yaml' }] } },
      { name: 'config', configMap: { name: `${fullname}--orderer--core`, items: [{ key: 'orderer.yaml', path: 'orderer.yaml' }] } },
    ],
    secrets: {
      [`${fullname}-idcert`]: ['cert.pem'],
      [`${fullname}-idkey`]: ['key.pem'],
      [`${fullname}-cacert`]: ['cacert.pem'],
      [`${fullname}-tls`]: ['tls.crt', 'tls.key'],
      [`${fullname}-tlsrootcert`]: ['cacert.pem'],
      // Keys from the chart's clientcerts value (one per peer organization).
      [`${fullname}-peer-tlsrootcert`]: ['org1.pem'],
      [`${fullname}--genesis`]: ['genesis.block'],
      [`${fullname}-admin`]: ['tls.crt', 'tls.key', 'cacert.crt', 'clientcacert.crt'],
    },
    configMaps: {
      [`${fullname}--orderer--core`]: { 'orderer.yaml': '' },
      [`${fullname}-nodeou`]: { 'config.yaml': '' },
      [`${fullname}--ord`]: {
        FABRIC_CFG_PATH: '/var/hyperledger/fabric/config',
        ORDERER_GENERAL_LEDGERTYPE: 'file',
        ORDERER_FILELEDGER_LOCATION: '/var/hyperledger/ledger',
        ORDERER_GENERAL_LISTENADDRESS: '0.0.0.0',
        ORDERER_GENERAL_LISTENPORT: '7050',
        ORDERER_GENERAL_LOCALMSPDIR: '/var/hyperledger/msp',
        ORDERER_GENERAL_LOCALMSPID: 'OrdererMSP',
        ORDERER_GENERAL_TLS_ENABLED: 'true',
        ORDERER_GENERAL_TLS_CERTIFICATE: '/var/hyperledger/tls/server/pair/tls.crt',
        ORDERER_GENERAL_TLS_PRIVATEKEY: '/var/hyperledger/tls/server/pair/tls.key',
        ORDERER_GENERAL_TLS_ROOTCAS: '/var/hyperledger/tls/server/cert/cacert.pem',
        ORDERER_GENERAL_TLS_CLIENTAUTHREQUIRED: 'false',
        ORDERER_GENERAL_CLUSTER_CLIENTCERTIFICATE: '/var/hyperledger/tls/server/pair/tls.crt',
        ORDERER_GENERAL_CLUSTER_CLIENTPRIVATEKEY: '/var/hyperledger/tls/server/pair/tls.key',
        ORDERER_GENERAL_CLUSTER_ROOTCAS: '/var/hyperledger/tls/server/cert/cacert.pem',
        ORDERER_GENERAL_TLS_CLIENTROOTCAS: '/var/hyperledger/tls/client/cert/*',
        ORDERER_CHANNELPARTICIPATION_ENABLED: 'true',
        ORDERER_ADMIN_TLS_ENABLED: 'true',
        ORDERER_ADMIN_TLS_CERTIFICATE: '/var/hyperledger/admin/tls.crt',
        ORDERER_ADMIN_TLS_PRIVATEKEY: '/var/hyperledger/admin/tls.key',
        ORDERER_ADMIN_TLS_ROOTCAS: '[/var/hyperledger/admin/cacert.crt]',
        ORDERER_ADMIN_TLS_CLIENTROOTCAS: '[/var/hyperledger/admin/clientcacert.crt]',
        ORDERER_ADMIN_LISTENADDRESS: '0.0.0.0:7053',
        FABRIC_LOGGING_SPEC: 'info',
        ORDERER_METRICS_PROVIDER: 'prometheus',
        ORDERER_OPERATIONS_TLS_ENABLED: 'false',
        ORDERER_OPERATIONS_LISTENADDRESS: '0.0.0.0:9444',
      },
    },
    configKey: 'orderer.yaml',
    // configmap--ord--core.yaml: FileLedger.Location, Consensus.WALDir and SnapDir as Fabric's sample.
    fileValues: {},
    nodeOperationsPort: 9444,
    unmountedDataFolders: {},
  };
}

/** fabric-operator's IBPPeer `<name>` (definitions/peer/deployment.yaml with the override's volumes; goleveldb, no HSM, no intermediate CA). */
function fabricOperatorPeer(name: string): DeployerPod {
  return {
    id: 'fabric-operator',
    dialect: 'peer',
    workload: { kind: 'Deployment', name },
    podLabels: {
      app: name,
      creator: 'fabric',
      orgname: 'Org1MSP',
      'app.kubernetes.io/name': 'fabric',
      'app.kubernetes.io/instance': 'fabricpeer',
      'app.kubernetes.io/managed-by': 'fabric-operator',
    },
    volumes: [
      claim('db-data', `${name}-statedb-pvc`),
      claim('fabric-peer-0', `${name}-pvc`),
      secret('ecert-keystore', `ecert-${name}-keystore`),
      secret('ecert-cacerts', `ecert-${name}-cacerts`),
      secret('ecert-signcert', `ecert-${name}-signcert`),
      secret('tls-cacerts', `tls-${name}-cacerts`),
      secret('tls-keystore', `tls-${name}-keystore`),
      secret('tls-signcert', `tls-${name}-signcert`),
      configMap('peer-config', `${name}-config`),
    ],
    secrets: {
      [`ecert-${name}-keystore`]: ['key.pem'],
      [`ecert-${name}-cacerts`]: ['cacert-0.pem'],
      [`ecert-${name}-signcert`]: ['cert.pem'],
      [`tls-${name}-cacerts`]: ['cacert-0.pem'],
      [`tls-${name}-keystore`]: ['key.pem'],
      [`tls-${name}-signcert`]: ['cert.pem'],
    },
    configMaps: { [`${name}-config`]: { 'core.yaml': '', 'config.yaml': '' } },
    configKey: 'core.yaml',
    // defaultconfig/peer/v25/core.yaml: peer.mspConfigPath msp, peer.tls.* relative (tls/...), the rest as the sample.
    fileValues: {
      CORE_PEER_TLS_CERT_FILE: 'tls/server.crt',
      CORE_PEER_TLS_ROOTCERT_FILE: 'tls/ca.crt',
      CORE_PEER_TLS_CLIENTROOTCAS_FILES: 'tls/ca.crt',
    },
    nodeOperationsPort: 9443,
    // definitions/peer/deployment.yaml's peer container, with CreateDeployment's CORE_PEER_TLS_ROOTCERT_FILE and
    // CORE_OPERATIONS_TLS_CLIENTROOTCAS_FILES (every key of tls-<name>-cacerts: one here).
    nodeEnv: {
      CORE_PEER_LISTENADDRESS: '0.0.0.0:7051',
      CORE_PEER_CHAINCODELISTENADDRESS: '0.0.0.0:7052',
      CORE_PEER_MSPCONFIGPATH: '/certs/msp',
      CORE_PEER_FILESYSTEMPATH: '/data/peer/',
      CORE_PEER_TLS_ENABLED: 'true',
      CORE_PEER_TLS_CERT_FILE: '/certs/tls/signcerts/cert.pem',
      CORE_PEER_TLS_KEY_FILE: '/certs/tls/keystore/key.pem',
      CORE_PEER_TLS_ROOTCERT_FILE: '/certs/msp/tlscacerts/cacert-0.pem',
      FABRIC_CFG_PATH: '/certs',
      CORE_OPERATIONS_LISTENADDRESS: '0.0.0.0:9443',
      CORE_OPERATIONS_TLS_ENABLED: 'true',
      CORE_OPERATIONS_TLS_CERT_FILE: '/certs/tls/signcerts/cert.pem',
      CORE_OPERATIONS_TLS_KEY_FILE: '/certs/tls/keystore/key.pem',
      CORE_OPERATIONS_TLS_CLIENTAUTHREQUIRED: 'false',
      CORE_OPERATIONS_TLS_CLIENTROOTCAS_FILES: '/certs/msp/tlscacerts/cacert-0.pem',
      CORE_PEER_ID: name,
      CORE_PEER_LOCALMSPID: 'Org1MSP',
      CORE_LEDGER_STATE_STATEDATABASE: 'goleveldb',
    },
    unmountedDataFolders: {
      'ledger.snapshots.rootDir':
        "fabric-operator's core.yaml keeps snapshots in the peer container's own file system (/var/hyperledger/production/snapshots), on no volume",
    },
  };
}

export const deployerPods: readonly DeployerPod[] = [
  hlfPeer('hlf-peer', 'org1-peer0-hlf-peer', 'org1-peer0'),
  hlfOrdnode('orderer0-hlf-ordnode', 'orderer0'),
  // hlf-operator: the FabricPeer org1-peer0, installed as release org1-peer0 with fullnameOverride org1-peer0.
  hlfPeer('hlf-operator', 'org1-peer0', 'org1-peer0'),
  fabricOperatorPeer('org1peer1'),
];
