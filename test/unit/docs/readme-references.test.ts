import { readFileSync } from 'node:fs';
import path from 'node:path';
import { configTable, markdownTable, metricsTable, renderReadme, replaceGenerated, serviceMetrics } from '../../../scripts/gendocs';
import { settingsReference } from '../../../src/config/reference';
import { DisabledProvider } from '../../../src/metrics/disabled/provider';
import { createServiceMetrics } from '../../../src/metrics/service-metrics';

const readmePath = path.resolve(__dirname, '..', '..', '..', 'README.md');

describe('README reference tables (make docs)', () => {
  test('the committed README is what scripts/gendocs.ts produces', () => {
    const readme = readFileSync(readmePath, 'utf8');
    const generated = renderReadme(readme);
    if (generated !== readme) {
      const was = readme.split('\n');
      const now = generated.split('\n');
      const first = now.findIndex((line, index) => line !== was[index]);
      throw new Error(
        `README.md differs from the generated reference tables from line ${first + 1}; run make docs.\n` +
          `  committed: ${was[first] ?? '(end of file)'}\n  generated: ${now[first] ?? '(end of file)'}`,
      );
    }
  });

  test('a README whose tables were edited by hand, or lag behind the code, is told apart', () => {
    const readme = readFileSync(readmePath, 'utf8');
    const edited = readme.replace(/^\| `metrics\.provider` .*\n/m, '');
    expect(edited).not.toBe(readme);
    expect(renderReadme(edited)).not.toBe(edited);
    expect(renderReadme(renderReadme(edited))).toBe(renderReadme(edited));
  });

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
});
