import { ConfigError } from '../../../src/errors';
import { fabricLoggerName, winstonLevel } from '../../../src/chaincode/logger-names';
import { ChaincodeServerState } from '../../../src/chaincode/server-state';
import { chaincodeConfigEnv, chaincodeHealthSettings, chaincodeMaxFunctionNames } from '../../../src/chaincode/settings';
import { outcomeOf, resolveFunction, type ContractCatalogue, type RunningTransaction } from '../../../src/chaincode/transactions';

const catalogue: ContractCatalogue = {
  defaultContract: 'kv',
  functions: new Map([
    ['kv', new Set(['put', 'get'])],
    ['org.hyperledger.fabric', new Set(['GetMetadata'])],
  ]),
};

describe('resolveFunction: labels as fabric-shim routes the first argument', () => {
  test.each([
    ['put', { contract: 'kv', function: 'put', known: true }],
    ['kv:get', { contract: 'kv', function: 'get', known: true }],
    [':get', { contract: 'kv', function: 'get', known: true }],
    ['org.hyperledger.fabric:GetMetadata', { contract: 'org.hyperledger.fabric', function: 'GetMetadata', known: true }],
    ['nosuch', { contract: 'kv', function: 'unknown', known: false }],
    ['other:get', { contract: 'unknown', function: 'unknown', known: false }],
    ['kv:get:x', { contract: 'kv', function: 'unknown', known: false }],
  ])('%s', (first, expected) => {
    expect(resolveFunction(catalogue, first)).toEqual(expected);
  });

  test('no arguments: the default contract, no function; a plain ChaincodeInterface: the name as given', () => {
    expect(resolveFunction(catalogue, undefined)).toEqual({ contract: 'kv', function: '', known: true });
    expect(resolveFunction(null, 'transfer')).toEqual({ contract: '', function: 'transfer', known: true });
  });

  test('outcome: status below 400 succeeds, unknown names win over the status', () => {
    const known = { contract: 'kv', function: 'put', known: true };
    expect(outcomeOf(known, { status: 200 })).toBe('success');
    expect(outcomeOf(known, { status: 400 })).toBe('error');
    expect(outcomeOf(known, { status: 500, message: 'x' })).toBe('error');
    expect(outcomeOf(known, undefined)).toBe('error');
    expect(outcomeOf({ ...known, known: false }, { status: 200 })).toBe('unknown_function');
  });
});

describe('fabricLoggerName', () => {
  test.each([
    ['shim', 'lib/handler.js', 'shim.handler'],
    ['shim', 'contracts-spi/chaincodefromcontract.js', 'shim.chaincodefromcontract'],
    ['shim', 'fabric-shim/cli', 'shim.cli'],
    ['shim', '_', 'shim'],
    ['shim', '', 'shim'],
    ['shim', 'kv', 'kv'],
    ['shim', 'kv:audit', 'kv.audit'],
    ['shim', 'org.example.kv:a b', 'org.example.kv.a_b'],
    ['contractapi', './lib/annotations/transaction.js', 'contractapi.transaction'],
  ] as const)('%s %s -> %s', (source, name, expected) => {
    expect(fabricLoggerName(source, name)).toBe(expected);
  });

  test('levels above error silence winston', () => {
    expect(winstonLevel('payload')).toEqual({ level: 'debug', silent: false });
    expect(winstonLevel('warn')).toEqual({ level: 'warn', silent: false });
    expect(winstonLevel('fatal')).toEqual({ level: 'error', silent: true });
  });
});

describe('ChaincodeServerState.check', () => {
  let now = 0;
  const clock = (): number => now;
  const make = (): ChaincodeServerState => new ChaincodeServerState({ registrationTimeoutMs: 30_000, stuckTimeoutMs: 60_000 }, { now: clock });
  beforeEach(() => {
    now = 1000;
  });

  test('before the server exists, while it binds, and when it could not', () => {
    const state = make();
    expect(state.check(undefined)).toEqual({ ok: false, reason: 'the chaincode server has not been created (fabric-shim server() was not called)' });
    const server = state.serverStarting('127.0.0.1:9999');
    expect(state.check(undefined)).toEqual({ ok: false, reason: 'the chaincode server is not listening yet on 127.0.0.1:9999' });
    state.serverFailed(server, new Error('No address added out of total 1 resolved'));
    expect(state.check(undefined)).toEqual({
      ok: false,
      reason: 'the chaincode server could not listen on 127.0.0.1:9999: No address added out of total 1 resolved',
    });
  });

  test('no peer: fine within the registration time, failing after it', () => {
    const state = make();
    state.serverListening(state.serverStarting('0.0.0.0:9999'));
    now += 30_000;
    expect(state.check(undefined)).toEqual({ ok: true });
    now += 1;
    expect(state.check(undefined)).toEqual({
      ok: false,
      reason: 'no peer has connected and registered within 30s of the chaincode server listening on 0.0.0.0:9999',
    });
  });

  test('a peer that connects but does not register, then registers, then goes away', () => {
    const state = make();
    state.serverListening(state.serverStarting('0.0.0.0:9999'));
    const stream = state.streamOpened('ipv4:10.0.0.7:51234');
    now += 31_000;
    expect(state.check(undefined)).toEqual({ ok: false, reason: 'the peer at ipv4:10.0.0.7:51234 connected 31s ago but has not registered within 30s' });
    state.streamRegistered(stream);
    state.streamReady(stream);
    expect(state.check(undefined)).toEqual({ ok: true });
    state.streamClosed(stream, 'cancelled: the connection to the peer was lost');
    now += 2500;
    expect(state.check(undefined)).toEqual({
      ok: false,
      reason:
        'no peer is connected: the stream from the peer at ipv4:10.0.0.7:51234 ended 2.5s ago (cancelled: the connection to the peer was lost); a peer connects again by itself when it starts, or when it next runs this chaincode',
    });
    state.streamReady(state.streamOpened('ipv4:10.0.0.7:51300'));
    expect(state.check(undefined)).toEqual({ ok: true });
  });

  test('a transaction running past the stuck limit fails the check with its id', () => {
    const state = make();
    const server = state.serverStarting('0.0.0.0:9999');
    state.serverListening(server);
    state.streamReady(state.streamOpened('peer'));
    const running: RunningTransaction = { txId: 'abc123', channel: 'mychannel', contract: 'kv', function: 'put', startedAt: now };
    now += 60_000;
    expect(state.check(running)).toEqual({ ok: true });
    now += 15_000;
    expect(state.check(running)).toEqual({
      ok: false,
      reason: 'the peer stream is stuck: transaction abc123 on channel mychannel (kv:put) has been running for 75s (limit 60s)',
    });
  });
});

describe('chaincode settings', () => {
  test('options win over the environment; durations in Go syntax; problems name the variable', () => {
    expect(chaincodeHealthSettings({}, {})).toEqual({ registrationTimeoutMs: 60_000, stuckTimeoutMs: 60_000 });
    expect(chaincodeHealthSettings({}, { FABRIC_OPS_CHAINCODE_REGISTRATION_TIMEOUT: '1m30s', FABRIC_OPS_CHAINCODE_STUCK_TIMEOUT: '45s' })).toEqual({
      registrationTimeoutMs: 90_000,
      stuckTimeoutMs: 45_000,
    });
    expect(chaincodeHealthSettings({ stuckTimeoutMs: 1000 }, { FABRIC_OPS_CHAINCODE_STUCK_TIMEOUT: '45s' }).stuckTimeoutMs).toBe(1000);
    expect(() => chaincodeHealthSettings({}, { FABRIC_OPS_CHAINCODE_STUCK_TIMEOUT: '45' })).toThrow(ConfigError);
    expect(() => chaincodeHealthSettings({}, { FABRIC_OPS_CHAINCODE_STUCK_TIMEOUT: '45' })).toThrow(
      /^FABRIC_OPS_CHAINCODE_STUCK_TIMEOUT: "45" is not a duration/,
    );
  });

  test('the cap on plain-chaincode function names: option, then FABRIC_OPS_CHAINCODE_MAX_FUNCTIONS, then 100; bad values named', () => {
    expect(chaincodeMaxFunctionNames({}, {})).toBe(100);
    expect(chaincodeMaxFunctionNames({}, { FABRIC_OPS_CHAINCODE_MAX_FUNCTIONS: '20' })).toBe(20);
    expect(chaincodeMaxFunctionNames({ maxFunctionNames: 0 }, { FABRIC_OPS_CHAINCODE_MAX_FUNCTIONS: '20' })).toBe(0);
    expect(() => chaincodeMaxFunctionNames({}, { FABRIC_OPS_CHAINCODE_MAX_FUNCTIONS: 'lots' })).toThrow(
      /^FABRIC_OPS_CHAINCODE_MAX_FUNCTIONS: "lots" is not a whole number from 0 to 10000$/,
    );
    expect(() => chaincodeMaxFunctionNames({}, { FABRIC_OPS_CHAINCODE_MAX_FUNCTIONS: '20000' })).toThrow(ConfigError);
    expect(() => chaincodeMaxFunctionNames({ maxFunctionNames: 1.5 }, {})).toThrow(/^maxFunctionNames: must be a whole number from 0 to 10000; got 1.5$/);
  });

  test('chaincode defaults (prometheus, no runtime checker) only with the embedded configuration, explicit variables win', () => {
    expect(chaincodeConfigEnv({}, false)).toMatchObject({ CORE_METRICS_PROVIDER: 'prometheus', CORE_OPERATIONS_HEALTHCHECK_CONTAINERRUNTIME_TYPE: 'none' });
    expect(chaincodeConfigEnv({ CORE_METRICS_PROVIDER: 'statsd' }, false).CORE_METRICS_PROVIDER).toBe('statsd');
    expect(chaincodeConfigEnv({}, true)).toEqual({});
    expect(chaincodeConfigEnv({ FABRIC_CFG_PATH: '/etc/hyperledger/fabric' }, false)).toEqual({ FABRIC_CFG_PATH: '/etc/hyperledger/fabric' });
  });
});
