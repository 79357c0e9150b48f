import { readFileSync } from 'node:fs';
import { mkdir, mkdtemp, writeFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { enableChaincodeOperations } from '../../../src/chaincode';
import { chaincodeConfigEnv } from '../../../src/chaincode/settings';
import { request } from '../../support/http';
import { LogCapture } from '../../support/log-capture';

/**
 * Issue 21 item 3: a chaincode started from a peer CLI's environment loaded the peer's core.yaml
 * through FABRIC_CFG_PATH (`metrics.provider: disabled`, so /metrics 404), and
 * FABRIC_LOGGING_SPEC=warning hid the one line naming the source.
 */

const fabricSampleConfig = path.resolve(__dirname, '../../../../shared/fixtures/fabric-sampleconfig');
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'fabric-ops-cc-config-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const listen = { CORE_OPERATIONS_LISTENADDRESS: '127.0.0.1:0' };

test("FABRIC_CFG_PATH at a peer's core.yaml (Fabric's sample): refused, naming the variable, the file and what to do", () => {
  let thrown: unknown;
  const reported: unknown[] = [];
  try {
    const operations = enableChaincodeOperations({
      env: { ...listen, FABRIC_CFG_PATH: fabricSampleConfig },
      logStream: new LogCapture(),
      handleSignals: false,
      onStartError: (error) => reported.push(error),
    });
    void operations.stop();
  } catch (error) {
    thrown = error;
  }
  // Given to onStartError first (whose default prints it and exits: test/integration/chaincode/start.test.ts), then thrown.
  expect(reported).toEqual([thrown]);
  expect(thrown).toBeInstanceOf(Error);
  expect((thrown as Error).name).toBe('ConfigError');
  expect((thrown as Error).message).toBe(
    `FABRIC_CFG_PATH=${fabricSampleConfig}: ${fabricSampleConfig}/core.yaml is a peer's configuration (it has peer.gossip, peer.fileSystemPath, peer.address, peer.id, ledger, vm, chaincode); ` +
      "a chaincode does not take a peer's configuration: unset FABRIC_CFG_PATH for the chaincode, or name the chaincode's own file in FABRIC_OPS_CHAINCODE_CONFIG (read whatever it holds)",
  );
});

test("FABRIC_CFG_PATH at a core.yaml that is not plainly a peer's: read, with a warning that shows even under FABRIC_LOGGING_SPEC=error", async () => {
  const cfgDir = path.join(dir, 'shared');
  await mkdir(cfgDir);
  await writeFile(path.join(cfgDir, 'core.yaml'), 'metrics:\n  provider: prometheus\n');
  const logs = new LogCapture();
  const operations = enableChaincodeOperations({
    env: { ...listen, FABRIC_CFG_PATH: cfgDir, FABRIC_LOGGING_SPEC: 'error' },
    logStream: logs,
    handleSignals: false,
  });
  try {
    const system = await operations.ready;
    expect(system.configSource).toBe(`core.yaml at ${cfgDir}/core.yaml (peer dialect)`);
    expect(logs.matching(/FABRIC_CFG_PATH/)).toEqual([
      `fabric-ops: warning: the operations configuration comes from FABRIC_CFG_PATH=${cfgDir}, the peer's variable, not the chaincode's own; ` +
        "name the chaincode's file in FABRIC_OPS_CHAINCODE_CONFIG (or unset FABRIC_CFG_PATH for the embedded defaults)",
    ]);
  } finally {
    await operations.stop();
  }
});

test("FABRIC_OPS_CHAINCODE_CONFIG names the chaincode's own file (even a peer's core.yaml), wins over FABRIC_CFG_PATH, no warning", async () => {
  const logs = new LogCapture();
  const operations = enableChaincodeOperations({
    env: {
      ...listen,
      FABRIC_OPS_CHAINCODE_CONFIG: path.join(fabricSampleConfig, 'core.yaml'),
      FABRIC_CFG_PATH: '/nonexistent',
      CORE_METRICS_PROVIDER: 'prometheus',
    },
    logStream: logs,
    handleSignals: false,
  });
  try {
    const system = await operations.ready;
    expect(system.configSource).toBe(`core.yaml at ${fabricSampleConfig}/core.yaml (peer dialect)`);
    expect((await request(`${system.url}/metrics`)).status).toBe(200);
    expect(logs.matching(/FABRIC_CFG_PATH/)).toEqual([]);
  } finally {
    await operations.stop();
  }
});

test('no file at all: the embedded defaults with the chaincode defaults (/metrics on), no warning', async () => {
  const logs = new LogCapture();
  const operations = enableChaincodeOperations({ env: listen, logStream: logs, handleSignals: false });
  try {
    const system = await operations.ready;
    expect(system.configSource).toBe('embedded peer defaults');
    expect((await request(`${system.url}/metrics`)).status).toBe(200);
    expect(logs.matching(/warn/i)).toEqual([]);
  } finally {
    await operations.stop();
  }
});

describe('the chaincode default operations address', () => {
  test("the default operations address is none of Fabric's defaults (the sample core.yaml and orderer.yaml, fabric-ca, CouchDB)", () => {
    const address = chaincodeConfigEnv({}, false).CORE_OPERATIONS_LISTENADDRESS ?? '';
    expect(address).toBe('127.0.0.1:9998');
    const text = readFileSync(path.join(fabricSampleConfig, 'core.yaml'), 'utf8') + readFileSync(path.join(fabricSampleConfig, 'orderer.yaml'), 'utf8');
    const fabricPorts = new Set(
      [...text.matchAll(/^\s*(?:listenAddress|ListenAddress|chaincodeListenAddress|address|ListenPort):\s*(?:[\d.]+:)?(\d+)\s*$/gm)].map((m) => m[1]),
    );
    for (const port of ['7050', '7051', '7052', '7053', '7054', '8443', '9443', '6060', '5984']) fabricPorts.add(port);
    expect(fabricPorts.has('9443')).toBe(true);
    expect(fabricPorts.has(address.split(':')[1] ?? '')).toBe(false);
  });
});
