import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { loadConfig } from '../../../src/config/load';
import type { NormalisedConfig } from '../../../src/config/types';
import { ConfigError } from '../../../src/errors';
import { at, find, render, repoRoot, type K8sObject, type RenderOptions } from './helm';
import { requireHelm } from '../../support/real-binaries';

/**
 * The service reads what the chart writes: the rendered ConfigMap's file is loaded by the real
 * config loader (src/config), once alone and once with the container's environment, as the
 * pod runs it. Both must give the configuration the values asked for.
 */

// The opt-in suite: without helm every test fails, saying so (test/support/real-binaries.ts).
beforeAll(() => {
  requireHelm();
});

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'fabric-ops-chart-config-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

interface PodConfig {
  file: string;
  dialect: 'peer' | 'orderer';
  env: Record<string, string>;
}

function containerOf(objects: K8sObject[]): { args: string[]; env: { name: string; value: string }[] } {
  return at<{ args: string[]; env: { name: string; value: string }[] }[]>(find(objects, 'Deployment'), 'spec', 'template', 'spec', 'containers')[0] as {
    args: string[];
    env: { name: string; value: string }[];
  };
}

let counter = 0;
/** Renders, writes the ConfigMap's file where the pod's --config points (under a temp dir). */
function podConfig(options: RenderOptions, configText?: string): PodConfig {
  const { objects } = render(options);
  const c = containerOf(objects);
  const configArg = c.args[c.args.indexOf('--config') + 1] ?? '';
  const dialect = c.args[c.args.indexOf('--dialect') + 1] as 'peer' | 'orderer';
  expect(path.dirname(configArg)).toBe('/etc/hyperledger/fabric');
  const fileName = path.basename(configArg);
  expect(fileName).toBe(dialect === 'orderer' ? 'orderer.yaml' : 'core.yaml');
  let text = configText;
  if (text === undefined) {
    const configMap = find(objects, 'ConfigMap');
    expect(Object.keys(configMap.data ?? {})).toEqual([fileName]);
    text = configMap.data?.[fileName] ?? '';
  }
  counter += 1;
  const file = path.join(dir, `${counter}-${fileName}`);
  writeFileSync(file, text);
  const env = Object.fromEntries(c.env.map((e) => [e.name, e.value]));
  return { file, dialect, env };
}

function load(pod: PodConfig, withEnv: boolean): NormalisedConfig {
  // FABRIC_CFG_PATH names the pod's directory, which does not exist here; --config wins over it.
  return loadConfig({ configFile: pod.file, dialect: pod.dialect, env: withEnv ? pod.env : {} }).config;
}

/** The file alone and the file with the pod's environment agree; returns that configuration. */
function loaded(options: RenderOptions): NormalisedConfig {
  const pod = podConfig(options);
  const alone = load(pod, false);
  const inPod = load(pod, true);
  expect(inPod).toEqual(alone);
  return inPod;
}

const serverTls = {
  certFile: '/etc/fabric-ops/tls/server/tls.crt',
  keyFile: '/etc/fabric-ops/tls/server/tls.key',
  clientRootCAFiles: ['/etc/fabric-ops/tls/client-ca/ca.crt'],
};

describe.each(['peer', 'orderer'] as const)('%s ConfigMap, loaded by src/config', (dialect) => {
  const port = dialect === 'orderer' ? 8443 : 9443;

  test('defaults: 0.0.0.0, TLS with the mounted files, Prometheus, no runtime check', () => {
    const config = loaded({ set: { dialect } });
    expect(config.dialect).toBe(dialect);
    expect(config.operations.listen).toEqual({ host: '0.0.0.0', port });
    expect(config.operations.tls).toEqual({ enabled: true, ...serverTls, clientAuthRequired: false, requireDedicatedCA: false });
    expect(config.metrics.provider).toBe('prometheus');
    expect(config.health.timeoutMs).toBe(2000);
    expect(config.health.containerRuntime.type).toBe('none');
    expect(config.health.containerRuntime.endpoint).toBe('');
  });

  test("TLS off, a port, a checker timeout, StatsD over TCP with the dialect's default interval", () => {
    const config = loaded({
      set: {
        dialect,
        'tls.provider': 'none',
        'operations.port': 19443,
        'config.healthCheck.timeout': '1500ms',
        'config.metrics.provider': 'statsd',
        'config.metrics.statsd.network': 'tcp',
        'config.metrics.statsd.address': 'statsd.monitoring:8125',
        'config.metrics.statsd.prefix': 'peer0',
        'serviceMonitor.enabled': false,
      },
    });
    expect(config.operations.listen).toEqual({ host: '0.0.0.0', port: 19443 });
    expect(config.operations.tls.enabled).toBe(false);
    expect(config.health.timeoutMs).toBe(1500);
    expect(config.metrics).toEqual({
      provider: 'statsd',
      statsd: {
        network: 'tcp',
        address: { host: 'statsd.monitoring', port: 8125 },
        writeIntervalMs: dialect === 'orderer' ? 30_000 : 10_000,
        prefix: 'peer0.',
      },
    });
  });

  test('existing Secrets, dedicated CA required, IPv6', () => {
    const config = loaded({
      set: {
        dialect,
        'tls.provider': 'existingSecrets',
        'tls.existingSecrets.server': 'a',
        'tls.existingSecrets.clientCA': 'b',
        'tls.existingSecrets.client': 'c',
        'tls.requireDedicatedCA': true,
        'operations.listenHost': '::',
      },
    });
    expect(config.operations.listen).toEqual({ host: '::', port });
    expect(config.operations.tls).toEqual({ enabled: true, ...serverTls, clientAuthRequired: false, requireDedicatedCA: true });
  });

  test.each([
    ['containerd', 'cri', 'unix:///run/containerd/containerd.sock'],
    ['crio', 'cri', 'unix:///var/run/crio/crio.sock'],
    ['docker', 'docker', 'unix:///var/run/docker.sock'],
  ])('runtime socket %s: the %s checker on %s', (runtime, type, endpoint) => {
    const config = loaded({
      set: { dialect, 'runtimeSocket.enabled': true, 'runtimeSocket.runtime': runtime },
      setJson: { 'runtimeSocket.requiredConditions': ['RuntimeReady'] },
    });
    expect(config.health.containerRuntime.type).toBe(type);
    expect(config.health.containerRuntime.endpoint).toBe(endpoint);
    expect(config.health.containerRuntime.requiredConditions).toEqual(['RuntimeReady']);
  });

  test('clientAuthRequired without probes', () => {
    const config = loaded({ set: { dialect, 'tls.clientAuthRequired': true, 'probes.enabled': false } });
    expect(config.operations.tls.clientAuthRequired).toBe(true);
  });
});

describe("an existing ConfigMap with Fabric's own sample files: the pod's environment wins", () => {
  const sampleconfig = path.resolve(repoRoot, '..', 'shared', 'fixtures', 'fabric-sampleconfig');

  test('core.yaml with vm.endpoint set: no Docker check (the Kubernetes trap cannot happen), 0.0.0.0, the mounted TLS files', () => {
    const text = readFileSync(path.join(sampleconfig, 'core.yaml'), 'utf8');
    expect(text).toMatch(/endpoint: unix:\/\/\/var\/run\/docker\.sock/);
    const pod = podConfig({ set: { 'config.existingConfigMap': 'peer0-core' } }, text);
    // Without the pod's environment, Fabric's rule applies: the Docker checker on vm.endpoint.
    expect(load(pod, false).health.containerRuntime.type).toBe('docker');
    const config = load(pod, true);
    expect(config.health.containerRuntime.type).toBe('none');
    expect(config.operations.listen).toEqual({ host: '0.0.0.0', port: 9443 });
    expect(config.operations.tls).toMatchObject({ enabled: true, ...serverTls });
  });

  test('orderer.yaml with TLS off and 127.0.0.1: the pod listens on 0.0.0.0 with TLS', () => {
    const text = readFileSync(path.join(sampleconfig, 'orderer.yaml'), 'utf8');
    const pod = podConfig({ set: { dialect: 'orderer', 'config.existingConfigMap': 'orderer0' } }, text);
    expect(load(pod, false).operations.listen.host).toBe('127.0.0.1');
    const config = load(pod, true);
    expect(config.operations.listen).toEqual({ host: '0.0.0.0', port: 8443 });
    expect(config.operations.tls).toMatchObject({ enabled: true, ...serverTls });
    expect(config.health.containerRuntime.type).toBe('none');
  });

  test('the loader still refuses what is wrong in the file (the chart does not hide errors)', () => {
    const pod = podConfig({ set: { 'config.existingConfigMap': 'x' } }, 'metrics:\n  provider: prometeus\n');
    expect(() => load(pod, true)).toThrow(ConfigError);
    expect(() => load(pod, true)).toThrow(/metrics\.provider.*prometeus/);
  });
});
