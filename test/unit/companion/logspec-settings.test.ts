import { normaliseConfig } from '../../../src/config/normalise';
import { ConfigError } from '../../../src/errors';

/** The keys of the node's log level in companion mode (docs/companion.md, "The node's log level"), both dialects. */
const configDir = '/etc/hyperledger/fabric';

function peer(document: unknown, env: Record<string, string> = {}) {
  return normaliseConfig({ dialect: 'peer', document, env, configDir, configFile: `${configDir}/core.yaml` });
}

function orderer(document: unknown, env: Record<string, string> = {}) {
  return normaliseConfig({ dialect: 'orderer', document, env, configDir, configFile: `${configDir}/orderer.yaml` });
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

const companionTls = {
  enabled: true,
  cert: { file: 'companion/server.crt' },
  key: { file: 'companion/server.key' },
  clientRootCAs: { files: ['companion/clients.crt'] },
};

describe('operations.companion.logspec', () => {
  test('defaults: read-only, no state directory, a poll every 2 s', () => {
    const config = peer({ operations: { companion: { enabled: true } } });
    expect(config.companion?.logspec).toEqual({ writable: false, stateDirectory: '', pollIntervalMs: 2000 });
  });

  test('writable with fabric-ops TLS; the state directory resolved as Fabric resolves file keys', () => {
    const config = peer({
      operations: { companion: { enabled: true, tls: companionTls, logspec: { writable: true, stateDirectory: 'ops-state', pollInterval: '500ms' } } },
    });
    expect(config.companion?.logspec).toEqual({ writable: true, stateDirectory: `${configDir}/ops-state`, pollIntervalMs: 500 });
  });

  test('writable over plain HTTP is refused, naming both keys', () => {
    expect(problems(() => peer({ operations: { companion: { enabled: true, logspec: { writable: true } } } }))).toEqual([
      "operations.companion.logspec.writable: true needs operations.companion.tls.enabled true: a write to the node's logging spec must come with a client certificate from operations.companion.tls.clientRootCAs.files, as the node's own /logspec demands one (set it false to serve /logspec read-only)",
    ]);
    expect(problems(() => orderer({ Operations: { Companion: { Enabled: true } } }, { ORDERER_OPERATIONS_COMPANION_LOGSPEC_WRITABLE: 'true' }))).toEqual([
      "Operations.Companion.LogSpec.Writable (from ORDERER_OPERATIONS_COMPANION_LOGSPEC_WRITABLE): true needs Operations.Companion.TLS.Enabled true: a write to the node's logging spec must come with a client certificate from Operations.Companion.TLS.ClientRootCAs, as the node's own /logspec demands one (set it false to serve /logspec read-only)",
    ]);
  });

  test('a poll interval under 100 ms, or not a duration, is refused naming the key', () => {
    expect(problems(() => peer({ operations: { companion: { enabled: true, logspec: { pollInterval: '10ms' } } } }))).toEqual([
      'operations.companion.logspec.pollInterval: must be at least 100ms; got "10ms"',
    ]);
    expect(problems(() => peer({ operations: { companion: { enabled: true } } }, { CORE_OPERATIONS_COMPANION_LOGSPEC_POLLINTERVAL: 'often' }))).toEqual([
      expect.stringMatching(/^operations\.companion\.logspec\.pollInterval \(from CORE_OPERATIONS_COMPANION_LOGSPEC_POLLINTERVAL\): /) as string,
    ]);
  });

  test('off without companion mode: the keys are not read', () => {
    expect(peer({ operations: { companion: { logspec: { writable: true } } } }).companion).toBeUndefined();
  });
});
