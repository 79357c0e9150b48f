import { clip, oneLine, quote } from '../../src/text';

describe('bounded echoes (src/text.ts)', () => {
  test('clip: short text whole; long text cut with its length; never half a surrogate pair', () => {
    expect(clip('abc', 3)).toBe('abc');
    expect(clip('abcdef', 3)).toBe('abc... (6 characters)');
    // '😀' is two UTF-16 code units: a cut after the first keeps the whole pair.
    expect(clip('ab😀cd', 3)).toBe('ab😀... (6 characters)');
  });

  test('quote: JSON (escapes, one line) or single quotes as Fabric, the marker after the quote', () => {
    expect(quote('a\nb', 10)).toBe('"a\\nb"');
    expect(quote('abcdef', 3)).toBe('"abc"... (6 characters)');
    expect(quote('abcdef', 3, 'single')).toBe("'abc'... (6 characters)");
    expect(quote('x', 3, 'single')).toBe("'x'");
  });

  test('oneLine: white space collapsed; a huge text only has its head read, and says how long it was', () => {
    expect(oneLine('  a \n\t b  ', 10)).toBe('a b');
    expect(oneLine(`${'x'.repeat(10)}\n${' '.repeat(5_000_000)}`, 20)).toBe(`${'x'.repeat(10)}... (5000011 characters)`);
    expect(oneLine('y'.repeat(30), 20)).toBe(`${'y'.repeat(20)}... (30 characters)`);
  });
});
