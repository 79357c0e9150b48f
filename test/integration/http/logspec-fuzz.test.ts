import http from 'node:http';
import { gzipSync } from 'node:zlib';
import { startOperationsSystem, type OperationsSystem } from '../../../src/system';
import { testConfig } from '../../support/config';
import { LogCapture } from '../../support/log-capture';
import { seededRandom } from '../../support/random';

/**
 * 10,000+ generated PUT /logspec bodies from a fixed seed, against the real server over one
 * kept-alive connection at a time. After every answer: no 5xx, errors are {"error": "..."}
 * JSON, a refusal left the spec as it was, and an accepted spec reads back in a form that can
 * be PUT back unchanged.
 */

const seed = 0x5eed_f00d;
const cases = 10_000;

type Expected = 'accepted' | 'refused400' | 'tooLarge' | 'encoding';

interface FuzzCase {
  kind: string;
  body: Buffer;
  headers: Record<string, string>;
  expected: Expected;
}

const levels = ['payload', 'debug', 'info', 'warn', 'warning', 'error', 'dpanic', 'panic', 'fatal', 'notice', 'critical'];
const nameChars = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_#-';
const unicode = ['é', 'ß', 'λ', '中文', '🙂', '\u202e', '\u0000', '\ufeff', '\ud800', '\udfff', 'Ａ', '\u200b', '\t', '\n', '"', '\\'];

class Generator {
  constructor(private readonly random: () => number) {}

  int(max: number): number {
    return Math.floor(this.random() * max);
  }
  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)] as T;
  }
  chance(p: number): boolean {
    return this.random() < p;
  }
  word(max = 8): string {
    return Array.from({ length: 1 + this.int(max) }, () => this.pick([...nameChars])).join('');
  }
  level(): string {
    const level = this.pick(levels);
    return this.chance(0.3) ? level.toUpperCase() : level;
  }
  loggerName(): string {
    const name = Array.from({ length: 1 + this.int(3) }, () => this.word()).join('.');
    return this.chance(0.1) ? `${name}.` : name;
  }
  validSpec(): string {
    const segments = Array.from({ length: this.int(5) }, () => `${Array.from({ length: 1 + this.int(3) }, () => this.loggerName()).join(',')}=${this.level()}`);
    if (this.chance(0.7)) segments.splice(this.int(segments.length + 1), 0, this.level());
    if (this.chance(0.05)) segments.push('');
    return segments.join(':');
  }
  invalidSpec(): string {
    const valid = this.validSpec() || 'info';
    switch (this.int(8)) {
      case 0:
        return `${valid}:${this.pick(['Debug', 'dEBUG', 'verbose', 'trace', 'INFO2'])}`;
      case 1:
        return `${valid}:=debug`;
      case 2:
        return `${valid}:a=b=c`;
      case 3:
        return `${valid}:${this.word()}=${this.pick(['', 'Warn', 'x'])}`;
      case 4:
        return `${valid}:${this.pick(['a..b', '.a', 'a b', 'a/b', 'a$'])}=debug`;
      case 5:
        return `${this.pick(unicode)}${valid}`;
      case 6:
        return `${valid}:${this.pick(unicode)}=info`;
      default:
        return `${valid}:${this.word()},=${this.level()}`;
    }
  }
  jsonValue(depth = 0): unknown {
    switch (depth > 3 ? this.int(4) : this.int(7)) {
      case 0:
        return this.int(1000) - 500;
      case 1:
        return this.chance(0.5);
      case 2:
        return null;
      case 3:
        return this.word(20) + this.pick(unicode);
      case 4:
        return this.random() * 1e6;
      case 5:
        return Array.from({ length: this.int(4) }, () => this.jsonValue(depth + 1));
      default:
        return Object.fromEntries(Array.from({ length: this.int(4) }, () => [this.word(), this.jsonValue(depth + 1)]));
    }
  }
  deep(): string {
    const depth = 100 + this.int(5000);
    const [open, close] = this.pick([
      ['[', ']'],
      ['{"a":', '}'],
      ['[{"x":', '}]'],
    ] as const);
    const inner = this.pick(['1', '"x"', 'null', '[]']);
    return `${open.repeat(depth)}${inner}${close.repeat(depth)}`.slice(0, 16_000);
  }

  next(): FuzzCase {
    const json = (value: unknown, expected: Expected, kind: string): FuzzCase => ({
      kind,
      body: Buffer.from(JSON.stringify(value)),
      headers: {},
      expected,
    });
    const roll = this.int(100);
    if (roll < 30) return json({ spec: this.validSpec() }, 'accepted', 'valid spec');
    if (roll < 45) return json({ spec: this.invalidSpec() }, 'refused400', 'invalid spec');
    if (roll < 53) return json({ spec: this.jsonValue() }, 'refused400', 'spec of another type');
    if (roll < 58) return json(this.pick([[], null, 5, 'debug', true, [{ spec: 'debug' }]]), 'refused400', 'not an object');
    if (roll < 63) return json({ spec: this.validSpec(), [this.word()]: this.jsonValue() }, 'refused400', 'extra property');
    if (roll < 66) return json({ Spec: this.validSpec() }, 'refused400', 'no spec');
    if (roll < 72) {
      const body = this.chance(0.5) ? `{"spec":${this.deep()}}` : this.deep();
      return { kind: 'deep nesting', body: Buffer.from(body.slice(0, 16_000)), headers: {}, expected: 'refused400' };
    }
    if (roll < 76) {
      // Huge but valid: many segments up to about the limit.
      const segment = `${this.word(6)}=${this.level()}`;
      const spec = Array.from({ length: 1 + this.int(1200) }, () => segment).join(':');
      const body = Buffer.from(JSON.stringify({ spec }));
      return { kind: 'huge spec', body, headers: {}, expected: body.length > 16 * 1024 ? 'tooLarge' : 'accepted' };
    }
    if (roll < 79) {
      const body = Buffer.from(JSON.stringify({ spec: 'x'.repeat(16 * 1024 + this.int(50_000)) }));
      return { kind: 'over the limit', body, headers: this.chance(0.5) ? { 'transfer-encoding': 'chunked' } : {}, expected: 'tooLarge' };
    }
    if (roll < 85) {
      const valid = JSON.stringify({ spec: this.validSpec() });
      const cut = valid.slice(0, this.int(valid.length));
      const garbage = Array.from({ length: this.int(40) }, () => String.fromCharCode(this.int(128))).join('');
      return { kind: 'malformed JSON', body: Buffer.from(this.chance(0.5) ? cut : garbage + cut), headers: {}, expected: 'refused400' };
    }
    if (roll < 90) {
      const text = Buffer.from(JSON.stringify({ spec: this.validSpec() }));
      const bad = this.pick([[0xc3, 0x28], [0xff], [0xed, 0xa0, 0x80], [0xe2, 0x82], [0xf8, 0x88, 0x80, 0x80, 0x80], [0xc0, 0xaf]]);
      const at = 9 + this.int(Math.max(1, text.length - 11));
      return { kind: 'bad UTF-8', body: Buffer.concat([text.subarray(0, at), Buffer.from(bad), text.subarray(at)]), headers: {}, expected: 'refused400' };
    }
    if (roll < 95) {
      const valid = Buffer.from(JSON.stringify({ spec: this.validSpec() }));
      const encoding = this.pick(['gzip', 'GZIP', 'deflate', 'br', 'Br', 'x-gzip', 'compress', 'gzip, identity', 'zstd', 'identity;q=1']);
      const compressed = gzipSync(valid);
      const body = this.pick([valid, compressed, compressed.subarray(0, this.int(compressed.length))]);
      return { kind: 'content encoding', body, headers: { 'content-encoding': encoding }, expected: 'encoding' };
    }
    const spec = this.validSpec();
    const variant = this.int(4);
    if (variant === 0) return { kind: 'BOM', body: Buffer.from(`\ufeff${JSON.stringify({ spec })}`), headers: {}, expected: 'accepted' };
    if (variant === 1) return { kind: 'UTF-16', body: Buffer.from(`\ufeff${JSON.stringify({ spec })}`, 'utf16le'), headers: {}, expected: 'refused400' };
    if (variant === 2) {
      return {
        kind: 'odd Content-Type',
        body: Buffer.from(JSON.stringify({ spec })),
        headers: { 'content-type': this.pick(['text/plain; charset=latin1', 'application/x-www-form-urlencoded', 'image/png', '???']) },
        expected: 'accepted',
      };
    }
    return { kind: 'chunked', body: Buffer.from(JSON.stringify({ spec })), headers: { 'transfer-encoding': 'chunked' }, expected: 'accepted' };
  }
}

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

describe(`PUT /logspec fuzzed with ${cases} bodies (seed ${seed.toString(16)})`, () => {
  let system: OperationsSystem;
  let agent: http.Agent;
  beforeAll(async () => {
    system = await startOperationsSystem({ config: testConfig(), env: {}, logStream: new LogCapture() });
    agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  });
  afterAll(async () => {
    agent.destroy();
    await system.stop();
  });

  function send(method: string, body?: Buffer, headers: Record<string, string> = {}): Promise<Answer> {
    return new Promise((resolve, reject) => {
      const chunked = headers['transfer-encoding'] === 'chunked';
      const req = http.request(
        system.url + '/logspec',
        { method, agent, headers: body && !chunked ? { ...headers, 'content-length': String(body.length) } : headers, timeout: 15_000 },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
          res.on('error', reject);
        },
      );
      req.on('timeout', () => req.destroy(new Error('timed out')));
      // A server that answers early and closes may cut our upload: that is its right, the answer counts.
      req.on('error', reject);
      if (body && chunked) {
        for (let offset = 0; offset < body.length; offset += 4096) req.write(body.subarray(offset, offset + 4096));
        req.end();
      } else {
        req.end(body);
      }
    });
  }

  async function currentSpec(): Promise<string> {
    const answer = await send('GET');
    expect(answer.status).toBe(200);
    return (JSON.parse(answer.body) as { spec: string }).spec;
  }

  it('never answers 5xx, always answers errors in JSON, and applies a spec whole or not at all', async () => {
    const generate = new Generator(seededRandom(seed));
    const tally: Record<string, number> = {};
    let spec = await currentSpec();
    for (let index = 0; index < cases; index += 1) {
      const fuzz = generate.next();
      const context = `case ${index} (${fuzz.kind}): ${fuzz.body.subarray(0, 200).toString('latin1')}`;
      const answer = await send('PUT', fuzz.body, fuzz.headers).catch((err: Error) => {
        throw new Error(`${context}: ${err.message}`);
      });
      tally[`${fuzz.kind} ${answer.status}`] = (tally[`${fuzz.kind} ${answer.status}`] ?? 0) + 1;
      const wanted: Record<Expected, number[]> = {
        accepted: [204],
        refused400: [400],
        tooLarge: [413],
        encoding: [415],
      };
      if (answer.status >= 500 || !wanted[fuzz.expected].includes(answer.status)) {
        throw new Error(`${context}: expected ${wanted[fuzz.expected].join(' or ')}, got ${answer.status} ${answer.body}`);
      }
      expect(answer.headers['x-request-id']).toBeDefined();

      if (answer.status === 204) {
        const next = await currentSpec();
        // Round trip: what GET returns is accepted back and reads back the same.
        const again = await send('PUT', Buffer.from(JSON.stringify({ spec: next })));
        expect({ context, status: again.status }).toEqual({ context, status: 204 });
        expect({ context, spec: await currentSpec() }).toEqual({ context, spec: next });
        spec = next;
      } else {
        expect(answer.headers['content-type']).toMatch(/^application\/json/);
        const error: unknown = JSON.parse(answer.body);
        expect({ context, error }).toEqual({ context, error: { error: expect.any(String) } });
        expect({ context, spec: await currentSpec() }).toEqual({ context, spec });
      }
    }
    process.stdout.write(`${JSON.stringify(tally, null, 1)}\n`);
    // The mix really exercised every path.
    for (const status of [204, 400, 413, 415]) {
      expect(Object.entries(tally).filter(([key]) => key.endsWith(` ${status}`)).length).toBeGreaterThan(0);
    }
  }, 300_000);
});
