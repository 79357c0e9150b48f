/**
 * Reading the block heights from a node's /metrics as it streams (src/fleet/channels-read.ts):
 * the recorded /metrics of real Fabric 2.5.12, 3.0.0 and 3.1.5 peers and orderers
 * (../shared/fixtures/fabric-recorded) cut into chunks of every size give the heights their
 * heights-<step>.txt records; a body that is not the Prometheus text, too large, or with more
 * channels than the cap is told apart.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { HeightReader, maxLineBytes, metricsHeadProblem, parseHeightLine, parseLabels, type HeightReading } from '../../../src/fleet/channels-read';
import { recordedHeights, recordedNodes, recordedReleases, releaseDir } from '../../support/fabric-double';

const limits = { maxBytes: 16 * 1024 * 1024, maxChannels: 500 };

/** Feeds `body` in chunks of `size` bytes until the reader stops; its end. */
function read(body: Buffer | string, size: number, options = limits): HeightReading | { problem: string } {
  const bytes = typeof body === 'string' ? Buffer.from(body) : body;
  const reader = new HeightReader(options);
  for (let offset = 0; offset < bytes.length; offset += size) {
    const step = reader.write(bytes.subarray(offset, offset + size));
    if (step !== null) break;
  }
  return reader.end();
}

function heights(result: HeightReading | { problem: string }): Record<string, number> {
  if ('problem' in result) throw new Error(`expected heights, got the problem: ${result.problem}`);
  return Object.fromEntries(result.heights);
}

function problem(result: HeightReading | { problem: string }): string {
  if (!('problem' in result)) throw new Error(`expected a problem, got heights ${JSON.stringify(Object.fromEntries(result.heights))}`);
  return result.problem;
}

const recordings = recordedReleases.flatMap((release) =>
  recordedNodes(release).flatMap((node) =>
    [0, 1, 2, 3]
      .map((step) => ({ release, node: node.name, step, file: path.join(releaseDir(release), 'nodes', node.name, `metrics-${step}.txt`) }))
      .filter((entry) => existsSync(entry.file)),
  ),
);

describe('the recorded /metrics of real peers and orderers', () => {
  test('every release, node and step was recorded (a node stopped at step 2 has none)', () => {
    expect(recordings).toHaveLength(3 * (5 * 4 - 1));
  });

  test.each(recordings.map((entry) => [entry.release, entry.node, entry.step, entry.file] as const))(
    '%s %s step %d: the heights of heights-<step>.txt, in chunks of 1 to all bytes, the read stopped after the family',
    (release, node, step, file) => {
      const body = readFileSync(file);
      const expected = recordedHeights(release, step).get(node);
      // The reader stops at the end of the first line after the height family: at most one chunk past it.
      const familyEnd = body.indexOf('\n', body.indexOf('\n', body.lastIndexOf('ledger_blockchain_height{')) + 1) + 1;
      for (const size of [1, 7, 100, 1023, 4096, 16_384, body.length]) {
        const result = read(body, size);
        expect({ size, heights: heights(result) }).toEqual({ size, heights: expected });
        const reading = result as HeightReading;
        // Families after ledger_blockchain_height (ledger_*, logging_*, process_*, ...) are not read.
        expect({ size, stoppedEarly: reading.stoppedEarly, dropped: reading.dropped }).toEqual({ size, stoppedEarly: true, dropped: 0 });
        expect({ size, bytes: reading.bytes <= familyEnd + size - 1 }).toEqual({ size, bytes: true });
      }
    },
  );
});

describe('a height line', () => {
  test("Fabric's line; labels in any order, escapes, a timestamp, Go's float formatting of large heights", () => {
    expect(parseHeightLine('ledger_blockchain_height{channel="ch1"} 4')).toEqual({ channel: 'ch1', height: 4 });
    expect(parseHeightLine('ledger_blockchain_height{ peer="p\\"0\\\\", channel = "a.b-c" ,} 12 1700000000000')).toEqual({ channel: 'a.b-c', height: 12 });
    expect(parseHeightLine('ledger_blockchain_height{channel="ch1"} 1e+06')).toEqual({ channel: 'ch1', height: 1_000_000 });
    expect(parseHeightLine('ledger_blockchain_height{channel="ch1"} 1.234567e+06')).toEqual({ channel: 'ch1', height: 1_234_567 });
  });

  test.each([
    ['ledger_blockchain_height 4', 'without a channel label'],
    ['ledger_blockchain_height{channel="Ch1"} 4', 'not a Fabric channel name'],
    ['ledger_blockchain_height{channel=""} 4', 'not a Fabric channel name'],
    ['ledger_blockchain_height{channel="ch1"} 4.5', 'not a block count'],
    ['ledger_blockchain_height{channel="ch1"} -1', 'not a block count'],
    ['ledger_blockchain_height{channel="ch1"} NaN', 'not a block count'],
    ['ledger_blockchain_height{channel="ch1"}', 'not a block count'],
    ['ledger_blockchain_height{channel="ch1"} 4 5 6', 'not a block count'],
    ['ledger_blockchain_height{channel="ch1" 4', 'labels are not closed'],
    ['ledger_blockchain_height{channel="ch1",channel="ch2"} 4', 'given twice'],
    ['ledger_blockchain_height{channel=ch1} 4', 'labels cannot be read'],
  ])('%s: refused (%s), quoting the line', (line, why) => {
    const parsed = parseHeightLine(line);
    expect('problem' in parsed ? parsed.problem : '').toContain(why);
    expect('problem' in parsed ? parsed.problem : '').toContain(JSON.stringify(line).slice(0, 30));
  });

  test('label pairs: the escapes of the text format', () => {
    expect(parseLabels('a="x\\ny",b="\\"q\\""')).toEqual(
      new Map([
        ['a', 'x\ny'],
        ['b', '"q"'],
      ]),
    );
    expect(parseLabels('a="x\\t"')).toBe('the value of the label a has an unknown escape');
  });
});

describe('the head of the answer', () => {
  test('200 with the text format or OpenMetrics (or no type) is read; another status or type is refused, named', () => {
    expect(metricsHeadProblem(200, 'text/plain; version=0.0.4; charset=utf-8')).toBeNull();
    expect(metricsHeadProblem(200, 'application/openmetrics-text; version=1.0.0; charset=utf-8')).toBeNull();
    expect(metricsHeadProblem(200, undefined)).toBeNull();
    expect(metricsHeadProblem(200, 'application/json')).toBe(
      '/metrics answered Content-Type "application/json", not the Prometheus text format (text/plain or application/openmetrics-text)',
    );
    expect(metricsHeadProblem(404, 'text/plain; charset=utf-8')).toBe('/metrics answered 404, not 200 with the Prometheus text');
  });
});

describe('bad bodies', () => {
  const sample = (channel: string, height: number): string => `ledger_blockchain_height{channel="${channel}"} ${height}\n`;

  test.each([
    ['JSON', '{"status":"OK"}\n', 'line 1 is neither a comment nor a sample: "{\\"status\\":\\"OK\\"}"'],
    ['HTML', '<html><body>hello</body></html>', 'line 1 is neither a comment nor a sample: "<html><body>hello</body></html>"'],
    ['a line that is not a sample', '# HELP a A.\na 1\n=broken\n', 'line 3 is neither a comment nor a sample: "=broken"'],
    ['a name followed by neither labels nor a value', 'go_goroutines:12\n', 'line 1 is neither a comment nor a sample'],
  ])('%s: not the Prometheus text format, the line named', (_what, body, expected) => {
    for (const size of [1, 5, 4096]) expect(problem(read(body, size))).toContain(expected);
  });

  test('more than maxBytes before the height family ends: refused, and the reader stops', () => {
    const filler = `# HELP filler ${'x'.repeat(100)}\n`.repeat(2000);
    const body = Buffer.from(filler + sample('ch1', 3));
    const reader = new HeightReader({ maxBytes: 64 * 1024, maxChannels: 10 });
    let fed = 0;
    for (let offset = 0; offset < body.length; offset += 4096) {
      fed += 1;
      if (reader.write(body.subarray(offset, offset + 4096)) !== null) break;
    }
    expect(fed).toBe(Math.ceil((64 * 1024 + 1) / 4096));
    expect(problem(reader.end())).toBe('/metrics is larger than channels.maxMetricsBytes (65536 bytes); not read further');
  });

  test('a line of another family longer than maxLineBytes is skipped without being kept; a height line that long is refused', () => {
    const long = `go_info{version="${'v'.repeat(100_000)}"} 1\n`;
    expect(heights(read(long + sample('ch1', 3), 4096))).toEqual({ ch1: 3 });
    const longHeight = `ledger_blockchain_height{channel="ch1",extra="${'e'.repeat(maxLineBytes)}"} 3\n`;
    expect(problem(read(longHeight, 512))).toBe(`line 1 of /metrics, a ledger_blockchain_height sample, is longer than ${maxLineBytes} bytes`);
    expect(problem(read(longHeight, longHeight.length))).toContain('line 1 of /metrics');
  });

  test('thousands of channels: maxChannels kept in the order of the body, the others counted', () => {
    const body = Array.from({ length: 5000 }, (_, index) => sample(`ch${index}`, index + 1)).join('') + 'logging_entries_checked{level="info"} 1\n';
    const result = read(body, 8192, { maxBytes: limits.maxBytes, maxChannels: 100 }) as HeightReading;
    expect(result.heights.size).toBe(100);
    expect([...result.heights.keys()].slice(0, 3)).toEqual(['ch0', 'ch1', 'ch2']);
    expect(result.heights.get('ch99')).toBe(100);
    expect(result.dropped).toBe(4900);
    expect(result.stoppedEarly).toBe(true);
  });

  test('the same channel twice: the highest; CRLF line ends; no height family at all: no channel, the body read to its end', () => {
    expect(heights(read(sample('ch1', 3) + sample('ch1', 5) + sample('ch1', 4), 3))).toEqual({ ch1: 5 });
    expect(heights(read('# TYPE ledger_blockchain_height gauge\r\nledger_blockchain_height{channel="ch1"} 7\r\n\r\n', 2))).toEqual({ ch1: 7 });
    const none = read('# HELP go_goroutines Goroutines.\ngo_goroutines 12\n', 4) as HeightReading;
    expect({ heights: heights(none), stoppedEarly: none.stoppedEarly, bytes: none.bytes }).toEqual({ heights: {}, stoppedEarly: false, bytes: 50 });
    expect(heights(read('', 1))).toEqual({});
  });

  test('the last line without a newline is read; a bad height line names its line number', () => {
    expect(heights(read('a 1\nledger_blockchain_height{channel="ch1"} 9', 4))).toEqual({ ch1: 9 });
    expect(problem(read('a 1\nb 2\nledger_blockchain_height{channel="ch1"} x\n', 4))).toContain(
      'line 3 of /metrics: a ledger_blockchain_height sample whose value is not a block count',
    );
  });
});
