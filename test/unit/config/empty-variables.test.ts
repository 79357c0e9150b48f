import { loadConfig } from '../../../src/config/load';
import { makeTempDir, removeTempDirs, writeFile } from './helpers';

/** One rule for every release: an empty variable is read as unset (Fabric 2.5), with one warning each. */

afterAll(removeTempDirs);

describe('empty environment variables', () => {
  it('with the embedded defaults: the default applies, and the warning says so', () => {
    const loaded = loadConfig({ env: { CORE_OPERATIONS_TLS_ENABLED: '', CORE_METRICS_STATSD_WRITEINTERVAL: '' } });
    expect(loaded.config.operations.tls.enabled).toBe(false);
    expect(loaded.warnings).toEqual([
      `CORE_OPERATIONS_TLS_ENABLED is set but empty: read as unset (Fabric 2.5's rule), so the default of operations.tls.enabled ("false") is used; TLS stays as configured without it; Fabric 3.x's peer would apply the empty value`,
      `CORE_METRICS_STATSD_WRITEINTERVAL is set but empty: read as unset (Fabric 2.5's rule), so the default of metrics.statsd.writeInterval ("10s") is used; Fabric 3.x's peer would apply the empty value`,
    ]);
  });

  it("orderer: the file's value applies (ORDERER_OPERATIONS_TLS_ENABLED= keeps Enabled: true), a key the file lacks takes the default", () => {
    const file = writeFile(
      makeTempDir(),
      'orderer.yaml',
      'Operations:\n  TLS:\n    Enabled: true\n    Certificate: s.crt\n    PrivateKey: s.key\n    ClientRootCAs: [ca.crt]\n',
    );
    const loaded = loadConfig({ configFile: file, env: { ORDERER_OPERATIONS_TLS_ENABLED: '', ORDERER_METRICS_PROVIDER: '' } });
    expect(loaded.config.operations.tls.enabled).toBe(true);
    expect(loaded.warnings).toEqual([
      `ORDERER_OPERATIONS_TLS_ENABLED is set but empty: read as unset (Fabric 2.5's rule), so the value of Operations.TLS.Enabled in ${file} ("true") is used; TLS stays as the file sets it; Fabric's orderer (2.5 and 3.0) ignores it too`,
      `ORDERER_METRICS_PROVIDER is set but empty: read as unset (Fabric 2.5's rule), so the default of Metrics.Provider ("disabled") is used; Fabric's orderer (2.5 and 3.0) ignores it too`,
    ]);
  });

  it('a variable that is not set, or set to a value, gives no warning', () => {
    expect(loadConfig({ env: { CORE_METRICS_PROVIDER: 'prometheus' } }).warnings).toEqual([]);
  });
});
