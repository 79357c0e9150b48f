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
