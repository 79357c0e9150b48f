import { formatTextEntry, formatTime } from '../../../src/logging/text-format';
import type { LogFields, LogLevel } from '../../../src/logging/types';

const time = new Date(Date.UTC(2026, 10, 22, 10, 0, 0, 123));

function line(msg: string, fields: LogFields = {}, level: LogLevel = 'info', colour = false): string {
  return formatTextEntry({ time, logger: 'peer.gossip', level, msg, fields }, colour);
}

describe('text format', () => {
  it('writes time (UTC, ms), [logger], LEVEL and message on one line', () => {
    expect(line('Starting peer')).toBe('2026-11-22 10:00:00.123 UTC [peer.gossip] INFO Starting peer\n');
    expect(formatTime(new Date(Date.UTC(2027, 0, 2, 3, 4, 5, 6)))).toBe('2027-01-02 03:04:05.006 UTC');
  });

  it.each([
    ['payload', 'PAYLOAD'],
    ['debug', 'DEBUG'],
    ['warn', 'WARN'],
    ['error', 'ERROR'],
    ['fatal', 'FATAL'],
  ] as const)('names level %s as %s', (level, shown) => {
    expect(line('m', {}, level)).toBe(`2026-11-22 10:00:00.123 UTC [peer.gossip] ${shown} m\n`);
  });

  it('appends fields as key=value, quoting what is not bare-safe', () => {
    const fields: LogFields = {
      port: 9443,
      tls: true,
      address: '127.0.0.1:9443',
      path: 'two words',
      empty: '',
      quote: 'say "hi"',
      eq: 'a=b',
      none: null,
      skipped: undefined,
      big: 12n,
      when: new Date(Date.UTC(2026, 0, 1)),
      list: [1, 'x'],
      object: { a: { b: 'c d' } },
      err: new TypeError('boom'),
      'odd key': 1,
    };
    expect(line('listening', fields)).toBe(
      '2026-11-22 10:00:00.123 UTC [peer.gossip] INFO listening port=9443 tls=true address=127.0.0.1:9443 ' +
        'path="two words" empty="" quote="say \\"hi\\"" eq="a=b" none=null big=12 when=2026-01-01T00:00:00.000Z ' +
        'list=[1,"x"] object={"a":{"b":"c d"}} err="TypeError: boom" "odd key"=1\n',
    );
  });

  it('keeps an entry on one line whatever the message or values contain', () => {
    const text = line('first\nsecond\r\tthird\u0007', { value: 'x\ny' });
    expect(text).toBe('2026-11-22 10:00:00.123 UTC [peer.gossip] INFO first\\nsecond\\r\\tthird\\u0007 value="x\\ny"\n');
    expect(text.split('\n')).toHaveLength(2);
  });

  it('renders values JSON cannot (cycles, nested bigints) without throwing', () => {
    const cyclic: Record<string, unknown> = { a: 1 };
    cyclic.self = cyclic;
    const text = line('m', { cyclic, nested: { n: 1n } });
    expect(text).toContain('cyclic=<ref *1> { a: 1, self: [Circular *1] }');
    expect(text).toContain('nested={ n: 1n }');
  });

  it('colours the prefix in the level colour only when asked', () => {
    expect(line('m', {}, 'error', true)).toBe('\u001b[31m2026-11-22 10:00:00.123 UTC [peer.gossip] ERROR\u001b[0m m\n');
    expect(line('m', {}, 'warn', true)).toBe('\u001b[33m2026-11-22 10:00:00.123 UTC [peer.gossip] WARN\u001b[0m m\n');
    expect(line('m', {}, 'error', false)).not.toContain('\u001b');
  });
});
