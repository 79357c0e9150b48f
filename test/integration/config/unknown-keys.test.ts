import * as path from 'node:path';
import { loadConfig } from '../../../src/config/load';
import { editDistance } from '../../../src/config/unknown-keys';
import { makeTempDir, problemsOf, removeTempDirs, sampleConfigDir, writeFile } from '../../unit/config/helpers';

/**
 * Typos in keys: refused under a section only fabric-ops reads, a warning for a near miss of a
 * key read elsewhere, and nothing for the many Fabric keys fabric-ops does not read.
 */

afterAll(removeTempDirs);

// The sample configurations of the releases recorded in ../shared/fixtures/fabric-recorded (the
// files the real 2.5.12, 3.0.0 and 3.1.5 nodes of those recordings were started from).
const recorded = path.resolve(__dirname, '../../../../shared/fixtures/fabric-recorded');
const samples = [
  path.join(sampleConfigDir, 'core.yaml'),
  path.join(sampleConfigDir, 'orderer.yaml'),
  ...['2.5.12', '3.0.0', '3.1.5'].flatMap((release) => ['core.yaml', 'orderer.yaml'].map((file) => path.join(recorded, release, 'sampleconfig', file))),
];

function load(name: string, text: string): ReturnType<typeof loadConfig> {
  return loadConfig({ configFile: writeFile(makeTempDir(), name, text), env: {} });
}

describe('unknown keys', () => {
  it.each(samples)("Fabric's sample %s loads without a warning", (file) => {
    expect(loadConfig({ configFile: file, env: {} }).warnings).toEqual([]);
  });

  it('edit distance is case-insensitive', () => {
    expect(editDistance('listenAdress', 'listenAddress')).toBe(1);
    expect(editDistance('TIMEOUT', 'timeout')).toBe(0);
    expect(editDistance('timout', 'timeout')).toBe(1);
  });

  it('a misspelt key under operations.healthCheck (only fabric-ops reads it) is refused, naming the key, the file and the right spelling', () => {
    const dir = makeTempDir();
    const file = writeFile(dir, 'core.yaml', 'operations:\n  healthCheck:\n    timout: 1s\n');
    expect(problemsOf(() => loadConfig({ configFile: file, env: {} }))).toEqual([
      `config file ${file}: unknown key "operations.healthCheck.timout" in operations.healthCheck, a section only fabric-ops reads; did you mean operations.healthCheck.timeout?`,
    ]);
  });

  it('any unknown key under Operations.Kubernetes (orderer) is refused, listing the keys known there', () => {
    const dir = makeTempDir();
    const file = writeFile(dir, 'orderer.yaml', 'Operations:\n  Kubernetes:\n    Watch: true\n');
    expect(problemsOf(() => loadConfig({ configFile: file, env: {} }))).toEqual([
      `config file ${file}: unknown key "Operations.Kubernetes.Watch" in Operations.Kubernetes, a section only fabric-ops reads; known there: Events, LogspecConfigMap`,
    ]);
  });

  it('a near miss of a key read in a section Fabric also reads is a warning, and the default applies as Fabric applies it', () => {
    const loaded = load('core.yaml', 'operations:\n  listenAdress: 0.0.0.0:9999\nmetrics:\n  statsd:\n    writeInterva: 1s\n');
    expect(loaded.config.operations.listen).toEqual({ host: '127.0.0.1', port: 9443 });
    expect(loaded.warnings).toEqual([
      expect.stringMatching(/: unknown key "operations\.listenAdress" is ignored \(Fabric ignores it too\); did you mean operations\.listenAddress\?$/),
      expect.stringMatching(
        /: unknown key "metrics\.statsd\.writeInterva" is ignored \(Fabric ignores it too\); did you mean metrics\.statsd\.writeInterval\?$/,
      ),
    ]);
  });

  it('keys differing only in case are the same key (viper), and a Fabric key that is no near miss is not reported', () => {
    const loaded = load('core.yaml', 'operations:\n  ListenAddress: 127.0.0.1:9444\n  somethingFabricAdds: 1\n  healthcheck:\n    TIMEOUT: 3s\n');
    expect(loaded.warnings).toEqual([]);
    expect(loaded.config.operations.listen.port).toBe(9444);
    expect(loaded.config.health.timeoutMs).toBe(3000);
  });

  it('an environment variable under a section only fabric-ops reads that names no key is refused, with the variable meant', () => {
    expect(problemsOf(() => loadConfig({ env: { CORE_OPERATIONS_HEALTHCHECK_TIMOUT: '1s' } }))).toEqual([
      '"CORE_OPERATIONS_HEALTHCHECK_TIMOUT": names no key of a section only fabric-ops reads; did you mean CORE_OPERATIONS_HEALTHCHECK_TIMEOUT?',
    ]);
    expect(problemsOf(() => loadConfig({ dialect: 'orderer', env: { ORDERER_OPERATIONS_KUBERNETES_WATCH: 'x' } }))).toEqual([
      '"ORDERER_OPERATIONS_KUBERNETES_WATCH": names no key of a section only fabric-ops reads',
    ]);
    // Fabric's own variables, and ours spelt right, are fine.
    expect(
      loadConfig({ env: { CORE_PEER_ID: 'p0', CORE_OPERATIONS_HEALTHCHECK_TIMEOUT: '1s', CORE_OPERATIONS_LISTENADRESS: 'x' } }).config.health.timeoutMs,
    ).toBe(1000);
  });
});
