import { describeFleetEventForKubernetes, FleetEventRelay, goDuration, maxEventMessageBytes } from '../../../src/fleet/kubernetes-events';
import type { FleetEvent, NodeLogSpecChange } from '../../../src/fleet/types';

const changed = (nodes: NodeLogSpecChange[], extra: Partial<Extract<FleetEvent, { type: 'fleet.logspec.changed' }>> = {}): FleetEvent => ({
  type: 'fleet.logspec.changed',
  actor: 'O=org1,CN=operator',
  selector: { labels: { role: 'peer' } },
  spec: 'gossip=debug:info',
  ttlMs: 900_000,
  allOrNothing: false,
  nodes,
  ...extra,
});

describe('fleet events as Kubernetes Events', () => {
  test('a write every node took: Normal FleetLogSpecChanged with actor, spec, TTL and each node', () => {
    expect(
      describeFleetEventForKubernetes(
        changed([
          { name: 'peer0.org1', result: 'applied', previous: 'info' },
          { name: 'peer1.org1', result: 'applied', previous: 'info' },
        ]),
      ),
    ).toEqual({
      type: 'Normal',
      reason: 'FleetLogSpecChanged',
      message:
        "fleet logging specification 'gossip=debug:info' set by O=org1,CN=operator (for 15m0s): 2 of 2 nodes took it: peer0.org1=applied, peer1.org1=applied",
    });
  });

  test('a write some node did not take: Warning, with the reason and the error', () => {
    const event = describeFleetEventForKubernetes(
      changed(
        [
          { name: 'peer0.org1', result: 'rolled_back', previous: 'info' },
          { name: 'peer0.org2', result: 'failed', reason: 'unreachable', error: 'connect ECONNREFUSED 10.0.0.7:9443' },
        ],
        { ttlMs: null, allOrNothing: true },
      ),
    );
    expect(event).toEqual({
      type: 'Warning',
      reason: 'FleetLogSpecChanged',
      message:
        "fleet logging specification 'gossip=debug:info' set by O=org1,CN=operator (without TTL, all-or-nothing): 0 of 2 nodes took it: peer0.org1=rolled_back, peer0.org2=failed (unreachable: connect ECONNREFUSED 10.0.0.7:9443)",
    });
  });

  test('put-backs: Normal when every node was restored, Warning when any was not', () => {
    expect(
      describeFleetEventForKubernetes({
        type: 'fleet.logspec.putback',
        actor: 'ttl of O=org1,CN=operator',
        trigger: 'ttl',
        nodes: [{ name: 'peer0.org1', result: 'restored', spec: 'info' }],
      }),
    ).toEqual({
      type: 'Normal',
      reason: 'FleetLogSpecPutBack',
      message: "fleet logging specification put back (TTL ended) by ttl of O=org1,CN=operator: 1 of 1 nodes restored: peer0.org1=restored to 'info'",
    });
    expect(
      describeFleetEventForKubernetes({
        type: 'fleet.logspec.putback',
        actor: 'O=org1,CN=operator',
        trigger: 'cancel',
        nodes: [
          { name: 'peer0.org1', result: 'restored', spec: 'info' },
          { name: 'peer1.org1', result: 'skipped_changed', spec: 'warning' },
          { name: 'orderer0', result: 'failed', error: 'reading the current spec: timeout after 2000 ms' },
        ],
      }),
    ).toEqual({
      type: 'Warning',
      reason: 'FleetLogSpecPutBack',
      message:
        "fleet logging specification put back (cancelled) by O=org1,CN=operator: 1 of 3 nodes restored: peer0.org1=restored to 'info', peer1.org1=skipped_changed (has 'warning'), orderer0=failed (reading the current spec: timeout after 2000 ms)",
    });
  });

  test('500 nodes, a 16 KiB spec and long errors: within 1 KiB, saying how many nodes are left out', () => {
    const nodes: NodeLogSpecChange[] = Array.from({ length: 500 }, (_, index) => ({
      name: `peer${index}.org${index % 7}.example.com`,
      result: index % 3 === 0 ? 'failed' : 'applied',
      ...(index % 3 === 0 ? { reason: 'tls' as const, error: `${'certificate signed by unknown authority '.repeat(20)}` } : {}),
    }));
    const { message, type } = describeFleetEventForKubernetes(changed(nodes, { spec: `gossip=${'x'.repeat(16_000)}` }));
    expect(type).toBe('Warning');
    expect(Buffer.byteLength(message)).toBeLessThanOrEqual(maxEventMessageBytes);
    const listed = (message.match(/\.example\.com=/g) ?? []).length;
    expect(listed).toBeGreaterThan(3);
    expect(message).toMatch(new RegExp(`, \\.\\.\\. and ${500 - listed} more of 500 nodes$`));
    expect(message).toContain('333 of 500 nodes took it');
    // The spec is quoted and cut with the one marker (src/text.ts), saying how long it was.
    expect(message).toContain(`'gossip=${'x'.repeat(193)}'... (16007 characters) set by O=org1,CN=operator`);
    // Non-ASCII names count in bytes, not characters.
    const wide = describeFleetEventForKubernetes(changed(nodes.map((node) => ({ ...node, name: `пир-${node.name}` }))));
    expect(Buffer.byteLength(wide.message)).toBeLessThanOrEqual(maxEventMessageBytes);
    expect(wide.message).toMatch(/more of 500 nodes$/);
  });

  test('TTL text is Go duration text', () => {
    expect([2_000, 90_000, 900_000, 5_400_000, 604_800_000, 1_500].map(goDuration)).toEqual(['2s', '1m30s', '15m0s', '1h30m0s', '168h0m0s', '1.5s']);
  });
});

describe('FleetEventRelay', () => {
  const putBack = (node: string): FleetEvent => ({
    type: 'fleet.logspec.putback',
    actor: 'ttl of x',
    trigger: 'ttl',
    nodes: [{ name: node, result: 'restored', spec: 'info' }],
  });

  test('holds what comes before the integration starts, then passes everything on, in order', () => {
    const relay = new FleetEventRelay();
    relay.listener(putBack('a'));
    relay.listener(putBack('b'));
    const recorded: string[] = [];
    relay.connect((type, reason, message) => recorded.push(`${type} ${reason} ${message.slice(-20)}`));
    relay.listener(putBack('c'));
    expect(recorded).toEqual([
      "Normal FleetLogSpecPutBack a=restored to 'info'",
      "Normal FleetLogSpecPutBack b=restored to 'info'",
      "Normal FleetLogSpecPutBack c=restored to 'info'",
    ]);
  });

  test('holds at most its limit (the oldest go, counted); without an integration it drops and holds nothing more', () => {
    const relay = new FleetEventRelay(2);
    for (const node of ['a', 'b', 'c']) relay.listener(putBack(node));
    const recorded: string[] = [];
    relay.connect((_type, _reason, message) => recorded.push(/: (\w)=restored/.exec(message)?.[1] ?? message));
    expect(recorded).toEqual(['b', 'c']);
    expect(relay.dropped).toBe(1);

    const none = new FleetEventRelay();
    none.listener(putBack('a'));
    none.connect(null);
    none.listener(putBack('b'));
    expect(none.dropped).toBe(0);
  });
});
