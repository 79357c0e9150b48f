import { Writable } from 'node:stream';
import { FabricOpsError, LogSpecError } from '../../../src/errors';
import { LoggingSystem, type LoggingObserver, type LoggingSystemOptions } from '../../../src/logging/logging-system';
import { logLevels, type LogLevel, type Logger } from '../../../src/logging/types';

class CaptureStream extends Writable {
  private readonly chunks: string[] = [];
  isTTY?: boolean;

  override _write(chunk: Buffer | string, _encoding: BufferEncoding, done: (error?: Error | null) => void): void {
    this.chunks.push(chunk.toString());
    done();
  }

  text(): string {
    return this.chunks.join('');
  }

  lines(): string[] {
    return this.text()
      .split('\n')
      .filter((line) => line !== '');
  }

  records(): Record<string, unknown>[] {
    return this.lines().map((line) => JSON.parse(line) as Record<string, unknown>);
  }
}

const fixedTime = new Date(Date.UTC(2026, 10, 22, 10, 0, 0, 123));

function system(options: LoggingSystemOptions = {}): { logging: LoggingSystem; out: CaptureStream } {
  const out = new CaptureStream();
  const logging = new LoggingSystem({ stream: out, clock: { now: () => fixedTime.getTime() }, ...options });
  return { logging, out };
}

interface TextLine {
  time: string;
  logger: string;
  level: string;
  rest: string;
}

function parseTextLine(line: string): TextLine {
  const match = /^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}) UTC \[([^\]]+)\] ([A-Z]+) (.*)$/.exec(line);
  if (match === null) throw new Error(`not a text log line: ${JSON.stringify(line)}`);
  const [, time = '', logger = '', level = '', rest = ''] = match;
  return { time, logger, level, rest };
}

/** Writes one entry at each level the Logger interface has; returns what came out. */
function writeEachLevel(logger: Logger): void {
  logger.payload('p');
  logger.debug('d');
  logger.info('i');
  logger.warn('w');
  logger.error('e');
}

function writtenMessages(out: CaptureStream): string[] {
  return out.records().map((record) => `${String(record.name)}:${String(record.msg)}`);
}

describe('LoggingSystem: loggers and levels', () => {
  it('hands out one logger object per name, however often it is asked', () => {
    const { logging } = system();
    const first = logging.getLogger('peer.gossip');
    for (let i = 0; i < 10_000; i++) expect(logging.getLogger('peer.gossip')).toBe(first);
    expect(logging.getLogger('peer.gossip.comm')).not.toBe(first);
    expect(first.name).toBe('peer.gossip');
  });

  it('starts at info when given no spec', () => {
    const { logging, out } = system({ format: 'json' });
    expect(logging.getSpec()).toBe('info');
    writeEachLevel(logging.getLogger('a'));
    expect(writtenMessages(out)).toEqual(['a:i', 'a:w', 'a:e']);
  });

  it('rejects a bad initial spec with LogSpecError', () => {
    expect(() => new LoggingSystem({ spec: 'Debug', stream: new CaptureStream() })).toThrow(
      new LogSpecError("invalid logging specification 'Debug': bad segment 'Debug'"),
    );
  });

  it('rejects an empty logger name', () => {
    expect(() => system().logging.getLogger('')).toThrow(TypeError);
  });

  it('filters each logger by the spec, dot boundaries only', () => {
    const { logging, out } = system({ format: 'json', spec: 'a=debug:a.b.=error:warn' });
    for (const name of ['a', 'a.b', 'a.b.c', 'ab.c', 'z']) logging.getLogger(name).debug('d');
    for (const name of ['a', 'a.b', 'a.b.c', 'ab.c', 'z']) logging.getLogger(name).warn('w');
    expect(writtenMessages(out)).toEqual(['a:d', 'a.b.c:d', 'a:w', 'a.b.c:w', 'ab.c:w', 'z:w']);
  });

  it('answers isEnabled for every Fabric level, including those above error', () => {
    const { logging } = system({ spec: 'x=dpanic:info' });
    const enabledAt = (name: string): LogLevel[] => logLevels.filter((level) => logging.getLogger(name).isEnabled(level));
    expect(enabledAt('y')).toEqual(['info', 'warn', 'error', 'dpanic', 'panic', 'fatal']);
    expect(enabledAt('x')).toEqual(['dpanic', 'panic', 'fatal']);
    logging.setSpec('payload');
    expect(enabledAt('x')).toEqual([...logLevels]);
  });

  it('writes nothing below fatal when the spec is fatal', () => {
    const { logging, out } = system({ spec: 'FATAL' });
    writeEachLevel(logging.getLogger('a'));
    expect(out.text()).toBe('');
  });

  it('makes payload loggable and filterable', () => {
    const { logging, out } = system({ format: 'json', spec: 'chaincode=payload:debug' });
    logging.getLogger('chaincode.shim').payload('bytes', { size: 3 });
    logging.getLogger('gossip').payload('hidden');
    logging.getLogger('gossip').debug('shown');
    const records = out.records();
    expect(records.map((r) => [r.name, r.msg, r.level, r.levelName])).toEqual([
      ['chaincode.shim', 'bytes', 10, 'payload'],
      ['gossip', 'shown', 20, 'debug'],
    ]);
    expect(records[0]?.size).toBe(3);
    expect(logging.getSpec()).toBe('chaincode=payload:debug');
  });
});

describe('LoggingSystem: setSpec', () => {
  it('governs loggers created before and after it', () => {
    const { logging, out } = system({ format: 'json' });
    const before = logging.getLogger('peer.gossip');
    before.debug('before, at info');
    logging.setSpec('peer=debug:warn');
    const after = logging.getLogger('peer.ledger');
    const other = logging.getLogger('orderer');
    before.debug('before, now debug');
    after.debug('after, debug');
    other.info('orderer info, now warn');
    other.warn('orderer warn');
    expect(writtenMessages(out)).toEqual(['peer.gossip:before, now debug', 'peer.ledger:after, debug', 'orderer:orderer warn']);

    logging.setSpec('error');
    before.warn('hidden');
    after.error('shown');
    expect(writtenMessages(out).slice(3)).toEqual(['peer.ledger:shown']);
    expect(logging.getLogger('peer.gossip')).toBe(before);
  });

  it('returns the previous and current spec, both normalised', () => {
    const { logging } = system({ spec: 'debug:b=WARNING:a=critical' });
    expect(logging.setSpec('x,y=notice:PAYLOAD')).toEqual({ previous: 'a=error:b=warn:debug', current: 'x=info:y=info:payload' });
    expect(logging.getSpec()).toBe('x=info:y=info:payload');
    expect(logging.setSpec('')).toEqual({ previous: 'x=info:y=info:payload', current: 'info' });
  });

  it('accepts back whatever getSpec returns, unchanged', () => {
    const { logging } = system({ spec: 'a.=payload:a,b.c=warning:z-1#=CRITICAL:NOTICE' });
    const spec = logging.getSpec();
    expect(spec).toBe('a.=payload:a=warn:b.c=warn:z-1#=error:info');
    expect(logging.setSpec(spec)).toEqual({ previous: spec, current: spec });
  });

  it('changes nothing when the new spec is invalid', () => {
    const { logging, out } = system({ format: 'json', spec: 'a=debug:warn' });
    const a = logging.getLogger('a');
    const b = logging.getLogger('b');
    for (const bad of ['a=info:bogus', 'b=debug:=info', 'b=debug:a*=info', 'Info', 'a=debug:b=Warn']) {
      let thrown: unknown;
      try {
        logging.setSpec(bad);
      } catch (error) {
        thrown = error;
      }
      expect(thrown).toBeInstanceOf(LogSpecError);
      expect(thrown).toBeInstanceOf(FabricOpsError);
      expect((thrown as Error).message).toContain(`invalid logging specification '${bad}': `);
      expect(logging.getSpec()).toBe('a=debug:warn');
    }
    a.debug('a debug');
    b.info('b info');
    b.warn('b warn');
    logging.getLogger('a.new').debug('new child of a');
    expect(writtenMessages(out)).toEqual(['a:a debug', 'b:b warn', 'a.new:new child of a']);
  });
});

describe('LoggingSystem: JSON format', () => {
  it('writes bunyan JSON lines with the dotted logger name, bunyan level, levelName, msg, time and fields', () => {
    const { logging, out } = system({ format: 'json', spec: 'debug' });
    logging.getLogger('operations.http').info('listening', { url: 'https://127.0.0.1:9443', port: 9443, nested: { a: [1] } });
    logging.getLogger('operations').debug('no fields');
    const [first, second] = out.records();
    expect(first).toEqual({
      name: 'operations.http',
      hostname: expect.any(String),
      pid: process.pid,
      level: 30,
      levelName: 'info',
      time: '2026-11-22T10:00:00.123Z',
      url: 'https://127.0.0.1:9443',
      port: 9443,
      nested: { a: [1] },
      msg: 'listening',
      v: 0,
    });
    expect(second).toMatchObject({ name: 'operations', level: 20, levelName: 'debug', msg: 'no fields' });
    expect(out.lines()).toHaveLength(2);
  });

  it('uses bunyan numbers 10, 20, 30, 40, 50 for payload, debug, info, warn, error', () => {
    const { logging, out } = system({ format: 'json', spec: 'payload' });
    writeEachLevel(logging.getLogger('a'));
    expect(out.records().map((r) => [r.level, r.levelName, r.msg])).toEqual([
      [10, 'payload', 'p'],
      [20, 'debug', 'd'],
      [30, 'info', 'i'],
      [40, 'warn', 'w'],
      [50, 'error', 'e'],
    ]);
  });

  it('keeps its own record keys: user fields named like them are written as field.<key>', () => {
    const { logging, out } = system({ format: 'json' });
    logging.getLogger('health').warn('check failed', { name: 'docker', level: 'bad', msg: 'x', time: 'y', levelName: 'z', v: 9 });
    expect(out.records()[0]).toMatchObject({
      name: 'health',
      level: 40,
      levelName: 'warn',
      msg: 'check failed',
      time: '2026-11-22T10:00:00.123Z',
      v: 0,
      'field.name': 'docker',
      'field.level': 'bad',
      'field.msg': 'x',
      'field.time': 'y',
      'field.levelName': 'z',
      'field.v': 9,
    });
  });

  it('writes Errors in fields with message, name and stack', () => {
    const { logging, out } = system({ format: 'json' });
    logging.getLogger('a').error('failed', { err: new RangeError('out of range'), cause: new Error('inner') });
    const record = out.records()[0];
    expect(record?.err).toMatchObject({ message: 'out of range', name: 'RangeError', stack: expect.stringContaining('RangeError: out of range') });
    expect(record?.cause).toMatchObject({ message: 'inner', name: 'Error' });
  });

  it('takes the message literally (no printf expansion)', () => {
    const { logging, out } = system({ format: 'json' });
    logging.getLogger('a').info('100%s done %d %j %%');
    expect(out.records()[0]?.msg).toBe('100%s done %d %j %%');
  });

  it('uses the real clock by default', () => {
    const out = new CaptureStream();
    const logging = new LoggingSystem({ stream: out, format: 'json' });
    const before = Date.now();
    logging.getLogger('a').info('now');
    const after = Date.now();
    const time = Date.parse(String(out.records()[0]?.time));
    expect(time).toBeGreaterThanOrEqual(before);
    expect(time).toBeLessThanOrEqual(after);
  });
});

describe('LoggingSystem: text format', () => {
  it('writes one readable line per entry, parsed back here', () => {
    const { logging, out } = system({ spec: 'debug' });
    logging.getLogger('operations.http').info('listening on https://127.0.0.1:9443', { port: 9443, path: 'two words' });
    logging.getLogger('operations').debug('multi\nline');
    logging.getLogger('operations').warn('renamed', { name: 'docker' });
    const lines = out.lines();
    expect(lines).toHaveLength(3);
    expect(lines.map(parseTextLine)).toEqual([
      { time: '2026-11-22 10:00:00.123', logger: 'operations.http', level: 'INFO', rest: 'listening on https://127.0.0.1:9443 port=9443 path="two words"' },
      { time: '2026-11-22 10:00:00.123', logger: 'operations', level: 'DEBUG', rest: 'multi\\nline' },
      { time: '2026-11-22 10:00:00.123', logger: 'operations', level: 'WARN', rest: 'renamed field.name=docker' },
    ]);
    expect(out.text()).not.toContain('\u001b');
  });

  it('shows payload entries as PAYLOAD', () => {
    const { logging, out } = system({ spec: 'payload' });
    logging.getLogger('a').payload('raw', { bytes: 'deadbeef' });
    expect(parseTextLine(out.lines()[0] ?? '')).toMatchObject({ level: 'PAYLOAD', rest: 'raw bytes=deadbeef' });
  });

  it('colours only when the stream is a TTY, unless told', () => {
    const tty = new CaptureStream();
    tty.isTTY = true;
    new LoggingSystem({ stream: tty, clock: { now: () => fixedTime.getTime() } }).getLogger('a').error('red');
    expect(tty.text()).toBe('\u001b[31m2026-11-22 10:00:00.123 UTC [a] ERROR\u001b[0m red\n');

    const forcedOff = new CaptureStream();
    forcedOff.isTTY = true;
    new LoggingSystem({ stream: forcedOff, clock: { now: () => fixedTime.getTime() }, colour: false }).getLogger('a').error('plain');
    expect(forcedOff.text()).toBe('2026-11-22 10:00:00.123 UTC [a] ERROR plain\n');
  });
});

describe('LoggingSystem: observer', () => {
  it('counts every call as checked and the ones that pass the level as written', () => {
    const { logging } = system({ spec: 'a=debug:warn' });
    const checked: LogLevel[] = [];
    const written: LogLevel[] = [];
    const observer: LoggingObserver = { checked: (level) => checked.push(level), written: (level) => written.push(level) };
    logging.setObserver(observer);
    writeEachLevel(logging.getLogger('a'));
    writeEachLevel(logging.getLogger('b'));
    expect(checked).toEqual(['payload', 'debug', 'info', 'warn', 'error', 'payload', 'debug', 'info', 'warn', 'error']);
    expect(written).toEqual(['debug', 'info', 'warn', 'error', 'warn', 'error']);

    logging.setObserver(null);
    writeEachLevel(logging.getLogger('a'));
    expect(checked).toHaveLength(10);
    expect(written).toHaveLength(6);
  });

  it('sees each entry as written only after it reached the stream', () => {
    const { logging, out } = system({ format: 'json' });
    const seenLines: number[] = [];
    logging.setObserver({ checked: () => undefined, written: () => seenLines.push(out.lines().length) });
    logging.getLogger('a').info('one');
    logging.getLogger('a').info('two');
    expect(seenLines).toEqual([1, 2]);
  });
});

describe('LoggingSystem.fromEnvironment', () => {
  function fromEnv(env: NodeJS.ProcessEnv): { logging: LoggingSystem; out: CaptureStream } {
    const out = new CaptureStream();
    return { logging: LoggingSystem.fromEnvironment(env, out), out };
  }

  it('defaults to spec info and the text format', () => {
    const { logging, out } = fromEnv({});
    expect(logging.getSpec()).toBe('info');
    logging.getLogger('a').debug('hidden');
    logging.getLogger('a').info('shown');
    expect(parseTextLine(out.lines()[0] ?? '')).toMatchObject({ logger: 'a', level: 'INFO', rest: 'shown' });
    expect(out.lines()).toHaveLength(1);
  });

  it('takes FABRIC_LOGGING_SPEC, normalised; an empty one is info', () => {
    expect(fromEnv({ FABRIC_LOGGING_SPEC: 'DEBUG:gossip,ledger=warning' }).logging.getSpec()).toBe('gossip=warn:ledger=warn:debug');
    expect(fromEnv({ FABRIC_LOGGING_SPEC: '' }).logging.getSpec()).toBe('info');
  });

  it('names FABRIC_LOGGING_SPEC and its value when the spec is invalid', () => {
    expect(() => fromEnv({ FABRIC_LOGGING_SPEC: 'gossip=verbose' })).toThrow(
      new LogSpecError("FABRIC_LOGGING_SPEC: invalid logging specification 'gossip=verbose': bad segment 'gossip=verbose'"),
    );
  });

  it('gives JSON lines for FABRIC_LOGGING_FORMAT=json and text for anything else', () => {
    const json = fromEnv({ FABRIC_LOGGING_FORMAT: 'json' });
    json.logging.getLogger('a').info('x');
    expect(json.out.records()[0]).toMatchObject({ name: 'a', level: 30, msg: 'x' });

    const fabricFormat = '%{color}%{time:2006-01-02 15:04:05.000 MST} [%{module}] %{shortfunc} -> %{level:.4s} %{id:03x}%{color:reset} %{message}';
    for (const format of ['JSON', 'text', '', fabricFormat]) {
      const text = fromEnv({ FABRIC_LOGGING_FORMAT: format });
      text.logging.getLogger('a').info('x');
      expect(parseTextLine(text.out.lines()[0] ?? '')).toMatchObject({ logger: 'a', level: 'INFO', rest: 'x' });
    }
  });
});
