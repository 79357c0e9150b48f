/**
 * The tables and lines of `fabric-ops fleet` (src/fleet/cli-table.ts): node text escaped in every
 * cell, a table cut to its width with a note saying how to see it whole (issue 28 item 5, issue 30
 * item 3). The command's real output over a fleet server is test/integration/fleet/command-output.test.ts.
 */
import { Writable } from 'node:stream';
import { cutNote, cutTo, displayLength, outputWidth, prose, renderTable, type Column } from '../../../src/fleet/cli-table';
import { logUnsafeCharacter } from '../../../src/text';

const lines = (text: string): string[] => text.replace(/\n$/, '').split('\n');

describe('renderTable: node text in cells', () => {
  // What a hostile node answered in the adversarial pass: a window title, a clear screen, a forged row.
  const hostile = '\u001b]0;pwned\u0007\u001b[2J\nfake-row  ok';

  test('control, C1, separator and bidi characters are escaped; a newline in a cell never makes a row', () => {
    const cells = [hostile, 'bad\u009b2J', 'a\u2028b\u2029c', '\u202egpj.exe', 'del\u007f', 'tab\there'];
    const table = renderTable(
      [{ header: 'NODE' }, { header: 'DETAIL' }],
      cells.map((cell) => ['n', cell]),
    );
    expect(lines(table.text)).toHaveLength(1 + cells.length);
    expect(logUnsafeCharacter.test(table.text.replace(/\n/g, ''))).toBe(false);
    expect(table.text).toContain('\\u001b]0;pwned\\u0007\\u001b[2J\\nfake-row  ok');
    expect(table.text).toContain('bad\\u009b2J');
    expect(table.text).toContain('a\\u2028b\\u2029c');
    expect(table.text).toContain('\\u202egpj.exe');
    expect(table.text).toContain('tab\\there');
    expect(table.text).not.toMatch(/^fake-row/m);
  });

  test('list cells (node names) are escaped too', () => {
    const table = renderTable([{ header: 'NODES' }], [[{ list: ['a\u001b[2J', 'b'] }]]);
    expect(table.text).toBe('NODES\na\\u001b[2J, b\n');
  });
});

describe('renderTable: width', () => {
  const columns: Column[] = [{ header: 'NODE', min: 12, phase: 2 }, { header: 'STATUS' }, { header: 'DETAIL', min: 12 }];
  const detail =
    'client certificate refused (TLS alert "bad certificate"): groups.org2.tls.certFile (/etc/fabric/org1/client.crt) must be issued by one of the node\'s operations.tls.clientRootCAs';

  test('every line fits the width; the detail is cut with ... before any name', () => {
    const table = renderTable(
      columns,
      [
        ['orderer0.ordererorg', 'tls', detail],
        ['peer0.org1', 'ok', ''],
      ],
      60,
    );
    for (const line of lines(table.text)) expect(displayLength(line)).toBeLessThanOrEqual(60);
    expect(table.text).toMatch(/^orderer0\.ordererorg {2}tls {5}client certificate refused.*\.\.\.$/m);
    expect(table.cut).toBe(1);
  });

  test('names are cut only when the texts are at their minimum', () => {
    const table = renderTable(columns, [['a'.repeat(60), 'tls', detail]], 40);
    for (const line of lines(table.text)) expect(displayLength(line)).toBeLessThanOrEqual(40);
    expect(table.cut).toBe(2);
    // DETAIL at its minimum of 12 characters, the name given the rest: 40 - 2 - 6 - 2 - 12 = 18.
    expect(lines(table.text)[1]).toBe(`${'a'.repeat(15)}...  tls     client ce...`);
  });

  test('without a width (--wide) nothing is cut', () => {
    const table = renderTable(columns, [['orderer0.ordererorg', 'tls', detail]]);
    expect(table.cut).toBe(0);
    expect(table.text).toContain(detail);
  });

  test('an optional column is left out before any cell is cut, and kept when the table fits', () => {
    const withLatency: Column[] = [{ header: 'NODE' }, { header: 'LATENCY', optional: true }, { header: 'DETAIL', min: 12 }];
    const narrow = renderTable(withLatency, [['peer0.org1', '12ms', 'x'.repeat(70)]], 80);
    expect(narrow.dropped).toEqual(['LATENCY']);
    expect(lines(narrow.text)[0]).toBe('NODE        DETAIL');
    const fits = renderTable(withLatency, [['peer0.org1', '12ms', 'ok']], 80);
    expect(fits.dropped).toEqual([]);
    expect(fits.text).toBe('NODE        LATENCY  DETAIL\npeer0.org1  12ms     ok\n');
  });

  test('a list of names keeps whole names and says how many more', () => {
    const names = Array.from({ length: 40 }, (_, index) => `peer${index}.org1`);
    const table = renderTable([{ header: 'VERSION' }, { header: 'NODES', min: 16 }], [['3.0.0', { list: names }]], 50);
    const row = lines(table.text)[1] ?? '';
    expect(displayLength(row)).toBeLessThanOrEqual(50);
    // NODES has 50 - 7 - 2 = 41 characters: two whole names and the count of the others.
    expect(row).toBe('3.0.0    peer0.org1, peer1.org1, +38 more');
  });

  test('the note names what was left out and cut, and how to see it; none when nothing was', () => {
    expect(cutNote({ cut: 3, dropped: ['LATENCY'] }, 80)).toBe('(LATENCY left out and 3 cut to fit 80 columns; --wide or --json shows all)\n');
    expect(cutNote({ cut: 1, dropped: [] }, 80)).toBe('(1 cut to fit 80 columns; --wide or --json shows all)\n');
    expect(cutNote({ cut: 0, dropped: [] }, 80)).toBe('');
  });

  test('cutTo counts a surrogate pair as one character and never splits it', () => {
    expect(cutTo('\u{1F600}'.repeat(10), 5)).toBe(`${'\u{1F600}'.repeat(2)}...`);
    expect(displayLength('\u{1F600}ab')).toBe(3);
  });
});

describe('prose and the width', () => {
  test('a sentence is escaped and wrapped at spaces within the width', () => {
    const text = prose(`no version skew among the 3 nodes that answered, but 2 did not answer: their versions are unknown \u001b[2J`, 40);
    for (const line of lines(text)) expect(displayLength(line)).toBeLessThanOrEqual(40);
    expect(text).toContain('\\u001b[2J');
    expect(lines(text).join(' ')).toBe('no version skew among the 3 nodes that answered, but 2 did not answer: their versions are unknown \\u001b[2J');
  });

  test('a word longer than the width is split', () => {
    expect(prose(`x ${'y'.repeat(25)}`, 10)).toBe(`x\n${'y'.repeat(10)}\n${'y'.repeat(10)}\n${'y'.repeat(5)}\n`);
  });

  test('outputWidth: --wide none; a terminal its columns; else COLUMNS; else 80; never under 40', () => {
    const pipe = new Writable({ write: (_c, _e, done) => done() });
    const tty = Object.assign(new Writable({ write: (_c, _e, done) => done() }), { isTTY: true, columns: 132 });
    expect(outputWidth(pipe, {}, true)).toBeUndefined();
    expect(outputWidth(pipe, {}, false)).toBe(80);
    expect(outputWidth(pipe, { COLUMNS: '100' }, false)).toBe(100);
    expect(outputWidth(pipe, { COLUMNS: 'wide' }, false)).toBe(80);
    expect(outputWidth(tty, { COLUMNS: '100' }, false)).toBe(132);
    expect(outputWidth(pipe, { COLUMNS: '20' }, false)).toBe(40);
  });
});
