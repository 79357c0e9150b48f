import * as fs from 'node:fs';
import * as path from 'node:path';
import { loadConfig } from '../../../src/config/load';
import { quoteValue } from '../../../src/config/values';
import { makeTempDir, problemsOf, removeTempDirs } from './helpers';

/** What a configuration error quotes of a value is bounded, and a file that is not UTF-8 is refused. */

afterAll(removeTempDirs);

const longest = 200;

describe('quoteValue', () => {
  it('quotes a short value whole, as JSON', () => {
    expect(quoteValue('127.0.0.1:x')).toBe('"127.0.0.1:x"');
    expect(quoteValue('tab\there')).toBe('"tab\\there"');
  });

  it('quotes the start of a long value and says how long it is', () => {
    const quoted = quoteValue('x'.repeat(100_000));
    expect(quoted).toBe(`"${'x'.repeat(64)}"... (100000 characters)`);
  });

  it('does not cut a character made of two UTF-16 units in half', () => {
    const quoted = quoteValue(`${'a'.repeat(63)}😀${'b'.repeat(100)}`);
    expect(quoted).toBe(`"${'a'.repeat(63)}😀"... (165 characters)`);
  });
});

describe('every echo of a value in a configuration error is bounded', () => {
  const huge = 'y'.repeat(100_000);
  it.each([
    ['CORE_OPERATIONS_LISTENADDRESS', 'operations.listenAddress'],
    ['CORE_METRICS_PROVIDER', 'metrics.provider'],
    ['CORE_OPERATIONS_TLS_ENABLED', 'operations.tls.enabled'],
    ['CORE_OPERATIONS_HEALTHCHECK_TIMEOUT', 'operations.healthCheck.timeout'],
    ['CORE_OPERATIONS_MAXCONNECTIONS', 'operations.maxConnections'],
    ['CORE_OPERATIONS_KUBERNETES_EVENTS_CERTIFICATEEXPIRYWARNINGDAYS', 'operations.kubernetes.events.certificateExpiryWarningDays'],
    ['CORE_OPERATIONS_KUBERNETES_LOGSPECCONFIGMAP_NAME', 'operations.kubernetes.logspecConfigMap.name'],
    ['CORE_OPERATIONS_HEALTHCHECK_CONTAINERRUNTIME_TYPE', 'operations.healthCheck.containerRuntime.type'],
    ['CORE_OPERATIONS_HEALTHCHECK_CONTAINERRUNTIME_REQUIREDCONDITIONS', 'operations.healthCheck.containerRuntime.requiredConditions'],
  ])('a 100 KB %s', (variable, key) => {
    const problems = problemsOf(() => loadConfig({ env: { [variable]: huge } }));
    expect(problems).toHaveLength(1);
    expect(problems[0]).toContain(key);
    expect(problems[0]).toContain('(100000 characters)');
    expect(problems[0]?.length).toBeLessThan(longest + 400);
  });

  it('a 100 KB value of a YAML key', () => {
    const dir = makeTempDir();
    const file = path.join(dir, 'core.yaml');
    fs.writeFileSync(file, `operations:\n  listenAddress: ${huge}\n`);
    const problems = problemsOf(() => loadConfig({ configFile: file, env: {} }));
    expect(problems).toEqual([expect.stringContaining('(100000 characters)')]);
    expect(problems[0]?.length).toBeLessThan(longest + 400);
  });
});

describe('a configuration file that is not UTF-8', () => {
  it('is refused, naming the file, the byte offset, the line and the column', () => {
    const dir = makeTempDir();
    const file = path.join(dir, 'core.yaml');
    const before = Buffer.from('operations:\n  listenAddress: 127.0.0.1:9443\nmetrics:\n  provider: prom');
    fs.writeFileSync(file, Buffer.concat([before, Buffer.from([0xff, 0xfe]), Buffer.from('etheus\n')]));
    const problems = problemsOf(() => loadConfig({ configFile: file, env: {} }));
    expect(problems).toEqual([
      `config file ${file}: not valid UTF-8 at byte ${before.length} (line 4, column 17): byte 0xff; Fabric refuses such a file, and reading it would turn the bytes into U+FFFD`,
    ]);
  });

  it('a truncated multi-byte character at the end is refused too; a byte-order mark is not', () => {
    const dir = makeTempDir();
    const file = path.join(dir, 'core.yaml');
    const prefix = Buffer.from('operations:\n  listenAddress: 127.0.0.1:9443 # é ');
    fs.writeFileSync(file, Buffer.concat([prefix, Buffer.from([0xe2, 0x82])]));
    // Column in characters: "  listenAddress: 127.0.0.1:9443 # é " is 36 characters (37 bytes).
    expect(problemsOf(() => loadConfig({ configFile: file, env: {} }))[0]).toContain(`not valid UTF-8 at byte ${prefix.length} (line 2, column 37): byte 0xe2`);
    const bom = path.join(dir, 'bom', 'core.yaml');
    fs.mkdirSync(path.dirname(bom));
    fs.writeFileSync(bom, Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('operations:\n  listenAddress: 127.0.0.1:9443\n')]));
    expect(loadConfig({ configFile: bom, env: {} }).config.operations.listen.port).toBe(9443);
  });
});
