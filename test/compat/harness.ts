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
  type NodeKind,
  type StatsdSettings,
} from '../support/fabric-reference';
import type { TestPki } from '../support/pki';
import type { Target } from './client';

export type TlsMode = 'off' | 'optional' | 'required';

export interface ScenarioOptions {
  name: string;
  nodes: NodeKind[];
  tls: TlsMode;
  /** Peer `vm.endpoint`: '' for no Docker checker. */
  vmEndpoint?: string;
  metrics?: { provider: string; statsd?: StatsdSettings | ((kind: NodeKind) => StatsdSettings) };
  /** Extra environment given to both (FABRIC_LOGGING_SPEC, overrides). */
  env?: Record<string, string>;
  /** The Fabric release folder (default: fabricHome()). */
  home?: string;
}

/** One node kind under one configuration: the real node and ours, on the same file and environment. */
export interface Pair {
  kind: NodeKind;
  config: NodeConfig;
  fabric: FabricNode;
  ours: OperationsSystem;
  fabricTarget: Target;
  oursTarget: Target;
}

export interface Scenario {
  name: string;
  pairs: Pair[];
  pair(kind: NodeKind): Pair;
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
 * Writes each node's configuration in `workDir/<scenario>`, starts the real nodes and fabric-ops
 * on them, all at once. On any failure everything started so far is stopped before rethrowing.
 */
export async function startScenario(workDir: string, pki: TestPki, options: ScenarioOptions): Promise<Scenario> {
  const root = path.join(workDir, options.name);
  const tls =
    options.tls === 'off'
      ? undefined
      : { cert: pki.server.cert, key: pki.server.key, clientAuthRequired: options.tls === 'required', clientRootCAs: [pki.clientCA.cert] };
  const fabricNodes: FabricNode[] = [];
  const ourSystems: OperationsSystem[] = [];
  const stop = async (): Promise<void> => {
    await Promise.allSettled([...fabricNodes.map((n) => n.stop()), ...ourSystems.map((s) => s.stop(1000))]);
  };
  try {
    const pairs = await Promise.all(
      options.nodes.map(async (kind): Promise<Pair> => {
        const statsd = options.metrics?.statsd;
        const config = await writeNodeConfig(root, {
          kind,
          home: options.home,
          tls,
          vmEndpoint: options.vmEndpoint ?? '',
          metrics: options.metrics && {
            provider: options.metrics.provider,
            statsd: typeof statsd === 'function' ? statsd(kind) : statsd,
          },
          generalTls: { cert: pki.serverByOrgCA.cert, key: pki.serverByOrgCA.key, rootCA: pki.orgCA.cert },
        });
        const env = options.env ?? {};
        const [fabric, ours] = await Promise.all([
          startFabricNode({ config, env }).then((node) => {
            fabricNodes.push(node);
            return node;
          }),
          startOurs(config, env).then((system) => {
            ourSystems.push(system);
            return system;
          }),
        ]);
        const targetTls = tls
          ? { ca: pki.serverCA.certPem, clients: { trusted: pki.client, untrusted: pki.untrustedClient, expired: pki.expiredClient } }
          : null;
        const agent = () => (tls ? undefined : new http.Agent({ keepAlive: true, maxSockets: 1 }));
        return {
          kind,
          config,
          fabric,
          ours,
          fabricTarget: { port: fabric.port, tls: targetTls, agent: agent() },
          oursTarget: { port: ours.address.port, tls: targetTls, agent: agent() },
        };
      }),
    );
    return {
      name: options.name,
      pairs,
      pair(kind) {
        const found = pairs.find((p) => p.kind === kind);
        if (!found) throw new Error(`scenario ${options.name} has no ${kind}`);
        return found;
      },
      async stop() {
        for (const p of pairs) {
          p.fabricTarget.agent?.destroy();
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
