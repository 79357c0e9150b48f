import { settingsReference } from '../../../src/config/reference';
import { dialects } from '../../../src/config/types';
import { serviceMetrics } from '../../../scripts/gendocs';

/** What --list-keys and the README tables say of a key: its type, and the metric names its text cites. */

describe('settingsReference types and texts', () => {
  it.each(dialects)('%s: whole numbers are typed integer, Go durations duration', (dialect) => {
    const kinds = Object.fromEntries(settingsReference(dialect).map((setting) => [setting.key.toLowerCase(), setting.kind]));
    expect(kinds['operations.maxconnections']).toBe('integer');
    expect(kinds['operations.kubernetes.events.certificateexpirywarningdays']).toBe('integer');
    expect(kinds['operations.healthcheck.timeout']).toBe('duration');
    expect(kinds['metrics.statsd.writeinterval']).toBe('duration');
  });

  it.each(dialects)('%s: every metric a key text names is named as /metrics exposes it', (dialect) => {
    const exposed = new Set(serviceMetrics().map(({ definition }) => (definition.kind === 'counter' ? `${definition.fqName}_total` : definition.fqName)));
    const cited = settingsReference(dialect).flatMap((setting) =>
      [...setting.doc.matchAll(/`((?:operations|logging|health|fabric)_[a-z_]+)`/g)].map((m) => m[1]),
    );
    expect(cited.length).toBeGreaterThan(0);
    for (const name of cited) expect(exposed).toContain(name);
  });
});
