/**
 * The generated parts of docs/ (`make docs`, scripts/gendocs.ts): each committed page is what the
 * script writes from the code, so a reference cannot drift from it. And the help texts, which the
 * command reference holds, name pages that exist.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import {
  chaincodeMetrics,
  configTable,
  fleetKeyMeanings,
  fleetKeys,
  fleetMetrics,
  generatedPages,
  markdownTable,
  metricsTable,
  renderPage,
  replaceGenerated,
  serviceMetrics,
} from '../../../scripts/gendocs';
import { commandUsage } from '../../../src/command-usage';
import { settingsReference } from '../../../src/config/reference';
import { fleetUsage } from '../../../src/fleet/cli';
import { DisabledProvider } from '../../../src/metrics/disabled/provider';
import { createServiceMetrics } from '../../../src/metrics/service-metrics';

const root = path.resolve(__dirname, '..', '..', '..');

/** The first line where `generated` differs from `committed`, for the failure message. */
function firstDifference(file: string, committed: string, generated: string): string {
  const was = committed.split('\n');
  const now = generated.split('\n');
  const first = now.findIndex((line, index) => line !== was[index]);
  return (
    `${file} differs from what scripts/gendocs.ts generates from line ${first + 1}; run make docs.\n` +
    `  committed: ${was[first] ?? '(end of file)'}\n  generated: ${now[first] ?? '(end of file)'}`
  );
}

describe('the generated pages (make docs)', () => {
  test('the pages are the ones the references and guides link to', () => {
    expect(generatedPages.map((page) => page.file)).toEqual([
      'docs/reference/configuration.md',
      'docs/health.md',
      'docs/reference/metrics.md',
      'docs/companion.md',
      'docs/reference/command.md',
    ]);
  });

  test.each(generatedPages.map((page) => page.file))('%s is what scripts/gendocs.ts produces', (file) => {
    const committed = readFileSync(path.join(root, file), 'utf8');
    const generated = renderPage(file, committed);
    if (generated !== committed) throw new Error(firstDifference(file, committed, generated));
  });

  test('a page whose table was edited by hand, or lags behind the code, is told apart', () => {
    const file = 'docs/reference/metrics.md';
    const page = readFileSync(path.join(root, file), 'utf8');
    const edited = page.replace(/^\| `logging_spec_changes_total` .*\n/m, '');
    expect(edited).not.toBe(page);
    expect(renderPage(file, edited)).not.toBe(edited);
    expect(renderPage(file, renderPage(file, edited))).toBe(renderPage(file, edited));
  });

  test('README.md holds no generated block any more: the references are in docs/', () => {
    expect(readFileSync(path.join(root, 'README.md'), 'utf8')).not.toMatch(/<!-- (BEGIN|END) GENERATED/);
  });
});

describe('the metrics reference', () => {
  test('every metric the service creates is a row, with its Prometheus name and StatsD bucket', () => {
    const table = metricsTable();
    const metrics = serviceMetrics();
    expect(table.split('\n')).toHaveLength(metrics.length + 2);
    expect(table).toContain('| `logging_entries_checked_total` | `logging.entries_checked.<level>` | counter | `level` |');
    expect(table).toContain('| `fabric_version` | `fabric_version.<version>` | gauge | `version` |');
    expect(table).toContain('| `health_check_duration_seconds` | `health.check_duration_seconds.<component>` | histogram (StatsD: timing, ms) | `component` |');
    expect(table).toContain('| `operations_requests_total` | `operations.requests.<route>.<code>` | counter | `route`, `code` |');
    // The recorder sees exactly what the service registers on a real provider.
    const provider = new DisabledProvider();
    const created: string[] = [];
    const spy = {
      newCounter: (o: Parameters<DisabledProvider['newCounter']>[0]) => (created.push(o.name), provider.newCounter(o)),
      newGauge: (o: Parameters<DisabledProvider['newGauge']>[0]) => (created.push(o.name), provider.newGauge(o)),
      newHistogram: (o: Parameters<DisabledProvider['newHistogram']>[0]) => (created.push(o.name), provider.newHistogram(o)),
    };
    createServiceMetrics(spy, '1.0.0');
    expect(metrics.map((m) => m.definition.name)).toEqual(created);
  });

  test("fleet mode's and the chaincode's metrics are rows of their own tables", () => {
    const fleet = metricsTable(fleetMetrics());
    expect(fleet).toContain('| `fleet_node_up` | `fleet.node_up.<node>.<group>` | gauge | `node`, `group` |');
    expect(fleet).toContain('| `fleet_logspec_putbacks_total` | `fleet.logspec_putbacks.<result>` | counter | `result` |');
    const chaincode = metricsTable(chaincodeMetrics());
    expect(chaincode).toContain(
      '| `chaincode_transactions_total` | `chaincode.transactions.<channel>.<contract>.<function>.<outcome>` | counter | `channel`, `contract`, `function`, `outcome` |',
    );
    const page = readFileSync(path.join(root, 'docs/reference/metrics.md'), 'utf8');
    for (const table of [fleet, chaincode]) expect(page).toContain(table);
  });
});

describe('the configuration reference', () => {
  test('every key of each dialect is a row, with the environment variable --list-keys shows', () => {
    for (const dialect of ['peer', 'orderer'] as const) {
      const table = configTable(dialect);
      const settings = settingsReference(dialect);
      expect(table.split('\n')).toHaveLength(settings.length + 2);
      for (const setting of settings) {
        expect(setting.doc).not.toBe('');
        expect(table).toContain(`| \`${setting.key}\` | \`${setting.environmentVariable}\` | ${setting.kind} |`);
      }
    }
    expect(configTable('peer')).toContain('| `metrics.statsd.writeInterval` | `CORE_METRICS_STATSD_WRITEINTERVAL` | duration | `10s` |');
    expect(configTable('orderer')).toContain('| `Operations.TLS.ClientRootCAs` | `ORDERER_OPERATIONS_TLS_CLIENTROOTCAS` | list | `[]` |');
  });

  test('every key of the fleet file, from its schema, has a meaning written (and no meaning names a key that is gone)', () => {
    const keys = fleetKeys().map((key) => key.key);
    expect(keys).toEqual(
      expect.arrayContaining(['stateDirectory', 'groups.<name>.tls.caFiles', 'nodes[].url', 'discovery.kubernetes[].selector', 'writers[].issuerFingerprint']),
    );
    const described = new Set(
      fleetKeys()
        .filter((key) => key.description !== undefined)
        .map((key) => key.key),
    );
    expect(keys.filter((key) => !described.has(key) && fleetKeyMeanings[key] === undefined)).toEqual([]);
    expect(Object.keys(fleetKeyMeanings).filter((key) => !keys.includes(key))).toEqual([]);
  });

  test("the fleet keys' types, defaults and bounds come from the schema", () => {
    const byKey = new Map(fleetKeys().map((key) => [key.key, key]));
    expect(byKey.get('concurrency')).toMatchObject({ type: 'integer', defaultValue: 16, bounds: '1 to 256', required: false });
    expect(byKey.get('groups')).toMatchObject({ type: 'map of objects', required: true });
    expect(byKey.get('nodes[].name')).toMatchObject({ type: 'string', required: true });
    expect(byKey.get('nodes[].dialect')).toMatchObject({ defaultValue: 'unknown', bounds: 'one of `peer`, `orderer`, `unknown`' });
  });
});

describe('the help texts name the docs', () => {
  test.each([
    ['fabric-ops --help', commandUsage],
    ['fabric-ops fleet --help', fleetUsage],
  ])('%s names pages for more, and each page exists', (_name, text) => {
    const pages = [...text.matchAll(/\bdocs\/[\w/-]+\.md\b/g)].map((match) => match[0]);
    expect(pages.length).toBeGreaterThan(0);
    expect(pages.filter((page) => !existsSync(path.join(root, page)))).toEqual([]);
  });
});

describe('replaceGenerated (markers + content → document)', () => {
  const document = 'intro\n<!-- BEGIN GENERATED: t -->\nold\nrows\n<!-- END GENERATED: t -->\nafter\n';

  test('replaces what is between the markers, and nothing else; twice gives the same', () => {
    const once = replaceGenerated(document, 't', 'new');
    expect(once).toBe('intro\n<!-- BEGIN GENERATED: t -->\nnew\n<!-- END GENERATED: t -->\nafter\n');
    expect(replaceGenerated(once, 't', 'new\n')).toBe(once);
  });

  test.each([
    ['intro\n', /markers <!-- BEGIN GENERATED: t --> and <!-- END GENERATED: t --> not both found/],
    [`${document}<!-- BEGIN GENERATED: t -->\n`, /more than once/],
    ['<!-- END GENERATED: t -->\n<!-- BEGIN GENERATED: t -->\n', /comes before/],
  ])('refuses a document with markers missing, repeated or reversed (%#)', (text, message) => {
    expect(() => replaceGenerated(text, 't', 'x')).toThrow(message);
  });

  test('a markdown table escapes | in cells and leaves empty cells empty', () => {
    expect(markdownTable(['a', 'b'], [['x|y', '']])).toBe('| a | b |\n|---|---|\n| x\\|y | |');
  });

  test('renderPage refuses a page that is not generated', () => {
    expect(() => renderPage('docs/tls.md', '')).toThrow(/docs\/tls.md is not a generated page/);
  });
});
