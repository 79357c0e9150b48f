/**
 * What clients and nodes send reaches the log (a client certificate's subject, a node's answer):
 * control characters and the bidirectional controls must show as escapes, never act. U+202E
 * (RIGHT-TO-LEFT OVERRIDE) makes a terminal show the text after it reversed, so a subject
 * `CN=admin\u202Egnp.exe` reads `CN=adminexe.png`; a newline would forge a whole line.
 */
import { LoggingSystem } from '../../../src/logging/logging-system';
import { escapeForLog, logUnsafeCharacter, quote } from '../../../src/text';
import { LogCapture } from '../../support/log-capture';

/** Every character the log must escape, by range: C0, DEL, C1, the separators, the bidi controls. */
const unsafe: number[] = [
  ...Array.from({ length: 0x20 }, (_, code) => code),
  ...Array.from({ length: 0xa0 - 0x7f }, (_, index) => 0x7f + index),
  0x061c,
  0x200e,
  0x200f,
  0x2028,
  0x2029,
  0x202a,
  0x202b,
  0x202c,
  0x202d,
  0x202e,
  0x2066,
  0x2067,
  0x2068,
  0x2069,
];

const subject = 'O=org1,CN=admin\u202Egnp.exe';

describe('escapeForLog (src/text.ts)', () => {
  test('each C0, DEL, C1, line/paragraph separator and bidi control becomes its JSON escape; the result has none left', () => {
    for (const code of unsafe) {
      const character = String.fromCharCode(code);
      const escaped = escapeForLog(`a${character}b`);
      expect(logUnsafeCharacter.test(escaped)).toBe(false);
      // Read back as a JSON string, the escape is the character itself.
      expect(JSON.parse(`"${escaped}"`)).toBe(`a${character}b`);
    }
    expect(escapeForLog('x\ny\u202ez\u0085')).toBe('x\\ny\\u202ez\\u0085');
  });

  test('other text, letters of any script and emoji included, is left as it is', () => {
    const text = 'café 日本語 עברית العربية 🙂 O=org1,CN=operator \u00a0';
    expect(escapeForLog(text)).toBe(text);
  });

  test('quote (json) escapes them too: a subject in an error message stays on one line and in order', () => {
    expect(quote(subject, 100)).toBe('"O=org1,CN=admin\\u202egnp.exe"');
    expect(quote('a\u2028b', 100)).toBe('"a\\u2028b"');
  });
});

describe('the log formats', () => {
  function logged(format: 'text' | 'json'): string {
    const capture = new LogCapture();
    const system = new LoggingSystem({ format, stream: capture, colour: false });
    system.getLogger('operations.fleet').warn(`write refused for ${subject}`, { subject, answer: 'spec\u202e\u2066x\u0085\u007f' });
    expect(capture.lines).toHaveLength(1);
    return capture.lines[0]!;
  }

  test('text: a U+202E in a client subject is written as \\u202e, in the message and in the field', () => {
    const line = logged('text');
    expect(logUnsafeCharacter.test(line)).toBe(false);
    expect(line).toContain(
      'WARN write refused for O=org1,CN=admin\\u202egnp.exe subject="O=org1,CN=admin\\u202egnp.exe" answer="spec\\u202e\\u2066x\\u0085\\u007f"',
    );
  });

  test('json: the same characters escaped, and the line still parses to the values sent', () => {
    const line = logged('json');
    expect(logUnsafeCharacter.test(line)).toBe(false);
    expect(line).toContain('"subject":"O=org1,CN=admin\\u202egnp.exe"');
    const record = JSON.parse(line) as { msg: string; subject: string; answer: string };
    expect(record.subject).toBe(subject);
    expect(record.msg).toBe(`write refused for ${subject}`);
    expect(record.answer).toBe('spec\u202e\u2066x\u0085\u007f');
  });
});
