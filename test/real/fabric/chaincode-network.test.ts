import { rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { EndorseError, type Contract } from '@hyperledger/fabric-gateway';
import { request, type HttpAnswer } from '../../support/http';
import { createTestPki, type TestPki } from '../../support/pki';
import { freeTcpPort } from '../../support/ports';
import {
  buildChaincodeProject,
  channelName,
  loggedOperationsUrl,
  startChaincodeServer,
  startFabricNetwork,
  waitForDaemon,
  waitForPort,
  type ChaincodeProject,
  type Daemon,
  type FabricNetwork,
} from '../../support/fabric-network';

/**
 * The example chaincode (examples/chaincode-as-a-service, fabric-ops embedded) deployed as a
 * `ccaas` chaincode on a real Fabric 2.5 network on loopback, driven with the Fabric Gateway
 * client, and observed only through its operations endpoints over mutual TLS. Twice: plain
 * gRPC between peer and chaincode, and mutual TLS between them (the recipe's CC_TLS=1).
 */

jest.setTimeout(240_000);

let pki: TestPki;
let network: FabricNetwork;
let project: ChaincodeProject;
const chaincodes: Daemon[] = [];

beforeAll(async () => {
  // Each is kept as soon as it exists, so that afterAll stops whatever did start.
  await Promise.all([
    createTestPki().then((made) => (pki = made)),
    startFabricNetwork().then((made) => (network = made)),
    buildChaincodeProject().then((made) => (project = made)),
  ]);
});

afterAll(async () => {
  for (const chaincode of chaincodes) await chaincode.stop();
  await network?.stop();
  await project?.cleanup();
  await pki?.cleanup();
  if (network) await rm(network.dir, { recursive: true, force: true });
});

/** `name{labels} value` lines of a Prometheus text exposition. */
interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

function parseExposition(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match) throw new Error(`not an exposition line: ${line}`);
    const labels: Record<string, string> = {};
    for (const pair of (match[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) labels[pair[1] as string] = pair[2] as string;
    samples.push({ name: match[1] as string, labels, value: Number(match[3]) });
  }
  return samples;
}

interface Deployment {
  name: string;
  ccTls: boolean;
  /** The operations server's own setting: with it, even /healthz needs a client certificate. */
  clientAuthRequired: boolean;
}

const deployments: Deployment[] = [
  { name: 'kv', ccTls: false, clientAuthRequired: false },
  { name: 'kvtls', ccTls: true, clientAuthRequired: true },
];

describe.each(deployments)('chaincode $name (peer-chaincode TLS: $ccTls) with fabric-ops embedded', ({ name, ccTls, clientAuthRequired }) => {
  let chaincode: Daemon;
  let opsUrl: string;
  let contract: Contract;
  let maintenanceFile: string;

  const ops = (route: string, init: { method?: string; body?: string; withClientCert?: boolean } = {}): Promise<HttpAnswer> =>
    request(`${opsUrl}${route}`, {
      method: init.method,
      body: init.body,
      ca: pki.serverCA.certPem,
      client: init.withClientCert === false ? undefined : pki.client,
    });

  const transactionSamples = async (): Promise<Sample[]> => {
    const answer = await ops('/metrics');
    expect(answer.status).toBe(200);
    return parseExposition(answer.body).filter((sample) => sample.name.startsWith('chaincode_'));
  };

  const value = (samples: Sample[], metric: string, labels: Record<string, string>): number | undefined =>
    samples.find(
      (sample) =>
        sample.name === metric &&
        Object.entries(labels).every(([key, v]) => sample.labels[key] === v) &&
        Object.keys(sample.labels).length === Object.keys(labels).length,
    )?.value;

  const health = async (): Promise<HttpAnswer> => ops('/healthz', { withClientCert: clientAuthRequired });

  beforeAll(async () => {
    // The chaincode port is probed: the peer must be told it before the server starts, and the
    // chaincode server logs the address it was given, not the one bound. The operations server
    // binds port 0 and its "listening on" line says where.
    // Without a network (no release: the outer beforeAll failed with the opt-in line) nothing to add to it.
    if (network === undefined) return;
    const ccPort = await freeTcpPort();
    maintenanceFile = path.join(network.dir, `${name}-maintenance`);
    const tls = ccTls ? await network.issueChaincodeServerTls(name) : undefined;
    await network.deployCcaas({
      name,
      port: ccPort,
      tls: ccTls,
      start: async (packageId) => {
        chaincode = startChaincodeServer({
          project,
          name: `chaincode-${name}`,
          port: ccPort,
          packageId,
          tls,
          logFile: path.join(network.dir, `chaincode-${name}.log`),
          env: {
            CORE_OPERATIONS_LISTENADDRESS: '127.0.0.1:0',
            CORE_OPERATIONS_TLS_ENABLED: 'true',
            CORE_OPERATIONS_TLS_CERT_FILE: pki.server.cert,
            CORE_OPERATIONS_TLS_KEY_FILE: pki.server.key,
            CORE_OPERATIONS_TLS_CLIENTAUTHREQUIRED: String(clientAuthRequired),
            CORE_OPERATIONS_TLS_CLIENTROOTCAS_FILES: pki.clientCA.cert,
            FABRIC_OPS_CHAINCODE_REGISTRATION_TIMEOUT: '120s',
            KV_MAINTENANCE_FILE: maintenanceFile,
          },
        });
        chaincodes.push(chaincode);
        await waitForPort(ccPort, chaincode);
        opsUrl = await loggedOperationsUrl(chaincode);
        // Listening, no peer yet, within the registration time: healthy.
        const early = await health();
        expect({ status: early.status, body: early.json }).toMatchObject({ status: 200, body: { status: 'OK' } });
      },
    });
    contract = (await network.gateway()).getNetwork(channelName).getContract(name);
  });

  test('counts, times and tracks every transaction by channel, contract, function and outcome', async () => {
    for (let i = 0; i < 5; i++) await contract.submitTransaction('put', `key${i}`, `value${i}`);
    for (let i = 0; i < 3; i++) await expect(contract.submitTransaction('fail', `reason ${i}`)).rejects.toThrow(EndorseError);
    for (let i = 0; i < 2; i++) await expect(contract.submitTransaction('nosuch', 'x')).rejects.toThrow(EndorseError);
    for (let i = 0; i < 4; i++) expect(Buffer.from(await contract.evaluateTransaction('get', `key${i}`)).toString()).toBe(`value${i}`);
    const missing = await contract.evaluateTransaction('get', 'missing').then(
      () => null,
      (error: unknown) => error,
    );
    expect(JSON.stringify((missing as { details?: unknown })?.details)).toMatch(/key missing does not exist/);
    await expect(contract.evaluateTransaction('other:get', 'key0')).rejects.toThrow();

    const samples = await transactionSamples();
    const expected: Array<[string, string, string, number]> = [
      ['kv', 'put', 'success', 5],
      ['kv', 'fail', 'error', 3],
      ['kv', 'unknown', 'unknown_function', 2],
      ['kv', 'get', 'success', 4],
      ['kv', 'get', 'error', 1],
      ['unknown', 'unknown', 'unknown_function', 1],
    ];
    for (const [contractName, fn, outcome, count] of expected) {
      const labels = { channel: channelName, contract: contractName, function: fn, outcome };
      expect({ labels, total: value(samples, 'chaincode_transactions_total', labels) }).toEqual({ labels, total: count });
      expect({ labels, count: value(samples, 'chaincode_transaction_duration_seconds_count', labels) }).toEqual({ labels, count });
      expect(value(samples, 'chaincode_transaction_duration_seconds_sum', labels)).toBeGreaterThan(0);
      expect(value(samples, 'chaincode_transaction_duration_seconds_bucket', { ...labels, le: '+Inf' })).toBe(count);
    }
    // Nothing else was counted, and nothing is running any more.
    const totals = samples.filter((sample) => sample.name === 'chaincode_transactions_total');
    expect(totals.reduce((sum, sample) => sum + sample.value, 0)).toBe(16);
    const inFlight = samples.filter((sample) => sample.name === 'chaincode_transactions_in_flight');
    expect(inFlight.length).toBeGreaterThan(0);
    expect(inFlight.map((sample) => sample.value)).toEqual(inFlight.map(() => 0));
  });

  test('/metrics and /logspec need the client certificate', async () => {
    if (clientAuthRequired) {
      await expect(ops('/metrics', { withClientCert: false })).rejects.toThrow();
    } else {
      expect((await ops('/metrics', { withClientCert: false })).status).toBe(401);
      expect((await ops('/logspec', { withClientCert: false })).status).toBe(401);
    }
  });

  test("/healthz: the chaincode server and its peer, plus the author's own checker", async () => {
    const ok = await health();
    expect({ status: ok.status, body: ok.json }).toMatchObject({ status: 200, body: { status: 'OK' } });

    await writeFile(maintenanceFile, 'draining for upgrade\n');
    const drained = await health();
    expect({ status: drained.status, body: drained.json }).toMatchObject({
      status: 503,
      body: { status: 'Service Unavailable', failed_checks: [{ component: 'kv.maintenance', reason: 'maintenance: draining for upgrade' }] },
    });
    await rm(maintenanceFile);
    expect((await health()).status).toBe(200);
  });

  test('PUT /logspec shows the shim protocol messages, and the contract logger, without a restart', async () => {
    const protocolLine = /\[c-api:lib\/handler\.js\].*Received chat message from peer/;
    const contractLine = new RegExp(`\\[c-api:kv\\].*put spec-${name}`);
    const newOutput = (before: number): string => chaincode.output().slice(before);

    expect((await ops('/logspec')).json).toEqual({ spec: 'info' });
    let mark = chaincode.output().length;
    await contract.submitTransaction('put', `spec-${name}`, 'a');
    expect(newOutput(mark)).not.toMatch(protocolLine);
    expect(newOutput(mark)).not.toMatch(contractLine);

    expect((await ops('/logspec', { method: 'PUT', body: JSON.stringify({ spec: 'shim=debug:info' }) })).status).toBe(204);
    mark = chaincode.output().length;
    await contract.submitTransaction('put', `spec-${name}`, 'b');
    await waitForDaemon('shim debug lines in the chaincode output', () => protocolLine.test(newOutput(mark)), chaincode, 5000);
    expect(newOutput(mark)).not.toMatch(contractLine);

    expect((await ops('/logspec', { method: 'PUT', body: JSON.stringify({ spec: 'kv=debug:info' }) })).status).toBe(204);
    mark = chaincode.output().length;
    await contract.submitTransaction('put', `spec-${name}`, 'c');
    await waitForDaemon('the contract debug line in the chaincode output', () => contractLine.test(newOutput(mark)), chaincode, 5000);
    expect(newOutput(mark)).not.toMatch(protocolLine);

    expect((await ops('/logspec', { method: 'PUT', body: JSON.stringify({ spec: 'info' }) })).status).toBe(204);
    mark = chaincode.output().length;
    await contract.submitTransaction('put', `spec-${name}`, 'd');
    await contract.evaluateTransaction('get', `spec-${name}`);
    expect(newOutput(mark)).not.toMatch(protocolLine);
    expect(newOutput(mark)).not.toMatch(contractLine);
    // The change is logged by fabric-ops itself.
    expect(chaincode.output()).toMatch(/logging specification changed from 'info' to 'shim=debug:info'/);
  });

  test('/healthz is 503 with a reason while the peer is stopped, and 200 again once it is back', async () => {
    await network.stopPeer();
    let down: HttpAnswer | undefined;
    await waitForDaemon(
      '/healthz to fail after the peer stopped',
      async () => {
        down = await health();
        return down.status === 503;
      },
      chaincode,
      15_000,
    );
    expect(down?.json).toMatchObject({
      status: 'Service Unavailable',
      failed_checks: [
        {
          component: 'chaincode',
          reason: expect.stringMatching(
            /^no peer is connected: the stream from the peer at .* ended .* ago \(.*\); a peer connects again by itself when it starts, or when it next runs this chaincode$/,
          ),
        },
      ],
    });

    const totalBefore = (await transactionSamples()).filter((s) => s.name === 'chaincode_transactions_total').reduce((sum, s) => sum + s.value, 0);
    await network.restartPeer();
    // A 2.5 peer connects to its ccaas chaincodes when it starts: no transaction is needed for
    // /healthz to pass again.
    await waitForDaemon('/healthz to pass again after the peer restarted, with no transaction', async () => (await health()).status === 200, chaincode, 90_000);
    const totalAfter = (await transactionSamples()).filter((s) => s.name === 'chaincode_transactions_total').reduce((sum, s) => sum + s.value, 0);
    expect(totalAfter).toBe(totalBefore);
    expect(Buffer.from(await contract.evaluateTransaction('get', 'key0')).toString()).toBe('value0');
    const samples = await transactionSamples();
    expect(samples.filter((s) => s.name === 'chaincode_transactions_in_flight').every((s) => s.value === 0)).toBe(true);
  });
});
