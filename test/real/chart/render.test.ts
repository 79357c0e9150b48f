import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { parse } from 'yaml';
import { at, defaultNamespace, defaultRelease, find, kinds, render, validateObjects, type K8sObject, type RenderOptions, type ValidationResult } from './helm';
import { requireHelm } from '../../support/real-binaries';

/**
 * Every documented combination of the chart, rendered by the real helm and validated against
 * the Kubernetes, cert-manager and prometheus-operator schemas; then what matters in each.
 */

// The opt-in suite: without helm every test fails, saying so (test/support/real-binaries.ts).
beforeAll(() => {
  requireHelm();
});

const packageVersion = (JSON.parse(readFileSync(path.join(__dirname, '../../../package.json'), 'utf8')) as { version: string }).version;
const monitoring = ['monitoring.coreos.com/v1'];
const existingSecrets = {
  'tls.provider': 'existingSecrets',
  'tls.existingSecrets.server': 'ops-server',
  'tls.existingSecrets.clientCA': 'ops-client-ca',
  'tls.existingSecrets.client': 'ops-scraper',
};
const svc = `${defaultRelease}-fabric-ops`;

interface Combination {
  name: string;
  options: RenderOptions;
  dialect: 'peer' | 'orderer';
  tls: 'none' | 'existingSecrets' | 'certManager';
  /** The exact objects rendered (kind/name). */
  objects: string[];
}

const base = [`ConfigMap/${svc}-config`, `Deployment/${svc}`, `Service/${svc}`, `Pod/${svc}-test-healthz`];
const certManagerObjects = [`Issuer/${svc}-selfsigned`, `Certificate/${svc}-ca`, `Issuer/${svc}-ca`, `Certificate/${svc}-server`, `Certificate/${svc}-scraper`];

const combinations: Combination[] = [
  { name: 'peer, defaults (cert-manager TLS, no monitoring API)', options: {}, dialect: 'peer', tls: 'certManager', objects: [...base, ...certManagerObjects] },
  { name: 'peer, TLS off', options: { set: { 'tls.provider': 'none' } }, dialect: 'peer', tls: 'none', objects: base },
  { name: 'peer, existing Secrets', options: { set: existingSecrets }, dialect: 'peer', tls: 'existingSecrets', objects: base },
  {
    name: 'peer, cert-manager, monitoring API: ServiceMonitor',
    options: { apiVersions: monitoring, set: { 'serviceMonitor.labels.release': 'kube-prometheus' } },
    dialect: 'peer',
    tls: 'certManager',
    objects: [...base, ...certManagerObjects, `ServiceMonitor/${svc}`],
  },
  {
    name: 'peer, cert-manager, monitoring API, ServiceMonitor disabled',
    options: { apiVersions: monitoring, set: { 'serviceMonitor.enabled': false } },
    dialect: 'peer',
    tls: 'certManager',
    objects: [...base, ...certManagerObjects],
  },
  {
    name: 'peer, ServiceMonitor forced without the API',
    options: { set: { 'serviceMonitor.force': true } },
    dialect: 'peer',
    tls: 'certManager',
    objects: [...base, ...certManagerObjects, `ServiceMonitor/${svc}`],
  },
  {
    name: 'peer, TLS off, monitoring API: plain-HTTP ServiceMonitor',
    options: { apiVersions: monitoring, set: { 'tls.provider': 'none' } },
    dialect: 'peer',
    tls: 'none',
    objects: [...base, `ServiceMonitor/${svc}`],
  },
  {
    name: 'peer, existing Secrets, monitoring API, PrometheusRule',
    options: { apiVersions: monitoring, set: { ...existingSecrets, 'prometheusRule.enabled': true } },
    dialect: 'peer',
    tls: 'existingSecrets',
    objects: [...base, `ServiceMonitor/${svc}`, `PrometheusRule/${svc}`],
  },
  {
    name: 'peer, runtime socket containerd',
    options: { set: { 'runtimeSocket.enabled': true } },
    dialect: 'peer',
    tls: 'certManager',
    objects: [...base, ...certManagerObjects],
  },
  {
    name: 'peer, runtime socket CRI-O, TLS off',
    options: { set: { 'runtimeSocket.enabled': true, 'runtimeSocket.runtime': 'crio', 'tls.provider': 'none' } },
    dialect: 'peer',
    tls: 'none',
    objects: base,
  },
  {
    name: 'peer, runtime socket docker',
    options: { set: { 'runtimeSocket.enabled': true, 'runtimeSocket.runtime': 'docker', 'podSecurityContext.supplementalGroups[0]': 998 } },
    dialect: 'peer',
    tls: 'certManager',
    objects: [...base, ...certManagerObjects],
  },
  {
    name: 'peer, PodDisruptionBudget and NetworkPolicy',
    options: { set: { 'podDisruptionBudget.enabled': true, 'networkPolicy.enabled': true, 'networkPolicy.allowedNamespaces[0]': 'monitoring' } },
    dialect: 'peer',
    tls: 'certManager',
    objects: [...base, ...certManagerObjects, `PodDisruptionBudget/${svc}`, `NetworkPolicy/${svc}`],
  },
  {
    name: 'peer, existing ConfigMap, StatsD, IPv6',
    options: {
      set: { 'config.existingConfigMap': 'peer0-core', 'config.metrics.provider': 'statsd', 'serviceMonitor.enabled': false, 'operations.listenHost': '::' },
    },
    dialect: 'peer',
    tls: 'certManager',
    objects: [`Deployment/${svc}`, `Service/${svc}`, `Pod/${svc}-test-healthz`, ...certManagerObjects],
  },
  {
    name: 'orderer, defaults',
    options: { set: { dialect: 'orderer' } },
    dialect: 'orderer',
    tls: 'certManager',
    objects: [...base, ...certManagerObjects],
  },
  { name: 'orderer, TLS off', options: { set: { dialect: 'orderer', 'tls.provider': 'none' } }, dialect: 'orderer', tls: 'none', objects: base },
  {
    name: 'orderer, existing Secrets, monitoring API',
    options: { apiVersions: monitoring, set: { dialect: 'orderer', ...existingSecrets } },
    dialect: 'orderer',
    tls: 'existingSecrets',
    objects: [...base, `ServiceMonitor/${svc}`],
  },
  {
    name: 'orderer, cert-manager, everything on (monitoring API, rules, socket, PDB, NetworkPolicy)',
    options: {
      apiVersions: monitoring,
      set: {
        dialect: 'orderer',
        'prometheusRule.enabled': true,
        'runtimeSocket.enabled': true,
        'podDisruptionBudget.enabled': true,
        'networkPolicy.enabled': true,
      },
    },
    dialect: 'orderer',
    tls: 'certManager',
    objects: [...base, ...certManagerObjects, `ServiceMonitor/${svc}`, `PrometheusRule/${svc}`, `PodDisruptionBudget/${svc}`, `NetworkPolicy/${svc}`],
  },
];

interface Rendered {
  combination: Combination;
  objects: K8sObject[];
  validation: ValidationResult[];
}

let rendered: Rendered[] = [];

beforeAll(() => {
  const renders = combinations.map((combination) => ({ combination, objects: render(combination.options).objects }));
  // One validator process for all of them (it takes a few seconds to load the models).
  const results = validateObjects(renders.flatMap((r) => r.objects));
  let offset = 0;
  rendered = renders.map((r) => {
    const validation = results.slice(offset, offset + r.objects.length);
    offset += r.objects.length;
    return { ...r, validation };
  });
}, 120_000);

type Labels = Record<string, string>;

function pod(objects: K8sObject[]): { labels: Labels; annotations: Labels; spec: Record<string, unknown> } {
  const deployment = find(objects, 'Deployment');
  return {
    labels: at<Labels>(deployment, 'spec', 'template', 'metadata', 'labels'),
    annotations: at<Labels>(deployment, 'spec', 'template', 'metadata', 'annotations'),
    spec: at<Record<string, unknown>>(deployment, 'spec', 'template', 'spec'),
  };
}

interface Container {
  name: string;
  env?: { name: string; value: string }[];
  ports?: { name: string; containerPort: number }[];
  volumeMounts?: { name: string; mountPath: string; readOnly?: boolean; subPath?: string }[];
  securityContext: Record<string, unknown>;
  resources: { requests?: Record<string, string>; limits?: Record<string, string> };
  startupProbe?: Probe;
  livenessProbe?: Probe;
  readinessProbe?: Probe;
  command?: string[];
}
interface Probe {
  httpGet: { path: string; port: string | number; scheme: string };
  timeoutSeconds: number;
}
interface Volume {
  name: string;
  secret?: { secretName: string; items?: { key: string; path: string }[] };
  configMap?: { name: string; items?: { key: string; path: string }[] };
  hostPath?: { path: string; type: string };
}

function container(objects: K8sObject[]): Container {
  const containers = at<Container[]>(pod(objects).spec, 'containers');
  expect(containers).toHaveLength(1);
  return containers[0] as Container;
}

function envOf(c: Container): Map<string, string> {
  return new Map((c.env ?? []).map((e) => [e.name, e.value]));
}

function isSubset(selector: Labels, labels: Labels): boolean {
  return Object.entries(selector).every(([key, value]) => labels[key] === value);
}

function findKeys(value: unknown, key: string, path = ''): string[] {
  if (Array.isArray(value)) return value.flatMap((item, i) => findKeys(item, key, `${path}[${i}]`));
  if (value === null || typeof value !== 'object') return [];
  return Object.entries(value).flatMap(([k, v]) => [...(k === key ? [`${path}.${k}`] : []), ...findKeys(v, key, `${path}.${k}`)]);
}

const eachCombination = (): [string, number][] => combinations.map((c, i) => [c.name, i]);
const get = (i: number): Rendered => rendered[i] as Rendered;

describe.each(eachCombination())('%s', (_name, index) => {
  test('renders exactly the expected objects, each valid against its schema', () => {
    const { combination, objects, validation } = get(index);
    expect(kinds(objects)).toEqual([...combination.objects].sort());
    expect(validation.filter((v) => v.errors.length > 0)).toEqual([]);
    expect(validation.map((v) => `${v.kind}/${v.name}`).sort()).toEqual(kinds(objects));
  });

  test('every object is namespaced and carries the app.kubernetes.io labels', () => {
    for (const object of get(index).objects) {
      expect(object.metadata.namespace).toBe(defaultNamespace);
      const labels = object.metadata.labels ?? {};
      expect(labels['app.kubernetes.io/instance']).toBe(defaultRelease);
      expect(labels['app.kubernetes.io/version']).toBe(packageVersion);
      expect(labels['app.kubernetes.io/managed-by']).toBe('Helm');
      expect(labels['app.kubernetes.io/name']).toMatch(/^fabric-ops/);
    }
  });

  test('selectors match labels: Deployment, Service, PDB, NetworkPolicy, ServiceMonitor; the test pod is selected by none', () => {
    const { objects } = get(index);
    const deployment = find(objects, 'Deployment');
    const podLabels = pod(objects).labels;
    const selector = at<Labels>(deployment, 'spec', 'selector', 'matchLabels');
    expect(Object.keys(selector).length).toBeGreaterThanOrEqual(2);
    expect(isSubset(selector, podLabels)).toBe(true);
    const service = find(objects, 'Service');
    const serviceSelector = at<Labels>(service, 'spec', 'selector');
    expect(isSubset(serviceSelector, podLabels)).toBe(true);
    const testPod = find(objects, 'Pod');
    const testLabels = testPod.metadata.labels ?? {};
    expect(isSubset(serviceSelector, testLabels)).toBe(false);
    for (const object of objects.filter((o) => o.kind === 'PodDisruptionBudget')) {
      expect(isSubset(at<Labels>(object, 'spec', 'selector', 'matchLabels'), podLabels)).toBe(true);
      expect(isSubset(at<Labels>(object, 'spec', 'selector', 'matchLabels'), testLabels)).toBe(false);
    }
    for (const object of objects.filter((o) => o.kind === 'NetworkPolicy')) {
      expect(isSubset(at<Labels>(object, 'spec', 'podSelector', 'matchLabels'), podLabels)).toBe(true);
    }
    for (const object of objects.filter((o) => o.kind === 'ServiceMonitor')) {
      expect(isSubset(at<Labels>(object, 'spec', 'selector', 'matchLabels'), service.metadata.labels ?? {})).toBe(true);
      expect(at<string[]>(object, 'spec', 'namespaceSelector', 'matchNames')).toEqual([defaultNamespace]);
      const servicePortNames = at<{ name: string }[]>(service, 'spec', 'ports').map((p) => p.name);
      for (const endpoint of at<{ port: string }[]>(object, 'spec', 'endpoints')) expect(servicePortNames).toContain(endpoint.port);
      // job="fabric-ops", which deploy/prometheus/alert-rules.yaml's FabricOpsTargetDown matches.
      expect((service.metadata.labels ?? {})[at<string>(object, 'spec', 'jobLabel')]).toMatch(/fabric-ops/);
    }
  });

  test('no subPath anywhere: Secrets and the ConfigMap are mounted as directories, so rotation reaches the pod', () => {
    const { objects } = get(index);
    for (const object of objects) expect(findKeys(object, 'subPath')).toEqual([]);
    const mounts = container(objects).volumeMounts ?? [];
    expect(mounts.find((m) => m.name === 'config')?.mountPath).toBe('/etc/hyperledger/fabric');
  });

  test('startup and liveness on /version, readiness on /healthz, with the scheme the pod serves; readiness above the checker timeout', () => {
    const { combination, objects } = get(index);
    const c = container(objects);
    const scheme = combination.tls === 'none' ? 'HTTP' : 'HTTPS';
    const port = c.ports?.find((p) => p.name === 'operations');
    expect(port?.containerPort).toBe(combination.dialect === 'orderer' ? 8443 : 9443);
    // A failing health check must not restart the process (issue 30 item 15; as the README advises in "Probes and scraping in the pod").
    expect(c.startupProbe?.httpGet).toEqual({ path: '/version', port: 'operations', scheme });
    expect(c.livenessProbe?.httpGet).toEqual({ path: '/version', port: 'operations', scheme });
    expect(c.readinessProbe?.httpGet).toEqual({ path: '/healthz', port: 'operations', scheme });
    expect(c.readinessProbe?.timeoutSeconds).toBeGreaterThan(2);
    const service = find(objects, 'Service');
    expect(at<{ name: string; port: number; targetPort: string; appProtocol: string }[]>(service, 'spec', 'ports')).toEqual([
      { name: 'operations', port: port?.containerPort, targetPort: 'operations', protocol: 'TCP', appProtocol: scheme.toLowerCase() },
    ]);
    const testEnv = envOf(at<Container[]>(find(objects, 'Pod'), 'spec', 'containers')[0] as Container);
    expect(testEnv.get('HEALTHZ_URL')).toBe(`${scheme.toLowerCase()}://${svc}.${defaultNamespace}.svc:${port?.containerPort}/healthz`);
  });

  test('hardened pods: non-root 10001, read-only root, no escalation, no capabilities, RuntimeDefault seccomp, no token, resources', () => {
    const { objects } = get(index);
    const testPod = find(objects, 'Pod');
    for (const spec of [pod(objects).spec, at<Record<string, unknown>>(testPod, 'spec')]) {
      expect(spec.automountServiceAccountToken).toBe(false);
      expect(spec.securityContext).toMatchObject({ runAsNonRoot: true, runAsUser: 10001, runAsGroup: 10001, seccompProfile: { type: 'RuntimeDefault' } });
      for (const c of at<Container[]>(spec, 'containers')) {
        expect(c.securityContext).toMatchObject({
          runAsNonRoot: true,
          readOnlyRootFilesystem: true,
          allowPrivilegeEscalation: false,
          capabilities: { drop: ['ALL'] },
        });
        expect(Object.keys(c.resources.requests ?? {}).sort()).toEqual(['cpu', 'memory']);
        expect(Object.keys(c.resources.limits ?? {}).sort()).toEqual(['cpu', 'memory']);
      }
    }
    expect(container(objects).resources).toEqual({ requests: { cpu: '25m', memory: '128Mi' }, limits: { cpu: '500m', memory: '256Mi' } });
  });

  test('the runtime check is none unless the socket is mounted, and then matches the runtime; pinned by the environment', () => {
    const { combination, objects } = get(index);
    const prefix = combination.dialect === 'orderer' ? 'ORDERER' : 'CORE';
    const env = envOf(container(objects));
    const volumes = at<Volume[]>(pod(objects).spec, 'volumes');
    const socket = volumes.find((v) => v.hostPath !== undefined);
    const set = combination.options.set ?? {};
    if (set['runtimeSocket.enabled'] !== true) {
      expect(env.get(`${prefix}_OPERATIONS_HEALTHCHECK_CONTAINERRUNTIME_TYPE`)).toBe('none');
      expect(env.has(`${prefix}_OPERATIONS_HEALTHCHECK_CONTAINERRUNTIME_ENDPOINT`)).toBe(false);
      expect(socket).toBeUndefined();
      return;
    }
    const runtime = String(set['runtimeSocket.runtime'] ?? 'containerd');
    const socketPath = { containerd: '/run/containerd/containerd.sock', crio: '/var/run/crio/crio.sock', docker: '/var/run/docker.sock' }[runtime];
    expect(socket?.hostPath).toEqual({ path: socketPath, type: 'Socket' });
    expect(env.get(`${prefix}_OPERATIONS_HEALTHCHECK_CONTAINERRUNTIME_TYPE`)).toBe(runtime === 'docker' ? 'docker' : 'cri');
    expect(env.get(`${prefix}_OPERATIONS_HEALTHCHECK_CONTAINERRUNTIME_ENDPOINT`)).toBe(`unix://${socketPath}`);
    expect(container(objects).volumeMounts?.find((m) => m.name === socket?.name)?.mountPath).toBe(socketPath);
  });

  test('TLS material: mounted from the Secrets the chart creates or names; ServiceMonitor over mTLS with the scraper certificate', () => {
    const { combination, objects } = get(index);
    const volumes = at<Volume[]>(pod(objects).spec, 'volumes');
    const secretVolumes = volumes.filter((v) => v.secret !== undefined);
    const serviceMonitor = objects.find((o) => o.kind === 'ServiceMonitor');
    const endpoint = serviceMonitor ? at<Record<string, unknown>>(serviceMonitor, 'spec', 'endpoints', 0) : undefined;
    if (combination.tls === 'none') {
      expect(secretVolumes).toEqual([]);
      if (endpoint) {
        expect(endpoint.scheme).toBe('http');
        expect(endpoint.tlsConfig).toBeUndefined();
      }
      return;
    }
    const names =
      combination.tls === 'certManager'
        ? { server: `${svc}-server-tls`, clientCA: `${svc}-server-tls`, clientCAKey: 'ca.crt', client: `${svc}-scraper-tls` }
        : { server: 'ops-server', clientCA: 'ops-client-ca', clientCAKey: 'ca.crt', client: 'ops-scraper' };
    expect(secretVolumes.map((v) => v.secret)).toEqual([
      {
        secretName: names.server,
        defaultMode: 0o440,
        items: [
          { key: 'tls.crt', path: 'tls.crt' },
          { key: 'tls.key', path: 'tls.key' },
        ],
      },
      { secretName: names.clientCA, defaultMode: 0o440, items: [{ key: names.clientCAKey, path: 'ca.crt' }] },
    ]);
    const testVolumes = at<Volume[]>(find(objects, 'Pod'), 'spec', 'volumes');
    expect(testVolumes.map((v) => v.secret?.secretName)).toEqual([names.client]);
    if (combination.tls === 'certManager') {
      const secretNames = objects.filter((o) => o.kind === 'Certificate').map((o) => at<string>(o, 'spec', 'secretName'));
      expect(secretNames).toEqual(expect.arrayContaining([names.server, names.client]));
    }
    if (endpoint) {
      expect(endpoint.scheme).toBe('https');
      expect(endpoint.tlsConfig).toEqual({
        serverName: `${svc}.${defaultNamespace}.svc`,
        ca: { secret: { name: names.client, key: 'ca.crt' } },
        cert: { secret: { name: names.client, key: 'tls.crt' } },
        keySecret: { name: names.client, key: 'tls.key' },
      });
      expect(endpoint.path).toBe('/metrics');
      const labels = serviceMonitor?.metadata.labels ?? {};
      if (combination.options.set?.['serviceMonitor.labels.release'] !== undefined) expect(labels.release).toBe('kube-prometheus');
    }
  });

  test('cert-manager: a CA of its own (self-signed Issuer → CA Certificate → CA Issuer), ECDSA P-256 certificates, DNS names covering the Service', () => {
    const { combination, objects } = get(index);
    expect(objects.filter((o) => o.kind === 'ClusterIssuer')).toEqual([]);
    if (combination.tls !== 'certManager') {
      expect(objects.filter((o) => o.apiVersion.startsWith('cert-manager.io'))).toEqual([]);
      return;
    }
    const selfSigned = find(objects, 'Issuer', `${svc}-selfsigned`);
    expect(selfSigned.spec).toEqual({ selfSigned: {} });
    const ca = find(objects, 'Certificate', `${svc}-ca`);
    expect(ca.spec).toMatchObject({ isCA: true, issuerRef: { kind: 'Issuer', name: `${svc}-selfsigned` }, privateKey: { algorithm: 'ECDSA', size: 256 } });
    const caIssuer = find(objects, 'Issuer', `${svc}-ca`);
    expect(caIssuer.spec).toEqual({ ca: { secretName: at<string>(ca, 'spec', 'secretName') } });
    const server = find(objects, 'Certificate', `${svc}-server`);
    expect(server.spec).toMatchObject({
      issuerRef: { kind: 'Issuer', name: `${svc}-ca` },
      privateKey: { algorithm: 'ECDSA', size: 256 },
      usages: ['digital signature', 'server auth'],
    });
    const service = find(objects, 'Service');
    const name = service.metadata.name;
    expect(at<string[]>(server, 'spec', 'dnsNames')).toEqual(
      expect.arrayContaining([name, `${name}.${defaultNamespace}`, `${name}.${defaultNamespace}.svc`, `${name}.${defaultNamespace}.svc.cluster.local`]),
    );
    const scraper = find(objects, 'Certificate', `${svc}-scraper`);
    expect(scraper.spec).toMatchObject({
      issuerRef: { kind: 'Issuer', name: `${svc}-ca` },
      privateKey: { algorithm: 'ECDSA', size: 256 },
      usages: ['digital signature', 'client auth'],
    });
  });
});

describe('details of single combinations', () => {
  const byName = (name: string): Rendered => {
    const found = rendered.find((r) => r.combination.name === name);
    if (!found) throw new Error(`no combination ${name}`);
    return found;
  };

  test('the cluster domain and extra names reach the server certificate', () => {
    const { objects } = render({ set: { 'tls.certManager.clusterDomain': 'fabric.internal', 'tls.certManager.extraDnsNames[0]': 'ops.example.com' } });
    expect(at<string[]>(find(objects, 'Certificate', `${svc}-server`), 'spec', 'dnsNames')).toEqual([
      svc,
      `${svc}.${defaultNamespace}`,
      `${svc}.${defaultNamespace}.svc`,
      `${svc}.${defaultNamespace}.svc.fabric.internal`,
      'ops.example.com',
    ]);
  });

  test('checksum/config follows the rendered ConfigMap and nothing else; an existing ConfigMap has none', () => {
    const checksum = (options: RenderOptions): string | undefined => pod(render(options).objects).annotations['checksum/config'];
    const original = checksum({});
    expect(original).toMatch(/^[0-9a-f]{64}$/);
    expect(checksum({ set: { replicaCount: 3 } })).toBe(original);
    expect(checksum({ set: { 'config.healthCheck.timeout': '1500ms' } })).not.toBe(original);
    expect(checksum({ set: { 'config.metrics.provider': 'statsd', 'serviceMonitor.enabled': false } })).not.toBe(original);
    const existing = byName('peer, existing ConfigMap, StatsD, IPv6');
    expect(pod(existing.objects).annotations['checksum/config']).toBeUndefined();
    const volumes = at<Volume[]>(pod(existing.objects).spec, 'volumes');
    expect(volumes.find((v) => v.name === 'config')?.configMap).toEqual({ name: 'peer0-core', items: [{ key: 'core.yaml', path: 'core.yaml' }] });
    expect(envOf(container(existing.objects)).get('CORE_OPERATIONS_LISTENADDRESS')).toBe('[::]:9443');
  });

  test('NetworkPolicy: ingress to the operations port only from the release namespace and the listed ones', () => {
    const { objects } = byName('peer, PodDisruptionBudget and NetworkPolicy');
    const policy = find(objects, 'NetworkPolicy');
    expect(at(policy, 'spec', 'policyTypes')).toEqual(['Ingress']);
    expect(at(policy, 'spec', 'ingress')).toEqual([
      {
        from: [
          { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': defaultNamespace } } },
          { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'monitoring' } } },
        ],
        ports: [{ port: 'operations', protocol: 'TCP' }],
      },
    ]);
    expect(at(find(objects, 'PodDisruptionBudget'), 'spec', 'maxUnavailable')).toBe(1);
    const denyAll = render({ set: { 'networkPolicy.enabled': true, 'networkPolicy.allowReleaseNamespace': false } }).objects;
    expect(at(find(denyAll, 'NetworkPolicy'), 'spec', 'ingress')).toEqual([]);
  });

  test('PrometheusRule carries the groups of deploy/prometheus/alert-rules.yaml', () => {
    const { objects } = byName('peer, existing Secrets, monitoring API, PrometheusRule');
    const deployed = parse(readFileSync(path.join(__dirname, '../../../deploy/prometheus/alert-rules.yaml'), 'utf8')) as { groups: unknown[] };
    expect(at(find(objects, 'PrometheusRule'), 'spec', 'groups')).toEqual(deployed.groups);
    expect(deployed.groups.length).toBeGreaterThan(0);
  });

  test('in fleet mode the PrometheusRule also carries the groups of deploy/prometheus/fleet-alert-rules.yaml and fleet-channel-alert-rules.yaml', () => {
    const read = (file: string): { groups: { name: string }[] } =>
      parse(readFileSync(path.join(__dirname, '../../../deploy/prometheus', file), 'utf8')) as { groups: { name: string }[] };
    const fleet = read('fleet-alert-rules.yaml');
    expect(fleet.groups.map((group) => group.name)).toEqual(['fabric-ops-fleet']);
    const { objects } = render({
      set: { 'prometheusRule.enabled': true, 'fleet.enabled': true },
      setJson: { 'fleet.groups': { org1: { secret: 'org1-ops-client' } }, 'fleet.nodes': [{ name: 'peer0', url: 'https://peer0:9443', group: 'org1' }] },
      apiVersions: ['monitoring.coreos.com/v1'],
    });
    expect(at(find(objects, 'PrometheusRule'), 'spec', 'groups')).toEqual([
      ...read('alert-rules.yaml').groups,
      ...fleet.groups,
      ...read('fleet-channel-alert-rules.yaml').groups,
    ]);
  });

  test("the helm test pod is a test hook running the image's node on the chart's check script", () => {
    const { objects } = byName('peer, defaults (cert-manager TLS, no monitoring API)');
    const testPod = find(objects, 'Pod');
    expect(testPod.metadata.annotations?.['helm.sh/hook']).toBe('test');
    const c = at<Container[]>(testPod, 'spec', 'containers')[0] as Container;
    expect(c.command?.slice(0, 2)).toEqual(['node', '-e']);
    expect(c.command?.[2]).toContain('HEALTHZ_URL');
    expect(at(testPod, 'spec', 'restartPolicy')).toBe('Never');
  });
});
