/**
 * `fabric-ops fleet channels` (GET /fleet/channels, docs/fleet-channels.md): one row per channel
 * and node (orderers, then peers, then the others), its height, lag and status, and a verdict.
 * Pure: the answer in, the text out (src/fleet/cli-table.ts escapes and fits it).
 */
import { cutNote, prose, renderTable, type Cell, type Column } from './cli-table';

type Json = Record<string, unknown>;
const str = (value: unknown): string => (typeof value === 'string' ? value : value === undefined || value === null ? '' : JSON.stringify(value));
const list = (value: unknown): Json[] => (Array.isArray(value) ? (value as Json[]).filter((item) => typeof item === 'object' && item !== null) : []);
const count = (value: unknown): number => (typeof value === 'number' && Number.isFinite(value) ? value : 0);
const plural = (n: number, one: string, many = `${one}s`): string => `${n} ${n === 1 ? one : many}`;

/** Pure: a duration in ms as `45s`, `2m10s`, `3h5m` (`0s` under a second). */
export function durationText(ms: number): string {
  const seconds = Math.floor(Math.max(0, ms) / 1000);
  if (seconds < 60) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return seconds % 60 === 0 ? `${minutes}m` : `${minutes}m${seconds % 60}s`;
  const hours = Math.floor(minutes / 60);
  return minutes % 60 === 0 ? `${hours}h` : `${hours}h${minutes % 60}m`;
}

/** What the DETAIL column says of a node on a channel, short (the column is cut first): how long unchanged, how long lagging (of behindFor), why not read. */
function detail(node: Json, behindForMs: number): string {
  const status = str(node.status);
  if (status === 'stalled') return `unchanged ${durationText(count(node.unchangedMs))}`;
  if (status === 'behind') return `lagging ${durationText(count(node.laggingMs))}`;
  if (status === 'ok') return typeof node.laggingMs === 'number' ? `lagging ${durationText(node.laggingMs)}/${durationText(behindForMs)}` : '';
  return str(node.error);
}

/** The answer of GET /fleet/channels as a table and a verdict; partial (exit 1) when a node is behind, stalled or not read. */
export function renderChannels(body: Json, width: number | undefined, wide: boolean): { text: string; partial: boolean } {
  const settings = (typeof body.settings === 'object' && body.settings !== null ? body.settings : {}) as Json;
  const behindForMs = count(settings.behindForMs);
  const behindBlocks = count(settings.behindBlocks);
  const columns: Column[] = [
    { header: 'CHANNEL', min: 8, phase: 2 },
    { header: 'NODE', min: 12, phase: 2 },
    ...(wide ? [{ header: 'GROUP' }] : []),
    // The order of the rows keeps orderers and peers apart: the dialect goes first when the table is too wide.
    { header: 'DIALECT', optional: true },
    { header: 'HEIGHT' },
    { header: 'LAG' },
    { header: 'STATUS' },
    { header: 'DETAIL', min: 14 },
  ];
  const rows: Cell[][] = [];
  const row = (channel: string, node: Json, height: string, lag: string, text: string): void => {
    rows.push([channel, str(node.name), ...(wide ? [str(node.group)] : []), str(node.dialect), height, lag, str(node.status), text]);
  };
  const listed = new Set<string>();
  for (const channel of list(body.channels)) {
    for (const node of [...list(channel.orderers), ...list(channel.peers), ...list(channel.others)]) {
      listed.add(str(node.name));
      row(str(channel.channel), node, str(node.height), str(node.lag), detail(node, behindForMs));
    }
  }
  const nodes = list(body.nodes);
  // A node not read and with no channel known (never read): a row of its own.
  for (const node of nodes) if (node.status !== 'ok' && !listed.has(str(node.name))) row('-', node, '-', '-', str(node.error));
  const table = renderTable(columns, rows, width);
  let text = table.text + (width === undefined ? '' : cutNote(table, width));

  const summary = (typeof body.summary === 'object' && body.summary !== null ? body.summary : {}) as Json;
  const [behind, stalled, unreadable] = [count(summary.behind), count(summary.stalled), count(summary.unreadable)];
  const none = nodes.filter((node) => node.status === 'ok' && count(node.channels) === 0).map((node) => str(node.name));
  if (none.length > 0) text += prose(`answered with no channel: ${none.join(', ')}`, width);
  for (const node of nodes.filter((entry) => count(entry.channelsDropped) > 0)) {
    text += prose(
      `${str(node.name)}: ${plural(count(node.channelsDropped), 'channel')} past channels.maxChannels (${str(settings.maxChannels)}) not read`,
      width,
    );
  }
  if (unreadable > 0) text += prose('a node not read shows the height it had when last read, and its lag from the highest now', width);
  if (typeof body.reason === 'string') text += prose(body.reason, width);
  const problems = [
    ...(behind > 0 ? [`${behind} behind`] : []),
    ...(stalled > 0 ? [`${stalled} stalled`] : []),
    ...(unreadable > 0 ? [`${plural(unreadable, 'node')} not read`] : []),
  ];
  const verdict =
    `${plural(count(summary.channels), 'channel')} on ${plural(count(summary.nodes), 'node')}: ` +
    (problems.length === 0 ? 'every node keeps up' : problems.join(', ')) +
    ` (behind: more than ${plural(behindBlocks, 'block')} below the highest for ${durationText(behindForMs)})`;
  text += prose(verdict, width);
  return { text, partial: problems.length > 0 || typeof body.reason === 'string' };
}
