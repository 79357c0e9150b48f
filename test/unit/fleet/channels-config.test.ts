/** The `channels` keys of the fleet file (src/fleet/config.ts, docs/fleet-channels.md): defaults, and each problem naming its key. */
import { ConfigError } from '../../../src/errors';
import { fleetConfigFrom } from '../../../src/fleet/config';

const source = '/etc/fleet/fleet.yaml';
const minimal = {
  stateDirectory: 'state',
  groups: { org1: { tls: { caFiles: ['ca.crt'] } } },
  nodes: [{ name: 'peer0', url: 'https://10.0.0.5:9443', group: 'org1' }],
};

function problems(channels: unknown): string[] {
  try {
    fleetConfigFrom({ ...minimal, channels }, source);
  } catch (error) {
    if (error instanceof ConfigError) return [...error.problems];
    throw error;
  }
  throw new Error('expected a ConfigError');
}

test('defaults: 5 blocks for 1 minute, 500 channels and 16 MiB read per node; each key alone keeps the others', () => {
  expect(fleetConfigFrom(minimal, source).channels).toEqual({ behindBlocks: 5, behindForMs: 60_000, maxChannels: 500, maxMetricsBytes: 16 * 1024 * 1024 });
  expect(fleetConfigFrom({ ...minimal, channels: { behindFor: '0s' } }, source).channels).toEqual({
    behindBlocks: 5,
    behindForMs: 0,
    maxChannels: 500,
    maxMetricsBytes: 16 * 1024 * 1024,
  });
  expect(fleetConfigFrom({ ...minimal, channels: { behindBlocks: 0, behindFor: '10m', maxChannels: 20, maxMetricsBytes: 65536 } }, source).channels).toEqual({
    behindBlocks: 0,
    behindForMs: 600_000,
    maxChannels: 20,
    maxMetricsBytes: 65536,
  });
});

test('every problem names its key', () => {
  expect(problems({ behindBlocks: -1, behindFor: 'soon', maxChannels: 0, maxMetricsBytes: 1000, extra: 1 })).toEqual([
    `${source}: channels.behindBlocks: Too small: expected number to be >=0`,
    `${source}: channels.behindFor: "soon" is not a duration (e.g. 10s, 1m30s, 500ms)`,
    `${source}: channels.maxChannels: Too small: expected number to be >=1`,
    `${source}: channels.maxMetricsBytes: Too small: expected number to be >=65536`,
    `${source}: channels: Unrecognized key: "extra"`,
  ]);
  expect(problems({ behindBlocks: 1.5 })).toEqual([`${source}: channels.behindBlocks: Invalid input: expected int, received number`]);
});
