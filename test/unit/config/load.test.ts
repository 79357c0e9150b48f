import * as fs from 'node:fs';
import * as path from 'node:path';
import { detectDialect, loadConfig } from '../../../src/config/load';
import { makeTempDir, problemsOf, removeTempDirs, writeFile } from './helpers';

afterAll(removeTempDirs);

const peerYaml = `
peer:
  mspConfigPath: msp
operations:
  listenAddress: 127.0.0.1:0
  tls:
    enabled: true
    cert: { file: tls/server.crt }
    key: { file: tls/server.key }
    clientRootCAs: { files: [tls/client-ca.crt] }
`;

const ordererYaml = `
General:
  LocalMSPDir: msp
Operations:
  ListenAddress: "[::1]:0"
  TLS:
    Enabled: true
    Certificate: tls/server.crt
    PrivateKey: tls/server.key
    ClientRootCAs: [tls/client-ca.crt]
`;

describe('loadConfig with a config file', () => {
  it("detects the peer dialect and resolves relative paths against the file's directory", () => {
    const dir = makeTempDir();
    const file = writeFile(dir, 'conf/peer-ops.yaml', peerYaml);
    const { config, source } = loadConfig({ configFile: file, env: {} });
    expect(source).toBe(`peer-ops.yaml at ${file} (peer dialect)`);
    expect(config.dialect).toBe('peer');
    expect(config.configFile).toBe(file);
    expect(config.operations.listen).toEqual({ host: '127.0.0.1', port: 0 });
    expect(config.operations.tls).toMatchObject({
      certFile: path.join(dir, 'conf/tls/server.crt'),
      keyFile: path.join(dir, 'conf/tls/server.key'),
      clientRootCAFiles: [path.join(dir, 'conf/tls/client-ca.crt')],
    });
    expect(config.organizationCAs.dirs).toEqual([path.join(dir, 'conf/msp/cacerts'), path.join(dir, 'conf/msp/tlscacerts')]);
  });

  it("detects the orderer dialect and resolves relative paths against the file's directory", () => {
    const dir = makeTempDir();
    const file = writeFile(dir, 'orderer.yaml', ordererYaml);
    const { config, source } = loadConfig({ configFile: file, env: {} });
    expect(source).toBe(`orderer.yaml at ${file} (orderer dialect)`);
    expect(config.dialect).toBe('orderer');
    expect(config.operations.listen).toEqual({ host: '::1', port: 0 });
    expect(config.operations.tls).toMatchObject({
      certFile: path.join(dir, 'tls/server.crt'),
      keyFile: path.join(dir, 'tls/server.key'),
      clientRootCAFiles: [path.join(dir, 'tls/client-ca.crt')],
    });
    expect(config.organizationCAs.dirs).toEqual([path.join(dir, 'msp/cacerts'), path.join(dir, 'msp/tlscacerts')]);
  });

  it('takes a path relative to the working directory', () => {
    const dir = makeTempDir();
    const file = writeFile(dir, 'core.yaml', peerYaml);
    const { config } = loadConfig({ configFile: path.relative(process.cwd(), file), env: {} });
    expect(config.configFile).toBe(file);
  });

  it("applies environment overrides over the file, relative paths from them resolving against the file's directory", () => {
    const dir = makeTempDir();
    const file = writeFile(dir, 'core.yaml', peerYaml);
    const { config } = loadConfig({
      configFile: file,
      env: { CORE_OPERATIONS_LISTENADDRESS: ':9999', CORE_OPERATIONS_TLS_CLIENTROOTCAS_FILES: 'a.crt /b.crt', FABRIC_CFG_PATH: '/nonexistent' },
    });
    expect(config.operations.listen).toEqual({ host: '', port: 9999 });
    expect(config.operations.tls.clientRootCAFiles).toEqual([path.join(dir, 'a.crt'), '/b.crt']);
  });

  it('uses --dialect for a file whose keys do not tell, including an empty file', () => {
    const dir = makeTempDir();
    const file = writeFile(dir, 'ops.yaml', 'something: else\n');
    expect(loadConfig({ configFile: file, dialect: 'orderer', env: {} }).config.operations.listen.port).toBe(8443);
    const empty = writeFile(dir, 'empty.yaml', '# nothing here\n');
    const { config } = loadConfig({ configFile: empty, dialect: 'peer', env: { CORE_METRICS_PROVIDER: 'prometheus' } });
    expect(config.operations.listen.port).toBe(9443);
    expect(config.metrics.provider).toBe('prometheus');
  });

  it('refuses a file whose keys do not tell the dialect, asking for --dialect', () => {
    const dir = makeTempDir();
    const file = writeFile(dir, 'ops.yaml', 'something: else\n');
    expect(problemsOf(() => loadConfig({ configFile: file, env: {} }))).toEqual([
      `${file}: cannot tell whether this is a peer core.yaml or an orderer orderer.yaml (top-level keys something); pass --dialect peer or --dialect orderer`,
    ]);
    const mixed = writeFile(dir, 'mixed.yaml', 'operations: {}\nOperations: {}\n');
    expect(problemsOf(() => loadConfig({ configFile: mixed, env: {} }))).toEqual([
      `config file ${mixed}: the document: keys "operations" and "Operations" are one key to Fabric's reader, which ignores case and keeps either value; keep one`,
    ]);
    const both = writeFile(dir, 'both.yaml', 'operations: {}\nGeneral: {}\n');
    expect(problemsOf(() => loadConfig({ configFile: both, env: {} }))).toEqual([
      `${both}: cannot tell whether this is a peer core.yaml or an orderer orderer.yaml (top-level keys operations, General); pass --dialect peer or --dialect orderer`,
    ]);
    const empty = writeFile(dir, 'empty.yaml', '');
    expect(problemsOf(() => loadConfig({ configFile: empty, env: {} }))).toEqual([
      `${empty}: cannot tell whether this is a peer core.yaml or an orderer orderer.yaml (no top-level keys); pass --dialect peer or --dialect orderer`,
    ]);
  });

  it("refuses a --dialect that the file's keys contradict", () => {
    const dir = makeTempDir();
    const file = writeFile(dir, 'orderer.yaml', ordererYaml);
    expect(problemsOf(() => loadConfig({ configFile: file, dialect: 'peer', env: {} }))).toEqual([
      `${file}: its top-level keys (General, Operations) are those of an orderer orderer.yaml, but the peer dialect was asked for; pass --dialect orderer or the right file`,
    ]);
  });

  it('names the path of a missing file or a directory', () => {
    const dir = makeTempDir();
    const missing = path.join(dir, 'core.yaml');
    expect(problemsOf(() => loadConfig({ configFile: missing, env: {} }))).toEqual([`config file ${missing}: cannot be read: no such file`]);
    expect(problemsOf(() => loadConfig({ configFile: dir, env: {} }))).toEqual([`config file ${dir}: cannot be read: is a directory`]);
  });

  it('names the path and the line of a YAML error', () => {
    const dir = makeTempDir();
    const file = writeFile(dir, 'core.yaml', 'operations:\n  listenAddress: 127.0.0.1:9443\n  tls: [enabled: true\nmetrics: {}\n');
    const problems = problemsOf(() => loadConfig({ configFile: file, env: {} }));
    expect(problems.length).toBeGreaterThan(0);
    for (const problem of problems) expect(problem.startsWith(`config file ${file}: not valid YAML at line `)).toBe(true);
    expect(problems[0]).toMatch(/^config file .*: not valid YAML at line 4, column 1: .+ \("metrics: \{\}"\)$/);

    const duplicate = writeFile(dir, 'orderer.yaml', 'Operations:\n  ListenAddress: ":1"\n  ListenAddress: ":2"\n');
    expect(problemsOf(() => loadConfig({ configFile: duplicate, env: {} }))).toEqual([
      `config file ${duplicate}: not valid YAML at line 3, column 3: Map keys must be unique ("  ListenAddress: \\":2\\"")`,
    ]);
  });

  it('reports the configuration problems of the file, all of them', () => {
    const dir = makeTempDir();
    const file = writeFile(
      dir,
      'orderer.yaml',
      'Operations: { ListenAddress: "8443", TLS: { Enabled: true, Certificate: c, PrivateKey: k, ClientRootCAs: [ca] } }\nMetrics: { Provider: prometeus }\n',
    );
    expect(problemsOf(() => loadConfig({ configFile: file, env: {} }))).toEqual([
      'Operations.ListenAddress: "8443" is not host:port',
      'Metrics.Provider: must be one of prometheus, statsd, disabled; got "prometeus"',
    ]);
  });
});

describe('loadConfig through $FABRIC_CFG_PATH', () => {
  it('finds core.yaml or orderer.yaml in the directory, relative paths resolving there', () => {
    const peerDir = makeTempDir();
    writeFile(peerDir, 'core.yaml', peerYaml);
    const peer = loadConfig({ env: { FABRIC_CFG_PATH: peerDir } });
    expect(peer.source).toBe(`core.yaml at ${path.join(peerDir, 'core.yaml')} (peer dialect)`);
    expect(peer.config.operations.tls.certFile).toBe(path.join(peerDir, 'tls/server.crt'));

    const ordererDir = makeTempDir();
    writeFile(ordererDir, 'orderer.yaml', ordererYaml);
    const orderer = loadConfig({ env: { FABRIC_CFG_PATH: ordererDir, ORDERER_METRICS_PROVIDER: 'prometheus' } });
    expect(orderer.config.dialect).toBe('orderer');
    expect(orderer.config.configFile).toBe(path.join(ordererDir, 'orderer.yaml'));
    expect(orderer.config.metrics.provider).toBe('prometheus');
  });

  it('takes the dialect from the file name, even when the keys do not tell', () => {
    const dir = makeTempDir();
    writeFile(dir, 'core.yaml', '# only comments\n');
    expect(loadConfig({ env: { FABRIC_CFG_PATH: dir } }).config.dialect).toBe('peer');
  });

  it('needs --dialect when both files are there', () => {
    const dir = makeTempDir();
    writeFile(dir, 'core.yaml', peerYaml);
    writeFile(dir, 'orderer.yaml', ordererYaml);
    expect(problemsOf(() => loadConfig({ env: { FABRIC_CFG_PATH: dir } }))).toEqual([
      `FABRIC_CFG_PATH=${dir}: both core.yaml and orderer.yaml are in ${dir}; pass --dialect peer or --dialect orderer`,
    ]);
    expect(loadConfig({ env: { FABRIC_CFG_PATH: dir }, dialect: 'orderer' }).config.configFile).toBe(path.join(dir, 'orderer.yaml'));
  });

  it('names the directory when the file is not there', () => {
    const dir = makeTempDir();
    expect(problemsOf(() => loadConfig({ env: { FABRIC_CFG_PATH: dir } }))).toEqual([`FABRIC_CFG_PATH=${dir}: neither core.yaml nor orderer.yaml in ${dir}`]);
    writeFile(dir, 'core.yaml', peerYaml);
    expect(problemsOf(() => loadConfig({ env: { FABRIC_CFG_PATH: dir }, dialect: 'orderer' }))).toEqual([
      `FABRIC_CFG_PATH=${dir}: no orderer.yaml in ${dir} (for the orderer dialect)`,
    ]);
    const missing = path.join(dir, 'missing');
    expect(problemsOf(() => loadConfig({ env: { FABRIC_CFG_PATH: missing } }))).toEqual([
      `FABRIC_CFG_PATH=${missing}: neither core.yaml nor orderer.yaml in ${missing}`,
    ]);
  });

  it('refuses a core.yaml that holds an orderer configuration', () => {
    const dir = makeTempDir();
    const file = writeFile(dir, 'core.yaml', ordererYaml);
    expect(problemsOf(() => loadConfig({ env: { FABRIC_CFG_PATH: dir } }))).toEqual([
      `${file}: its top-level keys (General, Operations) are those of an orderer orderer.yaml, but the peer dialect was asked for; pass --dialect orderer or the right file`,
    ]);
  });

  it('is overridden by an explicit config file', () => {
    const dir = makeTempDir();
    const file = writeFile(dir, 'elsewhere/orderer.yaml', ordererYaml);
    writeFile(dir, 'core.yaml', peerYaml);
    expect(loadConfig({ configFile: file, env: { FABRIC_CFG_PATH: dir } }).config.configFile).toBe(file);
  });
});

describe('loadConfig with neither a file nor $FABRIC_CFG_PATH', () => {
  it('gives the embedded peer defaults, with environment overrides, relative paths against the working directory', () => {
    const { config, source } = loadConfig({ env: { CORE_OPERATIONS_LISTENADDRESS: '127.0.0.1:0', CORE_PEER_MSPCONFIGPATH: 'msp', FABRIC_CFG_PATH: '' } });
    expect(source).toBe('embedded peer defaults');
    expect(config.configFile).toBeNull();
    expect(config.dialect).toBe('peer');
    expect(config.operations.listen).toEqual({ host: '127.0.0.1', port: 0 });
    expect(config.organizationCAs.dirs).toEqual([path.join(process.cwd(), 'msp/cacerts'), path.join(process.cwd(), 'msp/tlscacerts')]);
  });

  it('gives the embedded orderer defaults when asked', () => {
    const { config, source } = loadConfig({ dialect: 'orderer', env: {} });
    expect(source).toBe('embedded orderer defaults');
    expect(config.operations.listen).toEqual({ host: '127.0.0.1', port: 8443 });
    expect(config.metrics.statsd.writeIntervalMs).toBe(30000);
  });

  it('reads process.env when no env is given', () => {
    const saved = { FABRIC_CFG_PATH: process.env.FABRIC_CFG_PATH, CORE_OPERATIONS_LISTENADDRESS: process.env.CORE_OPERATIONS_LISTENADDRESS };
    delete process.env.FABRIC_CFG_PATH;
    process.env.CORE_OPERATIONS_LISTENADDRESS = ':4321';
    try {
      expect(loadConfig({}).config.operations.listen).toEqual({ host: '', port: 4321 });
    } finally {
      for (const [name, value] of Object.entries(saved)) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
    }
  });
});

describe('detectDialect', () => {
  it.each([
    [{ peer: {}, chaincode: {} }, 'peer'],
    [{ vm: { endpoint: '' } }, 'peer'],
    [{ ledger: {} }, 'peer'],
    [{ operations: {}, metrics: {} }, 'peer'],
    [{ General: {} }, 'orderer'],
    [{ FileLedger: {}, Consensus: {} }, 'orderer'],
    [{ Operations: {}, Metrics: {}, Unknown: 1 }, 'orderer'],
  ] as const)('%j is %s', (document, dialect) => {
    expect(detectDialect(document, '/x.yaml')).toBe(dialect);
  });

  it.each([null, [], 'text', {}, { nothing: 1 }, { peer: {}, General: {} }])('%j needs --dialect', (document) => {
    expect(problemsOf(() => detectDialect(document, '/x.yaml'))[0]).toMatch(/^\/x\.yaml: cannot tell .*; pass --dialect peer or --dialect orderer$/);
  });
});

describe('the files are read, not changed', () => {
  it('leaves the config file as it was', () => {
    const dir = makeTempDir();
    const file = writeFile(dir, 'core.yaml', peerYaml);
    const before = fs.statSync(file).mtimeMs;
    loadConfig({ configFile: file, env: {} });
    expect(fs.readFileSync(file, 'utf8')).toBe(peerYaml);
    expect(fs.statSync(file).mtimeMs).toBe(before);
  });
});
