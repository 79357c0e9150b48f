import { Writable } from 'node:stream';
import { enableChaincodeOperations, type ChaincodeOperations } from '../../../src/chaincode';
import type { ShimChaincode, ShimModule, ShimServer, ShimStub } from '../../../src/chaincode/shim-types';
import { FakePeer } from '../../support/chaincode-peer';
import { request } from '../../support/http';
import { freeTcpPort } from '../../support/ports';

/**
 * Issue 18 item 6: on a chaincode written on plain Init/Invoke, the client's first argument is
 * the `function` label. Driven through fabric-shim's real server, handler and stub by a peer
 * speaking the chaincode protocol over gRPC (test/support/chaincode-peer.ts).
 */

// eslint-disable-next-line @typescript-eslint/no-require-imports -- the real fabric-shim, as a chaincode loads it
const shim = require('fabric-shim') as ShimModule & {
  success(payload?: Buffer): { status: number };
  error(message: string): { status: number };
};

type Stub = ShimStub & { getFunctionAndParameters(): { fcn: string; params: string[] } };

/** A plain chaincode that has `put` and `get` and answers anything else with an error, as most do. */
const plain: ShimChaincode = {
  Init: async () => shim.success(),
  Invoke: async (stub) => {
    const { fcn } = (stub as Stub).getFunctionAndParameters();
    return fcn === 'put' || fcn === 'get' ? shim.success(Buffer.from('ok')) : shim.error(`no function ${fcn}`);
  },
};

/** A plain chaincode that succeeds whatever it is asked (its dispatch is not ours to judge). */
const echo: ShimChaincode = { Init: async () => shim.success(), Invoke: async () => shim.success() };

interface Sample {
  labels: Record<string, string>;
  value: number;
}

function samples(exposition: string, metric: string): Sample[] {
  const found: Sample[] = [];
  for (const line of exposition.split('\n')) {
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match || match[1] !== metric) continue;
    const labels: Record<string, string> = {};
    for (const pair of (match[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) labels[pair[1] as string] = pair[2] as string;
    found.push({ labels, value: Number(match[3]) });
  }
  return found;
}

jest.setTimeout(120_000);

let operations: ChaincodeOperations;
let metricsUrl: string;
const peers: FakePeer[] = [];
const servers: ShimServer[] = [];

async function serve(chaincode: ShimChaincode, ccid: string): Promise<FakePeer> {
  // Probed, not port 0: fabric-shim's ChaincodeServer.start() resolves with nothing and only
  // debug-logs the port gRPC bound, so the peer could not be told where to dial.
  const port = await freeTcpPort();
  const server: ShimServer = shim.server(chaincode, { ccid, address: `127.0.0.1:${port}` });
  await server.start();
  servers.push(server);
  const peer = new FakePeer(`127.0.0.1:${port}`);
  peers.push(peer);
  await peer.ready;
  return peer;
}

async function scrape(): Promise<string> {
  const answer = await request(metricsUrl);
  expect(answer.status).toBe(200);
  return answer.body;
}

/** `count` transactions, at most 50 at a time. */
async function invokeAll(peer: FakePeer, names: readonly string[], kind: 'transaction' | 'init' = 'transaction'): Promise<void> {
  for (let i = 0; i < names.length; i += 50) {
    await Promise.all(names.slice(i, i + 50).map((name) => peer.invoke('ch1', [name, 'x'], kind)));
  }
}

beforeAll(async () => {
  operations = enableChaincodeOperations({
    env: {
      CORE_OPERATIONS_LISTENADDRESS: '127.0.0.1:0',
      FABRIC_LOGGING_SPEC: 'shim=fatal:warn',
      FABRIC_OPS_CHAINCODE_MAX_FUNCTIONS: '5',
    },
    logStream: new Writable({ write: (_chunk, _encoding, done) => done() }),
  });
  const system = await operations.ready;
  metricsUrl = `${system.url}/metrics`;
});

afterAll(async () => {
  for (const peer of peers) peer.close();
  // fabric-shim's ChaincodeServer has no stop(): its gRPC server is shut here.
  for (const server of servers) (server as unknown as { _server: { forceShutdown(): void } })._server.forceShutdown();
  await operations?.stop();
});

test('names the chaincode does not answer with success get no series of their own: 2,000 names, one `other` series', async () => {
  const peer = await serve(plain, 'plain:1');
  expect(await peer.invoke('ch1', ['put', 'k', 'v'])).toMatchObject({ kind: 'completed', status: 200 });
  expect(await peer.invoke('ch1', ['get', 'k'])).toMatchObject({ kind: 'completed', status: 200 });
  const garbage = Array.from({ length: 2000 }, (_, i) => `attacker-${i}`);
  await invokeAll(peer, garbage);
  await invokeAll(peer, garbage.slice(0, 100), 'init');
  expect(await peer.invoke('ch1', ['put', 'k', 'v2'])).toMatchObject({ kind: 'completed', status: 200 });

  const totals = samples(await scrape(), 'chaincode_transactions_total');
  const functions = new Set(totals.map((sample) => sample.labels.function));
  expect([...functions].sort()).toEqual(['get', 'other', 'put']);
  const value = (fn: string, outcome: string): number | undefined =>
    totals.find((s) => s.labels.function === fn && s.labels.outcome === outcome && s.labels.channel === 'ch1' && s.labels.contract === '')?.value;
  expect(value('put', 'success')).toBe(2);
  expect(value('get', 'success')).toBe(1);
  expect(value('other', 'error')).toBe(2000);
  // This chaincode's Init succeeds whatever it is given: Init admits no name.
  expect(value('other', 'success')).toBe(100);
  expect(samples(await scrape(), 'chaincode_function_names_overflow_total')).toEqual([{ labels: {}, value: 0 }]);
  expect(totals.length).toBeLessThanOrEqual(5 * 3 + 3);
});

test('names past the cap (FABRIC_OPS_CHAINCODE_MAX_FUNCTIONS) or too long are `other`, and counted as overflow', async () => {
  const peer = await serve(echo, 'echo:1');
  const before = samples(await scrape(), 'chaincode_transactions_total').filter((s) => s.labels.function !== 'other');
  const admitted = new Set(before.map((s) => s.labels.function));
  const names = Array.from({ length: 20 }, (_, i) => `fn${i}`);
  await invokeAll(peer, names);
  expect(await peer.invoke('ch1', ['f'.repeat(129)])).toMatchObject({ kind: 'completed', status: 200 });
  expect(await peer.invoke('ch1', ['g'.repeat(1024 * 1024)])).toMatchObject({ kind: 'completed', status: 200 });

  const exposition = await scrape();
  expect(exposition.length).toBeLessThan(100_000);
  const totals = samples(exposition, 'chaincode_transactions_total');
  const functions = new Set(totals.map((sample) => sample.labels.function));
  expect(functions.size).toBeLessThanOrEqual(5 + 1);
  expect(functions.has('other')).toBe(true);
  const newlyAdmitted = [...functions].filter((fn) => fn !== 'other' && !admitted.has(fn));
  expect(newlyAdmitted.length).toBe(5 - admitted.size);
  const overflow = samples(exposition, 'chaincode_function_names_overflow_total');
  expect(overflow).toEqual([{ labels: {}, value: 20 - newlyAdmitted.length + 2 }]);
  const otherSuccess = totals.filter((s) => s.labels.function === 'other' && s.labels.outcome === 'success').reduce((sum, s) => sum + s.value, 0);
  expect(otherSuccess).toBeGreaterThanOrEqual(20 - newlyAdmitted.length + 2);
  // Every function label, in every chaincode metric, is bounded.
  for (const metric of ['chaincode_transactions_in_flight', 'chaincode_transaction_duration_seconds_count']) {
    for (const sample of samples(exposition, metric)) expect(sample.labels.function?.length ?? 0).toBeLessThanOrEqual(128);
  }
});
