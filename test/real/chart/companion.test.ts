import * as path from 'node:path';
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { loadConfig } from '../../../src/config/load';
import { deployerPods } from '../../chart/companion-deployers';
import { describeViolations, restrictedViolations } from '../../chart/pod-security';
import {
  at,
  chartDir,
  defaultNamespace,
  defaultRelease,
  find,
  kinds,
  render,
  renderFailure,
  renderNotes,
  repoRoot,
  validateObjects,
  type K8sObject,
  type RenderOptions,
} from './helm';
import { requireHelm } from '../../support/real-binaries';

/**
 * Companion mode of the chart (issue 29 item 6), rendered by the real helm: the sidecar patch in
 * the ConfigMap, applied (as a strategic merge: containers and volumes by name) to a peer pod
 * shaped as bevel-operator-fabric's hlf-peer chart makes it but hardened, passes the Kubernetes
 * schemas and Pod Security `restricted`; the sidecar's rendered variables, read by the service's
 * own loader over Fabric's sample core.yaml and the node's environment, give companion mode; the
 * Service, ServiceMonitor and PrometheusRule around it; the render-time refusals. The docs' own
 * sidecar blocks are checked without helm in test/chart/companion-sidecar.test.ts.
 */

// The opt-in suite: without helm every test fails, saying so (test/support/real-binaries.ts).
beforeAll(() => {
  requireHelm();
});

type Obj = Record<string, unknown>;

const ciFile = path.join(chartDir, 'ci', 'companion-values.yaml');
const monitoring = ['monitoring.coreos.com/v1'];
const svc = `${defaultRelease}-fabric-ops`;
const sampleConfigDir = path.resolve(repoRoot, '..', 'shared', 'fixtures', 'fabric-sampleconfig');
const hlfPeer = deployerPods.find((pod) => pod.id === 'hlf-peer');
if (hlfPeer === undefined) throw new Error('no hlf-peer deployer pod in test/chart/companion-deployers.ts');

function withCompanion(options: RenderOptions = {}): RenderOptions {
  return { apiVersions: monitoring, ...options, extra: ['-f', ciFile, ...(options.extra ?? [])] };
}

function patchOf(objects: K8sObject[]): Obj {
  const configMap = find(objects, 'ConfigMap', `${svc}-companion`);
  return parse(configMap.data?.['patch.yaml'] ?? '') as Obj;
}

function sidecarOf(patch: Obj): Obj {
  const containers = at<Obj[]>(patch, 'spec', 'template', 'spec', 'containers');
  expect(containers.map((container) => container.name)).toEqual(['fabric-ops']);
  return containers[0] as Obj;
}

/** A strategic merge of lists keyed by name (what kubectl patch does with containers and volumes): same name replaced, new names appended. */
function mergeByName(base: Obj[], patch: Obj[]): Obj[] {
  const out = base.map((item) => ({ ...item }));
  for (const item of patch) {
    const i = out.findIndex((existing) => existing.name === item.name);
    if (i >= 0) out[i] = { ...out[i], ...item };
    else out.push(item);
  }
  return out;
}

const hardened = {
  runAsNonRoot: true,
  readOnlyRootFilesystem: true,
  allowPrivilegeEscalation: false,
  capabilities: { drop: ['ALL'] },
  seccompProfile: { type: 'RuntimeDefault' },
};

/** The hlf-peer chart's peer pod, its volumes as that chart renders them, made to pass `restricted` (no Docker socket, a non-root peer). */
function restrictedPeerPod(): Obj {
  const volumes = (hlfPeer?.volumes ?? []).filter((volume) => volume.hostPath === undefined);
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'org1-peer0-hlf-peer-0', namespace: defaultNamespace, labels: hlfPeer?.podLabels },
    spec: {
      securityContext: { runAsNonRoot: true, runAsUser: 7051, runAsGroup: 7051, fsGroup: 7051, seccompProfile: { type: 'RuntimeDefault' } },
      containers: [
        {
          name: 'peer',
          image: 'hyperledger/fabric-peer:2.5.12',
          ports: [
            { name: 'request', containerPort: 7051, protocol: 'TCP' },
            { name: 'operations', containerPort: 9443, protocol: 'TCP' },
          ],
          envFrom: [{ configMapRef: { name: 'org1-peer0-hlf-peer--peer' } }],
          securityContext: hardened,
          volumeMounts: [
            { name: 'peerconfig', mountPath: '/var/hyperledger/fabric_cfg' },
            { name: 'data', mountPath: '/var/hyperledger' },
            { name: 'id-cert', mountPath: '/var/hyperledger/msp/signcerts' },
            { name: 'id-key', mountPath: '/var/hyperledger/msp/keystore' },
            { name: 'cacert', mountPath: '/var/hyperledger/msp/cacerts' },
            { name: 'tls', mountPath: '/var/hyperledger/tls/server/pair' },
            { name: 'tls-rootcert', mountPath: '/var/hyperledger/tls/server/cert' },
          ],
        },
      ],
      volumes,
    },
  };
}

describe('companion mode (ci/companion-values.yaml: a sidecar of the hlf-peer chart release org1-peer0)', () => {
  test('renders no Deployment and no config ConfigMap of its own: the patch ConfigMap, the Service, certificates, monitoring, rules; all valid', () => {
    const { objects } = render(withCompanion({ set: { 'prometheusRule.enabled': true } }));
    expect(kinds(objects)).toEqual(
      [
        `ConfigMap/${svc}-companion`,
        `Service/${svc}`,
        `ServiceMonitor/${svc}`,
        `PrometheusRule/${svc}`,
        `Pod/${svc}-test-healthz`,
        `Issuer/${svc}-selfsigned`,
        `Certificate/${svc}-ca`,
        `Issuer/${svc}-ca`,
        `Certificate/${svc}-server`,
        `Certificate/${svc}-scraper`,
      ].sort(),
    );
    expect(validateObjects(objects).filter((result) => result.errors.length > 0)).toEqual([]);
    const patch = patchOf(objects);
    expect({ apiVersion: patch.apiVersion, kind: patch.kind, metadata: patch.metadata }).toEqual({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'org1-peer0-hlf-peer', namespace: defaultNamespace },
    });
  });

  test('the patch applied to a restricted peer pod: the pod passes the Kubernetes schemas and Pod Security restricted; the sidecar alone too', () => {
    const { objects } = render(withCompanion());
    const patch = patchOf(objects);
    const sidecar = sidecarOf(patch);
    const pod = restrictedPeerPod();
    const spec = pod.spec as Obj;
    expect(describeViolations(restrictedViolations(spec))).toEqual([]);
    const patched = {
      ...pod,
      spec: {
        ...spec,
        containers: mergeByName(spec.containers as Obj[], at<Obj[]>(patch, 'spec', 'template', 'spec', 'containers')),
        volumes: mergeByName(spec.volumes as Obj[], at<Obj[]>(patch, 'spec', 'template', 'spec', 'volumes')),
      },
    };
    expect(patched.spec.volumes.length).toBe((spec.volumes as Obj[]).length + at<Obj[]>(patch, 'spec', 'template', 'spec', 'volumes').length);
    expect(validateObjects([patched]).flatMap((result) => result.errors)).toEqual([]);
    expect(describeViolations(restrictedViolations(patched.spec))).toEqual([]);
    const volumeNames = new Set(patched.spec.volumes.map((volume) => volume.name));
    const mounts = sidecar.volumeMounts as { name: string; mountPath: string; readOnly?: boolean }[];
    expect(mounts.filter((mount) => !volumeNames.has(mount.name)).map((mount) => mount.name)).toEqual([]);
    // The node's volumes read-only; only the sidecar's own state folder is writable.
    expect(mounts.filter((mount) => mount.readOnly !== true).map((mount) => mount.name)).toEqual(['fabric-ops-state']);
    const alone = { containers: [sidecar], volumes: patched.spec.volumes.filter((volume) => mounts.some((mount) => mount.name === volume.name)) };
    expect(describeViolations(restrictedViolations(alone))).toEqual([]);
  });

  test('the sidecar: probes on /version only, no readiness probe, port 9449 named as the Service targets it, runAsUser from podSecurityContext', () => {
    const { objects } = render(withCompanion());
    const sidecar = sidecarOf(patchOf(objects));
    expect(at(sidecar, 'startupProbe', 'httpGet')).toEqual({ path: '/version', port: 'fabric-ops', scheme: 'HTTPS' });
    expect(at(sidecar, 'livenessProbe', 'httpGet')).toEqual({ path: '/version', port: 'fabric-ops', scheme: 'HTTPS' });
    expect(sidecar.readinessProbe).toBeUndefined();
    expect(sidecar.ports).toEqual([{ name: 'fabric-ops', containerPort: 9449, protocol: 'TCP' }]);
    expect(sidecar.securityContext).toEqual({ ...hardened, privileged: false, runAsUser: 10001, runAsGroup: 10001 });
    expect(sidecar.envFrom).toEqual([{ configMapRef: { name: 'org1-peer0-hlf-peer--peer' } }]);
    const service = find(objects, 'Service');
    expect(at(service, 'spec', 'selector')).toEqual({ app: 'hlf-peer', release: 'org1-peer0' });
    expect(at(service, 'spec', 'publishNotReadyAddresses')).toBe(true);
    expect(at(service, 'spec', 'ports')).toEqual([{ name: 'operations', port: 9449, targetPort: 'fabric-ops', protocol: 'TCP', appProtocol: 'https' }]);
    expect(at<Obj[]>(find(objects, 'ServiceMonitor'), 'spec', 'endpoints')[0]?.port).toBe('operations');
  });

  test("the service's loader reads the sidecar's variables over the node's: companion mode on, its TLS and state folder, the node at 127.0.0.1:9443, no runtime check", () => {
    const { objects } = render(withCompanion({ set: { 'kubernetes.logspecConfigMap.enabled': true, 'serviceAccount.name': 'org1-peer0-hlf-peer' } }));
    const sidecar = sidecarOf(patchOf(objects));
    const own = Object.fromEntries(
      (sidecar.env as { name: string; value?: string }[]).filter((e) => typeof e.value === 'string').map((e) => [e.name, e.value as string]),
    );
    const env = { ...(hlfPeer?.configMaps['org1-peer0-hlf-peer--peer'] ?? {}), ...own };
    const { config } = loadConfig({ configFile: path.join(sampleConfigDir, 'core.yaml'), dialect: 'peer', env });
    expect(config.operations.listen).toEqual({ host: '0.0.0.0', port: 9449 });
    expect(config.operations.tls).toMatchObject({
      enabled: true,
      certFile: '/etc/fabric-ops/tls/server/tls.crt',
      keyFile: '/etc/fabric-ops/tls/server/tls.key',
      clientRootCAFiles: ['/etc/fabric-ops/tls/client-ca/ca.crt'],
    });
    expect(config.companion?.node.address).toEqual({ host: '127.0.0.1', port: 9443 });
    expect(config.companion?.logspec.stateDirectory).toBe('/var/lib/fabric-ops/companion/state');
    expect(config.health.containerRuntime.type).toBe('none');
    expect(config.kubernetes?.logspecConfigMap.name).toBe(`${svc}-logspec`);
    expect(config.companion?.certificates.sources.find((source) => source.kind === 'tls_server')?.path).toBe('/etc/hyperledger/node/tls/pair/tls.crt');
    // The Role is bound to the node pod's account; the chart makes none.
    expect(kinds(objects).filter((name) => name.startsWith('ServiceAccount/'))).toEqual([]);
    expect(at(find(objects, 'RoleBinding'), 'subjects')).toEqual([{ kind: 'ServiceAccount', name: 'org1-peer0-hlf-peer', namespace: defaultNamespace }]);
  });

  test("the orderer dialect: the companion's ORDERER_ variables, read with Fabric's sample orderer.yaml", () => {
    const { objects } = render(
      withCompanion({
        set: {
          dialect: 'orderer',
          'companion.workload.name': 'orderer0-hlf-ordnode',
          'companion.configFile': '/etc/hyperledger/node/config/orderer.yaml',
          'tls.provider': 'none',
          // (The ci file's CORE_* variables stay: the orderer dialect does not read them.)
          'env.ORDERER_GENERAL_LOCALMSPDIR': '/etc/hyperledger/node/msp',
        },
      }),
    );
    const sidecar = sidecarOf(patchOf(objects));
    const env = Object.fromEntries(
      (sidecar.env as { name: string; value?: string }[]).filter((e) => typeof e.value === 'string').map((e) => [e.name, e.value as string]),
    );
    expect(Object.keys(env).filter((name) => name.startsWith('CORE_OPERATIONS_COMPANION'))).toEqual([]);
    expect(env.ORDERER_OPERATIONS_COMPANION_ENABLED).toBe('true');
    const { config } = loadConfig({ configFile: path.join(sampleConfigDir, 'orderer.yaml'), dialect: 'orderer', env });
    expect(config.companion).toBeDefined();
    expect(config.companion?.certificates.sources.find((source) => source.kind === 'msp_signcert')?.path).toBe('/etc/hyperledger/node/msp/signcerts');
    expect(config.operations.listen).toEqual({ host: '0.0.0.0', port: 9449 });
    expect(at(sidecar, 'livenessProbe', 'httpGet', 'scheme')).toBe('HTTP');
  });

  test('the PrometheusRule carries the companion alerts beside the service alerts', () => {
    const { objects } = render(withCompanion({ set: { 'prometheusRule.enabled': true } }));
    const groups = at<{ name: string }[]>(find(objects, 'PrometheusRule'), 'spec', 'groups').map((group) => group.name);
    const read = (file: string): string[] =>
      (parse(readFileSync(path.join(chartDir, 'files', file), 'utf8')) as { groups: { name: string }[] }).groups.map((group) => group.name);
    expect(groups).toEqual([...read('alert-rules.yaml'), ...read('companion-alert-rules.yaml')]);
  });

  test('NOTES.txt says how to apply the patch', () => {
    const notes = renderNotes(withCompanion());
    expect(notes).toContain(`kubectl -n ${defaultNamespace} get configmap ${svc}-companion -o jsonpath='{.data.patch\\.yaml}' > fabric-ops-sidecar.yaml`);
    expect(notes).toContain(`kubectl -n ${defaultNamespace} patch deployment/org1-peer0-hlf-peer --patch-file fabric-ops-sidecar.yaml`);
  });

  test.each([
    [{ 'fleet.enabled': true }, 'fleet.enabled=true cannot be combined with companion.enabled=true'],
    [{ 'networkPolicy.enabled': true }, 'networkPolicy.enabled=true cannot be combined with companion.enabled=true: a NetworkPolicy selecting the node'],
    [{ 'podDisruptionBudget.enabled': true }, 'podDisruptionBudget.enabled=true cannot be combined with companion.enabled=true'],
    [{ 'runtimeSocket.enabled': true }, 'runtimeSocket.enabled=true cannot be combined with companion.enabled=true'],
    [{ 'config.existingConfigMap': 'peer0-core' }, 'config.existingConfigMap=peer0-core cannot be combined with companion.enabled=true'],
    [{ 'serviceAccount.create': true }, 'serviceAccount.create=true cannot be combined with companion.enabled=true'],
    [{ 'companion.workload.name': '' }, 'companion.enabled=true needs companion.workload.name'],
    [
      { 'companion.configFile': '/etc/hyperledger/fabric/core.yaml' },
      'companion.configFile=/etc/hyperledger/fabric/core.yaml is on none of companion.volumeMounts',
    ],
    [{ 'companion.port': 9443 }, "companion.port=9443 is the peer's own operations port"],
    [{ 'kubernetes.events.enabled': true }, "in companion mode need the node pod's ServiceAccount"],
    [{ 'env.CORE_OPERATIONS_COMPANION_LISTENADDRESS': '0.0.0.0:1' }, 'env.CORE_OPERATIONS_COMPANION_LISTENADDRESS is set by the chart'],
  ] as [Record<string, string | number | boolean>, string][])('refused: %j', (set, message) => {
    expect(renderFailure(withCompanion({ set }))).toContain(message);
  });

  test("the node's own operations variables may be set for the sidecar in companion mode (they are the node's endpoint)", () => {
    const { objects } = render(withCompanion({ set: { 'env.CORE_OPERATIONS_LISTENADDRESS': '0.0.0.0:9443' } }));
    const env = sidecarOf(patchOf(objects)).env as { name: string; value?: string }[];
    expect(env).toContainEqual({ name: 'CORE_OPERATIONS_LISTENADDRESS', value: '0.0.0.0:9443' });
  });
});
