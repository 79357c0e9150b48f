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
 * `text` quoted, bounded as `clip`: `json` quotes as JSON (escapes included: a value with control
 * characters stays on one line), `single` as Fabric's own messages quote ('text', nothing escaped).
 * The marker goes after the closing quote: `"head"... (N characters)`.
 */
export function quote(text: string, max: number, style: 'json' | 'single' = 'json'): string {
  const wrap = (part: string): string => (style === 'json' ? JSON.stringify(part) : `'${part}'`);
  return text.length <= max ? wrap(text) : `${wrap(text.slice(0, cutAt(text, max)))}... (${text.length} characters)`;
}

/** `text` on one line (white space collapsed), bounded as `clip`; only its head is looked at (it may be megabytes). */
export function oneLine(text: string, max: number): string {
  const head = text.slice(0, max * 4);
  const line = head.replace(/\s+/g, ' ').trim();
  if (line.length <= max && head.length === text.length) return line;
  return `${line.slice(0, cutAt(line, Math.min(max, line.length)))}... (${text.length} characters)`;
}
