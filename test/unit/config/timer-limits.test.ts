import { parsePositiveDurationMs } from '../../../src/config/values';
import { startOperationsSystem } from '../../../src/index';
import { ConfigError } from '../../../src/errors';
import { normaliseYaml, problemsOf } from './helpers';

/**
 * Node's timers hold at most 2^31-1 ms (about 24.8 days): a longer delay fires after 1 ms
 * (a TimeoutOverflowWarning), so every duration that becomes a timer is bounded at read time.
 */
const limit = '596h31m23.647s (2147483647 ms, the longest delay a Node.js timer can hold)';

describe('durations past the longest Node.js timer', () => {
  it('the longest timer is accepted; one millisecond more is refused, naming the limit', () => {
    expect(parsePositiveDurationMs('596h31m23.647s')).toEqual({ ok: true, value: 2 ** 31 - 1 });
    expect(parsePositiveDurationMs('596h31m23.648s')).toEqual({ ok: false, problem: `must be at most ${limit}; got "596h31m23.648s"` });
    expect(parsePositiveDurationMs('1000h')).toEqual({ ok: false, problem: `must be at most ${limit}; got "1000h"` });
  });

  it.each([
    ['peer', 'operations:\n  healthCheck:\n    timeout: 597h\n', 'operations.healthCheck.timeout: must be at most'],
    ['peer', 'metrics:\n  provider: statsd\n  statsd:\n    writeInterval: 1000h\n', 'metrics.statsd.writeInterval: must be at most'],
    ['orderer', 'Operations:\n  HealthCheck:\n    Timeout: 597h\n', 'Operations.HealthCheck.Timeout: must be at most'],
    ['orderer', 'Metrics:\n  Provider: statsd\n  Statsd:\n    WriteInterval: 1000h\n', 'Metrics.Statsd.WriteInterval: must be at most'],
  ] as const)('%s: %j is refused naming the key and the limit', (dialect, yaml, start) => {
    const problems = problemsOf(() => normaliseYaml(dialect, yaml));
    expect(problems).toEqual([expect.stringContaining(start)]);
    expect(problems[0]).toContain(limit);
  });

  it('the library refuses a configuration object or option holding a longer delay, naming it', async () => {
    const config = normaliseYaml('peer', 'operations:\n  listenAddress: 127.0.0.1:0\n');
    const tooLong = 2 ** 31;
    const attempts: Array<[string, () => Promise<unknown>]> = [
      ['health.timeoutMs', () => startOperationsSystem({ config: { ...config, health: { ...config.health, timeoutMs: tooLong } } })],
      [
        'metrics.statsd.writeIntervalMs',
        () =>
          startOperationsSystem({
            config: { ...config, metrics: { provider: 'statsd', statsd: { ...config.metrics.statsd, writeIntervalMs: tooLong } } },
          }),
      ],
      ['tlsPollIntervalMs', () => startOperationsSystem({ config, tlsPollIntervalMs: tooLong })],
    ];
    for (const [name, attempt] of attempts) {
      const error = await attempt().then(
        async (system) => {
          await (system as { stop(ms: number): Promise<void> }).stop(0);
          return null;
        },
        (thrown: unknown) => thrown,
      );
      expect(error).toBeInstanceOf(ConfigError);
      expect((error as ConfigError).message).toContain(`${name}: must be a whole number of milliseconds from 1 to 2147483647`);
    }
  });
});
