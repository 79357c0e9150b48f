/**
 * `fabric-ops fleet channels` as text (src/fleet/cli-channels.ts): rows per channel and node,
 * orderers before peers, fitted to 80 columns, node text escaped, and partial (exit 1) exactly
 * when a node is behind, stalled or not read. The command over a running fleet is
 * test/integration/fleet/channels.test.ts.
 */
import { displayLength } from '../../../src/fleet/cli-table';
import { durationText, renderChannels } from '../../../src/fleet/cli-channels';

type Json = Record<string, unknown>;

const settings = { behindBlocks: 5, behindForMs: 60_000, maxChannels: 500 };
const entry = (name: string, dialect: string, status: string, height: number, lag: number, more: Json = {}): Json => ({
  name,
  group: name.split('.')[1],
  dialect,
  status,
  height,
  lag,
  ...more,
});

function answer(channels: Json[], nodes: Json[], summary: Json): Json {
  return { time: '2026-11-27T06:00:40.000Z', settings, summary: { capped: 0, ...summary }, channels, nodes };
}

const okAnswer = answer(
  [
    {
      channel: 'ch1',
      highest: 6,
      orderers: [entry('orderer0.ordererorg', 'orderer', 'ok', 6, 0)],
      peers: [entry('peer0.org1', 'peer', 'ok', 6, 0), entry('peer0.org2', 'peer', 'ok', 6, 0)],
      others: [],
    },
  ],
  [
    { name: 'orderer0.ordererorg', status: 'ok', channels: 1, channelsDropped: 0 },
    { name: 'peer0.org1', status: 'ok', channels: 1, channelsDropped: 0 },
    { name: 'peer0.org2', status: 'ok', channels: 1, channelsDropped: 0 },
  ],
  { channels: 1, nodes: 3, ok: 3, behind: 0, stalled: 0, unreadable: 0 },
);

describe('renderChannels', () => {
  test('every node keeping up: rows orderers first, a verdict, not partial', () => {
    const rendered = renderChannels(okAnswer, 80, false);
    expect(rendered.text).toBe(
      [
        'CHANNEL  NODE                 DIALECT  HEIGHT  LAG  STATUS  DETAIL',
        'ch1      orderer0.ordererorg  orderer  6       0    ok',
        'ch1      peer0.org1           peer     6       0    ok',
        'ch1      peer0.org2           peer     6       0    ok',
        '1 channel on 3 nodes: every node keeps up (behind: more than 5 blocks below the',
        'highest for 1m)',
        '',
      ].join('\n'),
    );
    expect(rendered.partial).toBe(false);
  });

  test('behind, stalled and not read: their details, partial; every line within 80 columns', () => {
    const long = 'a-very-long-channel-name-that-an-operator-chose.with-dots';
    const rendered = renderChannels(
      answer(
        [
          {
            channel: long,
            highest: 1_234_567,
            orderers: [entry('orderer0.ordererorg', 'orderer', 'ok', 1_234_567, 0)],
            peers: [
              entry('peer0.org1.example.com', 'peer', 'stalled', 1_234_000, 567, { unchangedMs: 185_000, laggingMs: 185_000 }),
              entry('peer0.org2', 'peer', 'behind', 1_234_500, 67, { laggingMs: 3_700_000 }),
              entry('peer1.org2', 'peer', 'ok', 1_234_560, 7, { laggingMs: 20_000 }),
              entry('peer2.org2', 'peer', 'unreachable', 1_234_100, 467, { error: 'ECONNREFUSED: connect ECONNREFUSED 10.0.0.7:9443' }),
            ],
            others: [],
          },
        ],
        [
          { name: 'peer3.org2', dialect: 'peer', status: 'tls', channels: 0, channelsDropped: 0, error: 'the node\u001b[2J refused the client certificate' },
          { name: 'ops.misc', dialect: 'unknown', status: 'ok', channels: 0, channelsDropped: 0 },
          { name: 'orderer0.ordererorg', dialect: 'orderer', status: 'ok', channels: 500, channelsDropped: 4500 },
        ],
        { channels: 1, nodes: 7, ok: 2, behind: 1, stalled: 1, unreadable: 2, capped: 1 },
      ),
      80,
      false,
    );
    const lines = rendered.text.trimEnd().split('\n');
    expect(lines.filter((line) => displayLength(line) > 80)).toEqual([]);
    expect(rendered.partial).toBe(true);
    expect(rendered.text).toContain('stalled');
    expect(rendered.text).toContain('unchanged 3m5s');
    expect(rendered.text).toContain('lagging 1h1m');
    expect(rendered.text).toContain('lagging 20s/1m');
    expect(rendered.text).toContain('unreachable');
    // Never read: a row without a channel; its error escaped (cut here, whole with --wide).
    expect(rendered.text).toMatch(/^-\s+peer3\.org2\s+-\s+-\s+tls\s+the node\\u0\.\.\.$/m);
    expect(rendered.text).not.toContain('\u001b');
    expect(rendered.text).toContain('answered with no channel: ops.misc');
    expect(rendered.text).toContain('orderer0.ordererorg: 4500 channels past channels.maxChannels (500) not read');
    expect(rendered.text).toContain('1 channel on 7 nodes: 1 behind, 1 stalled, 2 nodes not read');
    // --wide: nothing cut, the group and dialect shown.
    const wide = renderChannels(
      answer(
        [{ channel: long, highest: 1, orderers: [], peers: [entry('peer0.org1', 'peer', 'ok', 1, 0)], others: [] }],
        [{ name: 'peer0.org1', status: 'ok', channels: 1, channelsDropped: 0 }],
        { channels: 1, nodes: 1, ok: 1, behind: 0, stalled: 0, unreadable: 0 },
      ),
      undefined,
      true,
    );
    expect(wide.text.split('\n')[0]).toBe(`CHANNEL${' '.repeat(long.length - 5)}NODE        GROUP  DIALECT  HEIGHT  LAG  STATUS  DETAIL`);
    expect(wide.text).toContain(`${long}  peer0.org1  org1   peer     1       0    ok`);
  });

  test("discovery not listed yet: its reason, partial; an answer without fields (an older server's) renders without throwing", () => {
    expect(renderChannels({ ...okAnswer, reason: 'discovery has not listed every source yet' }, 80, false)).toMatchObject({ partial: true });
    expect(renderChannels({}, 80, false).text).toContain('0 channels on 0 nodes: every node keeps up');
  });
});

test('durationText', () => {
  expect([0, 999, 45_000, 60_000, 130_000, 3_600_000, 3_720_000].map(durationText)).toEqual(['0s', '0s', '45s', '1m', '2m10s', '1h', '1h2m']);
});
