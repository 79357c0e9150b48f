/**
 * The `/metrics` body: content negotiation and rendering in the classic text format
 * (0.0.4) or OpenMetrics 1.0.0. Pure logic.
 *
 * prom-client renders both formats itself, but its OpenMetrics path renames counters in
 * place (`x_total` becomes `x` for every later render) and reads the registry-wide content
 * type after an `await`, so concurrent scrapes in different formats can mix them up. We
 * render from the collected values instead; the families are prom-client's.
 */
import { openMetricsContentType, prometheusContentType } from 'prom-client';

export type ExpositionFormat = 'text' | 'openmetrics';

export const contentTypes: Readonly<Record<ExpositionFormat, string>> = {
  text: prometheusContentType,
  openmetrics: openMetricsContentType,
};

export interface Sample {
  readonly value: number;
  readonly labels: Readonly<Record<string, string | number | undefined>>;
  /** Set for histogram and summary samples (`x_bucket`, `x_sum`, `x_count`). */
  readonly metricName?: string;
}

export interface Family {
  readonly name: string;
  readonly help: string;
  /** `counter`, `gauge`, `histogram`, `summary`, anything else is rendered untyped. */
  readonly type: string;
  readonly values: readonly Sample[];
}

interface MediaRange {
  type: string;
  q: number;
  version: string | undefined;
}

function parseAccept(accept: string): MediaRange[] {
  return accept
    .split(',')
    .map((part) => {
      const [rawType = '', ...params] = part.split(';');
      let q = 1;
      let version: string | undefined;
      for (const param of params) {
        const [key = '', value = ''] = param.split('=').map((s) => s.trim());
        if (key.toLowerCase() === 'q') {
          const parsed = Number(value);
          q = Number.isFinite(parsed) ? parsed : 0;
        } else if (key.toLowerCase() === 'version') {
          version = value.replace(/^"|"$/g, '');
        }
      }
      return { type: rawType.trim().toLowerCase(), q, version };
    })
    .filter((range) => range.type !== '');
}

const openMetricsVersions = new Set(['1.0.0', '0.0.1']);

/**
 * OpenMetrics when the client names `application/openmetrics-text` (version 1.0.0 or
 * 0.0.1, or none) with a quality at least that of anything giving the text format
 * (`text/plain`, `text/*`, `*\/*`); the classic text format otherwise, including when
 * there is no Accept header or nothing in it matches.
 */
export function negotiateFormat(accept: string | undefined): ExpositionFormat {
  if (accept === undefined || accept.trim() === '') return 'text';
  let openMetrics = 0;
  let text = 0;
  for (const range of parseAccept(accept)) {
    if (range.type === 'application/openmetrics-text') {
      if (range.version === undefined || openMetricsVersions.has(range.version)) openMetrics = Math.max(openMetrics, range.q);
    } else if (range.type === 'text/plain' || range.type === 'text/*' || range.type === '*/*') {
      text = Math.max(text, range.q);
    }
  }
  return openMetrics > 0 && openMetrics >= text ? 'openmetrics' : 'text';
}

function formatValue(value: number): string {
  if (Number.isNaN(value)) return 'NaN';
  if (value === Infinity) return '+Inf';
  if (value === -Infinity) return '-Inf';
  return String(value);
}

function escapeLabelValue(value: string): string {
  return value.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"');
}

function formatLabels(labels: Sample['labels']): string {
  const parts: string[] = [];
  for (const [name, value] of Object.entries(labels)) {
    if (value === undefined) continue;
    parts.push(`${name}="${escapeLabelValue(typeof value === 'number' ? formatValue(value) : value)}"`);
  }
  return parts.length === 0 ? '' : `{${parts.join(',')}}`;
}

const textTypes = new Set(['counter', 'gauge', 'histogram', 'summary']);

/**
 * About how many characters one piece of the exposition holds. The body is produced and sent
 * in pieces so that a scrape never holds every line of it at once: at 100,000 series the lines
 * of one body, alive together until joined (and the joined string, encoded again for the socket),
 * were about 120 MB of a 460 MB RSS after a few concurrent scrapes (issue 20; README, Performance).
 */
export const defaultChunkChars = 64 * 1024;

/** Lines, in pieces of about `chunkChars` characters, each line ending in `\n`. */
function* inPieces(lines: Iterable<string>, chunkChars: number): Generator<string> {
  let batch: string[] = [];
  let size = 0;
  for (const line of lines) {
    batch.push(line);
    size += line.length + 1;
    if (size >= chunkChars) {
      yield `${batch.join('\n')}\n`;
      batch = [];
      size = 0;
    }
  }
  if (batch.length > 0) yield `${batch.join('\n')}\n`;
}

function* textLines(families: readonly Family[]): Generator<string> {
  for (const family of families) {
    const type = textTypes.has(family.type) ? family.type : 'untyped';
    yield `# HELP ${family.name} ${family.help.replace(/\\/g, '\\\\').replace(/\n/g, '\\n')}`;
    yield `# TYPE ${family.name} ${type}`;
    for (const sample of family.values) {
      yield `${sample.metricName ?? family.name}${formatLabels(sample.labels)} ${formatValue(sample.value)}`;
    }
  }
}

function* openMetricsLines(families: readonly Family[]): Generator<string> {
  for (const family of families) {
    const isCounter = family.type === 'counter';
    const name = isCounter ? family.name.replace(/_total$/, '') : family.name;
    const type = textTypes.has(family.type) ? family.type : 'unknown';
    yield `# TYPE ${name} ${type}`;
    yield `# HELP ${name} ${escapeLabelValue(family.help)}`;
    for (const sample of family.values) {
      const sampleName = sample.metricName ?? (isCounter ? `${name}_total` : name);
      yield `${sampleName}${formatLabels(sample.labels)} ${formatValue(sample.value)}`;
    }
  }
  yield '# EOF';
}

/**
 * The body in the given format as consecutive pieces (their concatenation is the body), made
 * as they are asked for: the values are read when a piece is made.
 */
export function renderChunks(families: readonly Family[], format: ExpositionFormat, chunkChars = defaultChunkChars): Iterable<string> {
  return inPieces(format === 'openmetrics' ? openMetricsLines(families) : textLines(families), chunkChars);
}

/** The classic text format, version 0.0.4. */
export function renderText(families: readonly Family[]): string {
  return [...renderChunks(families, 'text')].join('');
}

/** OpenMetrics 1.0.0: counter families without `_total`, their samples with it, `# EOF` at the end. */
export function renderOpenMetrics(families: readonly Family[]): string {
  return [...renderChunks(families, 'openmetrics')].join('');
}

export function render(families: readonly Family[], format: ExpositionFormat): { contentType: string; body: string } {
  return {
    contentType: contentTypes[format],
    body: format === 'openmetrics' ? renderOpenMetrics(families) : renderText(families),
  };
}
