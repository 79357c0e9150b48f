/**
 * Text from outside (a configuration value, a request body, a runtime's or an API's answer) echoed
 * in an error or a log line: the one way every echo is bounded, so that no line grows with what
 * was sent. A cut text ends with `... (N characters)`, N its whole length; a cut never splits a
 * surrogate pair.
 */

/** Where to cut `text` at about `max` characters without splitting a surrogate pair. */
function cutAt(text: string, max: number): number {
  const code = text.charCodeAt(max - 1);
  return code >= 0xd800 && code <= 0xdbff ? max + 1 : max;
}

/** `text` when it has at most `max` characters, else its head and `... (N characters)`. */
export function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, cutAt(text, max))}... (${text.length} characters)`;
}

/**
 * The characters a log line never carries as they are: the C0 controls, DEL and the C1 controls
 * (a newline forges a line, ESC drives the terminal), the line and paragraph separators, and the
 * bidirectional controls (U+200E/200F, U+061C, U+202A-202E, U+2066-2069), which reorder what a
 * terminal or an editor shows (`U+202E` makes `gpj.exe` read `exe.jpg`).
 */
// eslint-disable-next-line no-control-regex -- finding control characters is the point: they are escaped
export const logUnsafeCharacter = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/;
const logUnsafeCharacters = new RegExp(logUnsafeCharacter.source, 'g');

function escapeOne(character: string): string {
  // JSON's short forms for the C0 controls (`\n`, `\t`, `\u0007`); `\u202e` for the rest, which JSON leaves as they are.
  const json = JSON.stringify(character);
  return json.length > 3 ? json.slice(1, -1) : `\\u${character.charCodeAt(0).toString(16).padStart(4, '0')}`;
}

/**
 * `text` with every logUnsafeCharacter written as its JSON escape (`\n`, `\u001b`, `\u202e`), so
 * that it shows as what it is and stays on one line. Inside a JSON string the result is still
 * JSON, with the same value: the log formats apply it to whole JSON texts.
 */
export function escapeForLog(text: string): string {
  return text.replace(logUnsafeCharacters, escapeOne);
}

/**
 * `text` quoted, bounded as `clip`: `json` quotes as JSON (escapes included: a value with control
 * or bidirectional characters stays on one line and shows as it is, see escapeForLog), `single`
 * as Fabric's own messages quote ('text', nothing escaped). The marker goes after the closing
 * quote: `"head"... (N characters)`.
 */
export function quote(text: string, max: number, style: 'json' | 'single' = 'json'): string {
  const wrap = (part: string): string => (style === 'json' ? escapeForLog(JSON.stringify(part)) : `'${part}'`);
  return text.length <= max ? wrap(text) : `${wrap(text.slice(0, cutAt(text, max)))}... (${text.length} characters)`;
}

/** `text` on one line (white space collapsed), bounded as `clip`; only its head is looked at (it may be megabytes). */
export function oneLine(text: string, max: number): string {
  const head = text.slice(0, max * 4);
  const line = head.replace(/\s+/g, ' ').trim();
  if (line.length <= max && head.length === text.length) return line;
  return `${line.slice(0, cutAt(line, Math.min(max, line.length)))}... (${text.length} characters)`;
}
