/**
 * docs/companion.md's metrics table (make docs, scripts/gendocs.ts): the committed file is what the
 * script writes, and the table has a row for every metric the companion's monitors create, as they
 * create it (the options are declared once, beside each monitor).
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { companionMetrics, metricsTable, renderCompanionDoc } from '../../../scripts/gendocs';
import { CertificateMonitor } from '../../../src/companion/certificate-monitor';
import { DiskMonitor } from '../../../src/companion/disk-monitor';
import type { Logger } from '../../../src/logging/types';
import { DisabledProvider } from '../../../src/metrics/disabled/provider';
import type { MetricsProvider } from '../../../src/metrics/types';

const docPath = path.resolve(__dirname, '..', '..', '..', 'docs', 'companion.md');

const silent: Logger = {
  name: 'test',
  payload: () => undefined,
  debug: () => undefined,
  info: () => undefined,
  warn: () => undefined,
  error: () => undefined,
  isEnabled: () => false,
};

/** What a provider is asked to create while `make` runs: [kind, fully qualified name]. */
function created(make: (metrics: MetricsProvider) => void): Array<[string, string]> {
  const seen: Array<[string, string]> = [];
  const inner = new DisabledProvider();
  const name = (o: { namespace?: string; subsystem?: string; name: string }): string => [o.namespace, o.subsystem, o.name].filter(Boolean).join('_');
  make({
    newCounter: (o) => (seen.push(['counter', name(o)]), inner.newCounter(o)),
    newGauge: (o) => (seen.push(['gauge', name(o)]), inner.newGauge(o)),
    newHistogram: (o) => (seen.push(['histogram', name(o)]), inner.newHistogram(o)),
  });
  return seen;
}

describe('docs/companion.md metrics table (make docs)', () => {
  test('the committed docs/companion.md is what scripts/gendocs.ts produces', () => {
    const doc = readFileSync(docPath, 'utf8');
    const generated = renderCompanionDoc(doc);
    if (generated !== doc) {
      const was = doc.split('\n');
      const now = generated.split('\n');
      const first = now.findIndex((line, index) => line !== was[index]);
      throw new Error(
        `docs/companion.md differs from the generated metrics table from line ${first + 1}; run make docs.\n` +
          `  committed: ${was[first] ?? '(end of file)'}\n  generated: ${now[first] ?? '(end of file)'}`,
      );
    }
  });

  test('a table edited by hand is told apart', () => {
    const doc = readFileSync(docPath, 'utf8');
    const edited = doc.replace(/^\| `companion_disk_free_bytes` .*\n/m, '');
    expect(edited).not.toBe(doc);
    expect(renderCompanionDoc(edited)).toBe(doc);
  });

  test('every metric the certificate and disk monitors create is a row, with the kind they create it as', () => {
    const byMonitors = [
      ...created(
        (metrics) =>
          new CertificateMonitor({ certificates: { sources: [], warningDays: 7, planningDays: 30, recheckIntervalMs: 60_000 }, logger: silent, metrics }),
      ),
      ...created(
        (metrics) => new DiskMonitor({ folders: [], thresholds: { minFreePercent: 10, minFreeBytes: 0 }, recheckIntervalMs: 1000, logger: silent, metrics }),
      ),
    ];
    const documented = companionMetrics().map((m): [string, string] => [m.definition.kind, m.definition.fqName]);
    expect(byMonitors.length).toBe(8);
    expect(documented).toEqual(expect.arrayContaining(byMonitors));
    const table = metricsTable(companionMetrics());
    expect(table).toContain('| `companion_disk_free_bytes` | `companion.disk.free_bytes.<key>` | gauge | `folder`, `key` |');
    expect(table).toContain('| `companion_certificate_expiry_timestamp_seconds` | `companion.certificate.expiry_timestamp_seconds.<kind>.<serial>` | gauge |');
  });
});
