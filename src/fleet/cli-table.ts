/**
 * The tables and lines of `fabric-ops fleet` (src/fleet/cli.ts). Pure. Every cell and line built
 * from what a node or a client sent is escaped (src/text.ts escapeForLog: C0 and C1 controls, DEL,
 * U+2028/2029, bidirectional controls), so that a node's text can neither drive the terminal nor
 * forge a row; a table fits the width it is given, its widest columns cut with `...`, and says
 * how many cells it cut (`--wide` shows them whole).
 */
import { escapeForLog } from '../text';

/** A list of names: cut to the names that fit and `+N more`. */
export interface ListCell {
  list: readonly string[];
}

export type Cell = string | ListCell;

export interface Column {
  header: string;
  /** The narrowest this column is cut to when the table is too wide; absent: never cut. */
  min?: number;
  /** Columns of a lower phase are cut first (default 1): texts (details, specs) before names (2). */
  phase?: number;
  /** Left out, before any cell is cut, when the table is wider than its width (a latency, say). */
  optional?: boolean;
}

export interface Table {
  text: string;
  /** Cells cut to fit. */
  cut: number;
  /** Headers of the optional columns left out to fit. */
  dropped: string[];
}

const gap = '  ';
const ellipsis = '...';

/** Characters as a terminal counts them, near enough: code points (a surrogate pair is one). */
export function displayLength(text: string): number {
  let length = 0;
  for (let index = 0; index < text.length; index += 1) {
    const code = text.charCodeAt(index);
    if (code >= 0xd800 && code <= 0xdbff && index + 1 < text.length) index += 1;
    length += 1;
  }
  return length;
}

/** The first `count` code points of `text`. */
function head(text: string, count: number): string {
  let taken = 0;
  let index = 0;
  while (index < text.length && taken < count) {
    const code = text.charCodeAt(index);
    index += code >= 0xd800 && code <= 0xdbff && index + 1 < text.length ? 2 : 1;
    taken += 1;
  }
  return text.slice(0, index);
}

/** `text` in at most `width` characters, its end replaced by `...` when cut. */
export function cutTo(text: string, width: number): string {
  if (displayLength(text) <= width) return text;
  if (width <= ellipsis.length) return head(ellipsis, width);
  return `${head(text, width - ellipsis.length)}${ellipsis}`;
}

/** Names joined by `, ` in at most `width` characters: as many whole names as fit, then `+N more`. */
function listTo(names: readonly string[], width: number): string {
  const whole = names.join(', ');
  if (displayLength(whole) <= width) return whole;
  for (let kept = names.length - 1; kept >= 1; kept -= 1) {
    const text = `${names.slice(0, kept).join(', ')}, +${names.length - kept} more`;
    if (displayLength(text) <= width) return text;
  }
  return cutTo(`${names[0] ?? ''}, +${names.length - 1} more`, width);
}

function wholeText(cell: Cell): string {
  return typeof cell === 'string' ? escapeForLog(cell) : cell.list.map(escapeForLog).join(', ');
}

/**
 * Columns padded to their widest cell, two spaces apart. With `width`, a table wider than that
 * has its cuttable columns (`min`) narrowed, widest first, down to their `min`, and their cells
 * cut; without, nothing is cut (`--wide`). Cells are escaped here.
 */
export function renderTable(allColumns: readonly Column[], allRows: ReadonlyArray<readonly Cell[]>, width?: number): Table {
  let columns = allColumns;
  let rows = allRows;
  let dropped: string[] = [];
  if (
    width !== undefined &&
    allColumns.some((column) => column.optional === true) &&
    renderTable(allColumns, allRows)
      .text.split('\n')
      .some((line) => displayLength(line) > width)
  ) {
    const kept = allColumns.flatMap((column, index) => (column.optional === true ? [] : [index]));
    dropped = allColumns.filter((column) => column.optional === true).map((column) => column.header);
    columns = kept.map((index) => allColumns[index] as Column);
    rows = allRows.map((row) => kept.map((index) => row[index] ?? ''));
  }
  const texts = rows.map((row) => columns.map((_column, index) => wholeText(row[index] ?? '')));
  const widths = columns.map((column, index) => Math.max(displayLength(column.header), ...texts.map((row) => displayLength(row[index] ?? ''))));
  const total = (): number => widths.reduce((sum, each) => sum + each, 0) + gap.length * (columns.length - 1);
  if (width !== undefined) {
    let over = total() - width;
    const phases = [...new Set(columns.map((column) => column.phase ?? 1))].sort((a, b) => a - b);
    for (const phase of phases) {
      while (over > 0) {
        // The widest column of this phase that can still give something gives one character.
        let widest = -1;
        for (const [index, column] of columns.entries()) {
          if ((column.phase ?? 1) !== phase) continue;
          const floor = Math.max(column.min ?? Infinity, displayLength(column.header));
          if ((widths[index] ?? 0) > floor && (widest === -1 || (widths[index] ?? 0) > (widths[widest] ?? 0))) widest = index;
        }
        if (widest === -1) break;
        widths[widest] = (widths[widest] ?? 0) - 1;
        over -= 1;
      }
    }
  }
  let cut = 0;
  const fitted = rows.map((row, rowIndex) =>
    columns.map((_column, index) => {
      const text = texts[rowIndex]?.[index] ?? '';
      const room = widths[index] ?? 0;
      if (displayLength(text) <= room) return text;
      cut += 1;
      const cell = row[index];
      return typeof cell === 'object' ? listTo(cell.list.map(escapeForLog), room) : cutTo(text, room);
    }),
  );
  const line = (cells: readonly string[]): string =>
    cells
      .map((cell, index) => (index === cells.length - 1 ? cell : cell + ' '.repeat(Math.max(0, (widths[index] ?? 0) - displayLength(cell)))))
      .join(gap)
      .trimEnd();
  return { text: [line(columns.map((column) => column.header)), ...fitted.map(line)].join('\n') + '\n', cut, dropped };
}

/**
 * A sentence built from node or client text, escaped and wrapped at `width` (at spaces; a word
 * longer than the width is cut into pieces). Without `width`, one line.
 */
export function prose(text: string, width?: number): string {
  const escaped = escapeForLog(text);
  if (width === undefined || displayLength(escaped) <= width) return `${escaped}\n`;
  const lines: string[] = [];
  let current = '';
  for (const word of escaped.split(' ')) {
    let rest = word;
    while (displayLength(rest) > width) {
      if (current !== '') {
        lines.push(current);
        current = '';
      }
      const piece = head(rest, width);
      lines.push(piece);
      rest = rest.slice(piece.length);
    }
    if (current === '') current = rest;
    else if (displayLength(current) + 1 + displayLength(rest) <= width) current = `${current} ${rest}`;
    else {
      lines.push(current);
      current = rest;
    }
  }
  if (current !== '') lines.push(current);
  return `${lines.join('\n')}\n`;
}

/** The line under a table that left out columns or cut cells: what, and how to see them whole. */
export function cutNote(table: Pick<Table, 'cut' | 'dropped'>, width: number): string {
  const { cut, dropped } = table;
  if (cut === 0 && dropped.length === 0) return '';
  const what = [...(dropped.length > 0 ? [`${dropped.join(', ')} left out`] : []), ...(cut > 0 ? [`${cut} cut`] : [])].join(' and ');
  return prose(`(${what} to fit ${width} columns; --wide or --json shows all)`, width);
}

/** The width a table is cut to: the terminal's when the output is one, else COLUMNS, else 80; never under 40. None with --wide. */
export function outputWidth(out: NodeJS.WritableStream, env: NodeJS.ProcessEnv, wide: boolean): number | undefined {
  if (wide) return undefined;
  const tty = out as NodeJS.WritableStream & { isTTY?: boolean; columns?: number };
  const fromEnv = Number(env.COLUMNS);
  const columns =
    tty.isTTY === true && typeof tty.columns === 'number' && tty.columns > 0 ? tty.columns : Number.isInteger(fromEnv) && fromEnv > 0 ? fromEnv : 80;
  return Math.max(40, columns);
}
