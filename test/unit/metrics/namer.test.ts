import { MetricOptionsError } from '../../../src/errors';
import { compileStatsdFormat, escapeStatsdLabelValue, joinName } from '../../../src/metrics/namer';

const parts = { namespace: 'namespace', subsystem: 'subsystem', name: 'name' };

describe('namer (Fabric common/metrics namer)', () => {
  test('formats names from fixed parts and labels', () => {
    const template = compileStatsdFormat(
      'prefix.%{#namespace}.%{#subsystem}.%{#name}.%{alpha}.bravo.%{bravo}.suffix',
      parts,
      ['alpha', 'bravo'],
      "counter 'x'",
    );
    expect(template.format({ alpha: 'a', bravo: 'b' })).toBe('prefix.namespace.subsystem.name.a.bravo.b.suffix');
    expect(template.referencedLabels).toEqual(['alpha', 'bravo']);
  });

  test.each([
    [':colon:colon:', '_colon_colon_'],
    ['|bar|bar|', '_bar_bar_'],
    ['a\nb\tc', 'a_b_c'],
    ['b c', 'b_c'],
    ['period.period', 'period_period'],
    ['...', '___'],
    ['Ʊpsilon', 'Ʊpsilon'],
    ['/healthz', 'healthz'],
    ['//logspec', 'logspec'],
    ['/a/b', 'a_b'],
    ['a/b/', 'a_b_'],
    ['/', '_'],
    ['///', '_'],
    ['/ .x', '__x'],
    ['', ''],
  ])('label value %j becomes %j', (value, expected) => {
    expect(escapeStatsdLabelValue(value)).toBe(expected);
    const template = compileStatsdFormat('%{#fqname}.%{alpha}', parts, ['alpha'], "counter 'x'");
    expect(template.format({ alpha: value })).toBe(`namespace.subsystem.name.${expected}`);
  });

  test.each([
    [{ namespace: 'namespace', subsystem: 'subsystem', name: 'name' }, 'namespace.subsystem.name', 'namespace_subsystem_name'],
    [{ namespace: '', subsystem: 'subsystem', name: 'name' }, 'subsystem.name', 'subsystem_name'],
    [{ namespace: 'namespace', subsystem: '', name: 'name' }, 'namespace.name', 'namespace_name'],
    [{ namespace: '', subsystem: '', name: 'name' }, 'name', 'name'],
  ])('%j: fqname %s (StatsD), %s (Prometheus)', (given, statsd, prometheus) => {
    expect(compileStatsdFormat('%{#fqname}', given, [], "counter 'x'").format({})).toBe(statsd);
    expect(joinName(given, '_')).toBe(prometheus);
  });

  test('a slash never reaches a bucket component (Graphite would split it into directories)', () => {
    const template = compileStatsdFormat(
      '%{#fqname}.%{route}.%{code}',
      { namespace: 'operations', subsystem: '', name: 'requests' },
      ['route', 'code'],
      "counter 'x'",
    );
    expect(template.format({ route: '/healthz', code: '200' })).toBe('operations.requests.healthz.200');
    expect(template.format({ route: 'unmatched', code: '404' })).toBe('operations.requests.unmatched.404');
    expect(template.format({ route: '/', code: '404' })).toBe('operations.requests._.404');
    for (const route of ['/healthz', '/a//b', '//x/', '/metrics']) {
      const components = template.format({ route, code: '200' }).split('.');
      expect(components).toHaveLength(4);
      for (const component of components) expect(component).toMatch(/^[^/_][^/]*$/);
    }
  });

  test("Fabric's own bucket names are unchanged (as the v2.4.9 peer sends them)", () => {
    const level = compileStatsdFormat('%{#fqname}.%{level}', { namespace: 'logging', subsystem: '', name: 'entries_checked' }, ['level'], "counter 'x'");
    expect(level.format({ level: 'info' })).toBe('logging.entries_checked.info');
    const version = compileStatsdFormat('%{#fqname}.%{version}', { namespace: '', subsystem: '', name: 'fabric_version' }, ['version'], "gauge 'x'");
    expect(version.format({ version: '2.4.9' })).toBe('fabric_version.2_4_9');
  });

  test('labels not referenced by the format do not change the name', () => {
    const template = compileStatsdFormat('%{#fqname}', parts, ['alpha'], "counter 'x'");
    expect(template.format({ alpha: 'one' })).toBe('namespace.subsystem.name');
    expect(template.format({ alpha: 'two' })).toBe('namespace.subsystem.name');
  });

  test.each([
    ['%{bad_label}', /counter 'x': statsdFormat '%\{bad_label\}' references label 'bad_label', which is not one of its labelNames \[alpha\]/],
    ['%{#fqname}.%{#version}', /unknown placeholder '%\{#version\}'/],
    ['%{#fqname}.%{alpha', /'%\{' that is not closed/],
    ['%{#fqname}:x', /contains ":"/],
    ['%{#fqname}|x', /contains "\|"/],
    ['%{#fqname} x', /contains " "/],
  ])('format %j is refused at creation', (format, message) => {
    expect(() => compileStatsdFormat(format, parts, ['alpha'], "counter 'x'")).toThrow(MetricOptionsError);
    expect(() => compileStatsdFormat(format, parts, ['alpha'], "counter 'x'")).toThrow(message);
  });
});
