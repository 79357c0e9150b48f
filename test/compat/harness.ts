import http from 'node:http';
import path from 'node:path';
import { Writable } from 'node:stream';
import { startOperationsSystem, type OperationsSystem } from '../../src/index';
import {
  listenAddressVariable,
  uniquePort,
  startFabricNode,
  writeNodeConfig,
  type FabricNode,
  type NodeConfig,
  type NodeConfigOptions,
  type NodeKind,
} from '../support/fabric-reference';
import type { TestPki } from '../support/pki';
import type { Target } from './client';

export type TlsMode = 'off' | 'optional' | 'required';

/**
 * One configuration the suite compares under, as data: the live suite starts the real nodes and
 * fabric-ops on it, a recording stores it, and the replay starts fabric-ops alone on it again. Paths
 * of the test PKI and the StatsD listener's address are not in it: they are filled in at start
 * (each run makes a fresh PKI of the same shape, and its own listener).
 */
export interface ScenarioSpec {
  name: string;
  nodes: NodeKind[];
  tls: TlsMode;
  /** Peer `vm.endpoint`: '' (default) for no Docker checker. */
  vmEndpoint?: string;
  /** `statsd.prefix` may hold `{kind}` (peer, orderer); the address is the run's StatsD listener. */
  metrics?: { provider: string; statsd?: { writeInterval: string; prefix: string } };
  /** Extra environment given to both (FABRIC_LOGGING_SPEC, overrides). */
  env?: Record<string, string>;
}

/** Where a node's configuration comes from: a release folder (live), or a bare sampleconfig folder (replay). */
export type ConfigSource = { home: string } | { sampleconfig: string };

export interface StartContext {
  pki: TestPki;
  source: ConfigSource;
  /** host:port of the run's StatsD listener, for scenarios whose provider is statsd. */
  statsdAddress?: string;
}

/** The client certificates of the run's PKI, by the name cases use. */
export function tlsTargetOf(pki: TestPki): NonNullable<Target['tls']> {
  return { ca: pki.serverCA.certPem, clients: { trusted: pki.client, untrusted: pki.untrustedClient, expired: pki.expiredClient } };
}

/** The orderer's general TLS (a cluster orderer refuses to start without it), from the run's PKI. */
export function generalTlsOf(pki: TestPki): NonNullable<NodeConfigOptions['generalTls']> {
  return { cert: pki.serverByOrgCA.cert, key: pki.serverByOrgCA.key, rootCA: pki.orgCA.cert };
}

/** Writes one node's configuration of a scenario in `root`. */
export function writeScenarioConfig(root: string, spec: ScenarioSpec, kind: NodeKind, context: StartContext): Promise<NodeConfig> {
  const { pki } = context;
  const statsd = spec.metrics?.statsd;
  if (statsd && context.statsdAddress === undefined) throw new Error(`scenario ${spec.name}: a StatsD scenario needs the run's listener address`);
  return writeNodeConfig(root, {
    kind,
    ...context.source,
    tls:
      spec.tls === 'off'
        ? undefined
        : { cert: pki.server.cert, key: pki.server.key, clientAuthRequired: spec.tls === 'required', clientRootCAs: [pki.clientCA.cert] },
    vmEndpoint: spec.vmEndpoint ?? '',
    metrics: spec.metrics && {
      provider: spec.metrics.provider,
      statsd: statsd && { address: context.statsdAddress ?? '', writeInterval: statsd.writeInterval, prefix: statsd.prefix.replace(/\{kind\}/g, kind) },
    },
    generalTls: generalTlsOf(pki),
  });
}

/** One node kind under one configuration: fabric-ops, and in the live suite the real node beside it. */
export interface Pair {
  kind: NodeKind;
  config: NodeConfig;
  /** The real node: null in the replay. */
  fabric: FabricNode | null;
  ours: OperationsSystem;
  fabricTarget: Target | null;
  oursTarget: Target;
}

export interface Scenario {
  spec: ScenarioSpec;
  name: string;
  pairs: Pair[];
  pair(kind: NodeKind): Pair;
  /** The real node's target of a kind (live suite only). */
  fabricTarget(kind: NodeKind): Target;
  stop(): Promise<void>;
}

const discard = (): Writable =>
  new Writable({
    write(_chunk, _encoding, callback) {
      callback();
    },
  });

/** Starts fabric-ops in this process from the node's config directory and environment, as the command would. */
export async function startOurs(config: NodeConfig, env: Record<string, string>): Promise<OperationsSystem> {
  // A probed port from the same pool as the Fabric nodes' (uniquePort), not port 0: the real node
  // started beside this one binds ports handed out before it starts (operations, listen, admin,
  // cluster), and port 0 could take one of them first (seen once: the 3.0 orderer exited with 2).
  const port = await uniquePort();
  return startOperationsSystem({
    configFile: config.file,
    dialect: config.kind,
    env: { ...config.env, [listenAddressVariable(config.kind)]: `127.0.0.1:${port}`, ...env },
    logStream: discard(),
  });
}

/**
 * Writes each node's configuration in `workDir/<scenario>` and starts fabric-ops on it and, when
 * `withFabric` (the live suite), the real node too, all at once. On any failure everything started
 * so far is stopped before rethrowing.
 */
export async function startScenario(workDir: string, spec: ScenarioSpec, context: StartContext, withFabric: boolean): Promise<Scenario> {
  const root = path.join(workDir, spec.name);
  const targetTls = spec.tls === 'off' ? null : tlsTargetOf(context.pki);
  const fabricNodes: FabricNode[] = [];
  const ourSystems: OperationsSystem[] = [];
  const stop = async (): Promise<void> => {
    await Promise.allSettled([...fabricNodes.map((n) => n.stop()), ...ourSystems.map((s) => s.stop(1000))]);
  };
  // Plain HTTP cases go over one keep-alive socket per server (many thousand requests).
  const agent = (): http.Agent | undefined => (targetTls ? undefined : new http.Agent({ keepAlive: true, maxSockets: 1 }));
  try {
    const pairs = await Promise.all(
      spec.nodes.map(async (kind): Promise<Pair> => {
        const config = await writeScenarioConfig(root, spec, kind, context);
        const env = spec.env ?? {};
        const [fabric, ours] = await Promise.all([
          withFabric
            ? startFabricNode({ config, env }).then((node) => {
                fabricNodes.push(node);
                return node;
              })
            : null,
          startOurs(config, env).then((system) => {
            ourSystems.push(system);
            return system;
          }),
        ]);
        return {
          kind,
          config,
          fabric,
          ours,
          fabricTarget: fabric ? { port: fabric.port, tls: targetTls, agent: agent() } : null,
          oursTarget: { port: ours.address.port, tls: targetTls, agent: agent() },
        };
      }),
    );
    const pair = (kind: NodeKind): Pair => {
      const found = pairs.find((p) => p.kind === kind);
      if (!found) throw new Error(`scenario ${spec.name} has no ${kind}`);
      return found;
    };
    return {
      spec,
      name: spec.name,
      pairs,
      pair,
      fabricTarget(kind) {
        const target = pair(kind).fabricTarget;
        if (!target) throw new Error(`scenario ${spec.name}: no real ${kind} (replay)`);
        return target;
      },
      async stop() {
        for (const p of pairs) {
          p.fabricTarget?.agent?.destroy();
          p.oursTarget.agent?.destroy();
        }
        await stop();
      },
    };
  } catch (error) {
    await stop();
    throw error;
  }
}
