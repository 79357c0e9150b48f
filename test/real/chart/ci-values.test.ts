import { readdirSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { parse } from 'yaml';
import { fleetConfigFrom } from '../../../src/fleet/config';
import {
  at,
  chartDir,
  defaultRelease,
  find,
  helm,
  kinds,
  render,
  renderFailure,
  renderNotes,
  validateObjects,
  type K8sObject,
  type RenderOptions,
} from './helm';
import { requireHelm } from '../../support/real-binaries';

/**
 * Values as the ecosystem's charts take them (issue 17 item 6): the security contexts passed
 * through, scheduling, extra volumes and environment, the ServiceAccount; every ci/*-values.yaml
 * rendered by the real helm, linted, and validated against the Kubernetes schemas. The values
 * schema's refusals are checked without helm in test/chart/values-schema.test.ts.
 */

// The opt-in suite: without helm every test fails, saying so (test/support/real-binaries.ts).
beforeAll(() => {
  requireHelm();
});

const ciDir = path.join(chartDir, 'ci');
const ciFiles = readdirSync(ciDir).filter((file) => file.endsWith('-values.yaml'));
const svc = `${defaultRelease}-fabric-ops`;

function withFile(file: string, options: RenderOptions = {}): RenderOptions {
  return { ...options, extra: [...(options.extra ?? []), '-f', path.join(ciDir, file)] };
}

function podSpec(objects: K8sObject[]): Record<string, unknown> {
  return at<Record<string, unknown>>(find(objects, 'Deployment'), 'spec', 'template', 'spec');
}

function container(objects: K8sObject[]): Record<string, unknown> {
  return at<Record<string, unknown>[]>(podSpec(objects), 'containers')[0] ?? {};
}

describe('ci/*-values.yaml', () => {
  test('there are the eight example files', () => {
    expect(ciFiles.sort()).toEqual([
      'companion-values.yaml',
      'existing-service-account-values.yaml',
      'extra-values.yaml',
      'fleet-discovery-values.yaml',
      'fleet-values.yaml',
      'openshift-values.yaml',
      'orderer-existing-secrets-values.yaml',
      'scheduling-values.yaml',
    ]);
  });

  test.each(ciFiles)('%s: renders objects valid against the Kubernetes, cert-manager and prometheus-operator schemas', (file) => {
    const { objects } = render(withFile(file, { apiVersions: ['monitoring.coreos.com/v1'] }));
    expect(objects.length).toBeGreaterThan(3);
    const invalid = validateObjects(objects).filter((result) => result.errors.length > 0);
    expect(invalid).toEqual([]);
  });

  test.each(ciFiles)('%s: helm lint --strict passes', (file) => {
    const run = helm(['lint', '--strict', chartDir, '-f', path.join(ciDir, file)]);
    expect(run.stderr).toBe('');
    expect(run.stdout).toMatch(/1 chart\(s\) linted, 0 chart\(s\) failed/);
  });

  test('openshift: runAsUser, runAsGroup and fsGroup are left to the platform; the rest of the hardening stays', () => {
    const { objects } = render(withFile('openshift-values.yaml'));
    expect(podSpec(objects).securityContext).toEqual({ runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } });
    expect(container(objects).securityContext).toEqual({
      runAsNonRoot: true,
      readOnlyRootFilesystem: true,
      allowPrivilegeEscalation: false,
      privileged: false,
      capabilities: { drop: ['ALL'] },
      seccompProfile: { type: 'RuntimeDefault' },
    });
  });

  test('scheduling: affinity and tolerations as given, a spread constraint without labelSelector gets the selector labels', () => {
    const { objects } = render(withFile('scheduling-values.yaml'));
    const spec = podSpec(objects);
    expect(at(spec, 'affinity', 'podAntiAffinity', 'preferredDuringSchedulingIgnoredDuringExecution', 0, 'weight')).toBe(100);
    expect(
      at(spec, 'affinity', 'nodeAffinity', 'requiredDuringSchedulingIgnoredDuringExecution', 'nodeSelectorTerms', 0, 'matchExpressions', 0, 'values'),
    ).toEqual(['amd64', 'arm64']);
    expect(spec.tolerations).toEqual([{ key: 'dedicated', operator: 'Equal', value: 'fabric', effect: 'NoSchedule' }]);
    expect(spec.topologySpreadConstraints).toEqual([
      {
        maxSkew: 1,
        topologyKey: 'topology.kubernetes.io/zone',
        whenUnsatisfiable: 'ScheduleAnyway',
        labelSelector: { matchLabels: { 'app.kubernetes.io/name': 'fabric-ops', 'app.kubernetes.io/instance': defaultRelease } },
      },
      {
        maxSkew: 1,
        topologyKey: 'kubernetes.io/hostname',
        whenUnsatisfiable: 'DoNotSchedule',
        labelSelector: { matchLabels: { 'app.kubernetes.io/name': 'fabric-ops' } },
      },
    ]);
    expect(at(find(objects, 'Deployment'), 'spec', 'replicas')).toBe(2);
  });

  test('extra: extraEnv after env (valueFrom kept), extra volumes and mounts after the chart’s, an annotated ServiceAccount without a token', () => {
    const { objects } = render(withFile('extra-values.yaml'));
    const env = at<{ name: string; value?: string; valueFrom?: unknown }[]>(container(objects), 'env');
    const names = env.map((variable) => variable.name);
    expect(names.slice(-4)).toEqual(['CORE_METRICS_STATSD_PREFIX', 'OPS_TEAM', 'PEER_ID', 'OPS_NODE_IP']);
    expect(env.find((variable) => variable.name === 'PEER_ID')).toEqual({
      name: 'PEER_ID',
      valueFrom: { secretKeyRef: { name: 'peer0-identity', key: 'id' } },
    });
    expect(at<{ name: string }[]>(podSpec(objects), 'volumes').map((volume) => volume.name)).toEqual([
      'config',
      'tls-server',
      'tls-client-ca',
      'runtime-socket',
      'scratch',
      'org-ca',
    ]);
    expect(at<{ mountPath: string }[]>(container(objects), 'volumeMounts').slice(-2)).toEqual([
      { name: 'scratch', mountPath: '/tmp' },
      { name: 'org-ca', mountPath: '/etc/hyperledger/org-ca', readOnly: true },
    ]);
    const account = find(objects, 'ServiceAccount', svc);
    expect(account.metadata.annotations).toEqual({ 'eks.amazonaws.com/role-arn': 'arn:aws:iam::123456789012:role/fabric-ops' });
    expect(account.automountServiceAccountToken).toBe(false);
    expect(podSpec(objects)).toMatchObject({ serviceAccountName: svc, automountServiceAccountToken: false });
    expect(at(podSpec(objects), 'securityContext', 'supplementalGroups')).toEqual([995]);
    // No Kubernetes integration: no Role, no binding.
    expect(kinds(objects).filter((kind) => kind.startsWith('Role'))).toEqual([]);
  });

  test('existing ServiceAccount: not created, the Role bound to it, the token mounted for the integration', () => {
    const { objects } = render(withFile('existing-service-account-values.yaml'));
    expect(objects.filter((object) => object.kind === 'ServiceAccount')).toEqual([]);
    expect(at(find(objects, 'RoleBinding'), 'subjects')).toEqual([{ kind: 'ServiceAccount', name: 'fabric-ops-shared', namespace: 'org1' }]);
    expect(podSpec(objects)).toMatchObject({ serviceAccountName: 'fabric-ops-shared', automountServiceAccountToken: true });
  });

  test('orderer: a field added to the container securityContext merges with the hardened defaults', () => {
    const { objects } = render(withFile('orderer-existing-secrets-values.yaml'));
    expect(container(objects).securityContext).toMatchObject({
      readOnlyRootFilesystem: true,
      capabilities: { drop: ['ALL'] },
      appArmorProfile: { type: 'RuntimeDefault' },
    });
  });
});

describe('fleet mode (ci/fleet-values.yaml)', () => {
  const fleetFile = '/etc/fabric-ops/fleet/fleet.yaml';

  test('the rendered fleet.yaml passes the service’s own fleet schema, with each group’s files at its mounts', () => {
    const { objects } = render(withFile('fleet-values.yaml'));
    const configMap = find(objects, 'ConfigMap', `${svc}-fleet`);
    const config = fleetConfigFrom(parse(configMap.data?.['fleet.yaml'] ?? ''), fleetFile);
    expect(config).toMatchObject({
      stateDirectory: '/var/lib/fabric-ops/fleet/state',
      nodeTimeoutMs: 3000,
      pollIntervalMs: 60_000,
      concurrency: 16,
      healthy: { minShare: 0.6 },
      writers: [{ subject: 'O=org1,CN=operator', issuer: null, fingerprint256: null }],
    });
    expect(config.nodes.map((node) => [node.name, node.group, node.dialect])).toEqual([
      ['peer0.org1', 'org1', 'peer'],
      ['orderer0.org1', 'org1', 'orderer'],
      ['peer0.org2', 'org2', 'peer'],
    ]);
    expect(config.groups.org2?.tls).toEqual({
      certFile: '/etc/fabric-ops/fleet-groups/org2/client/tls.crt',
      keyFile: '/etc/fabric-ops/fleet-groups/org2/client/tls.key',
      caFiles: ['/etc/fabric-ops/fleet-groups/org2/ca/ca.crt'],
    });
    // Every file the fleet configuration names is under a read-only mount of the right Secret and key.
    const spec = podSpec(objects);
    const mounts = at<{ name: string; mountPath: string; readOnly?: boolean }[]>(container(objects), 'volumeMounts');
    const volumes = at<{ name: string; secret?: { secretName: string; items: { key: string; path: string }[] } }[]>(spec, 'volumes');
    const source = (file: string): string => {
      const mount = mounts.find((m) => path.dirname(file) === m.mountPath);
      expect(mount?.readOnly).toBe(true);
      const secret = volumes.find((v) => v.name === mount?.name)?.secret;
      const item = secret?.items.find((i) => i.path === path.basename(file));
      return `${secret?.secretName}/${item?.key}`;
    };
    expect(source(config.groups.org1?.tls?.certFile ?? '')).toBe('org1-ops-client/tls.crt');
    expect(source(config.groups.org1?.tls?.caFiles[0] ?? '')).toBe('org1-ops-client/ca.crt');
    expect(source(config.groups.org2?.tls?.keyFile ?? '')).toBe('org2-ops-client/tls.key');
    expect(source(config.groups.org2?.tls?.caFiles[0] ?? '')).toBe('org2-ops-ca/ca.pem');
    expect(container(objects).args).toEqual(['--config', '/etc/hyperledger/fabric/core.yaml', '--dialect', 'peer', '--fleet-config', fleetFile]);
    expect(mounts.find((m) => m.name === 'fleet-state')).toEqual({ name: 'fleet-state', mountPath: '/var/lib/fabric-ops/fleet' });
  });

  test('persistence: a claim for the state, the Recreate strategy; the default is an emptyDir and the usual rolling update', () => {
    const { objects } = render(withFile('fleet-values.yaml'));
    const claim = find(objects, 'PersistentVolumeClaim', `${svc}-fleet-state`);
    expect(claim.spec).toEqual({ accessModes: ['ReadWriteOnce'], storageClassName: 'standard', resources: { requests: { storage: '128Mi' } } });
    expect(at(find(objects, 'Deployment'), 'spec', 'strategy')).toEqual({ type: 'Recreate' });
    expect(at<{ name: string }[]>(podSpec(objects), 'volumes').find((v) => v.name === 'fleet-state')).toEqual({
      name: 'fleet-state',
      persistentVolumeClaim: { claimName: `${svc}-fleet-state` },
    });
    const existing = render(withFile('fleet-values.yaml', { set: { 'fleet.persistence.existingClaim': 'ops-state' } })).objects;
    expect(existing.filter((o) => o.kind === 'PersistentVolumeClaim')).toEqual([]);
    expect(at<{ name: string }[]>(podSpec(existing), 'volumes').find((v) => v.name === 'fleet-state')).toEqual({
      name: 'fleet-state',
      persistentVolumeClaim: { claimName: 'ops-state' },
    });
    const plain = render(withFile('fleet-values.yaml', { set: { 'fleet.persistence.enabled': false } })).objects;
    expect(plain.filter((o) => o.kind === 'PersistentVolumeClaim')).toEqual([]);
    expect(at(find(plain, 'Deployment'), 'spec', 'strategy')).toBeUndefined();
    expect(at<{ name: string }[]>(podSpec(plain), 'volumes').find((v) => v.name === 'fleet-state')).toEqual({ name: 'fleet-state', emptyDir: {} });
  });

  test('healthy.minCount replaces minShare; a changed fleet configuration rolls the pod', () => {
    const count = render(withFile('fleet-values.yaml', { set: { 'fleet.healthy.minCount': 2 } })).objects;
    const config = fleetConfigFrom(parse(find(count, 'ConfigMap', `${svc}-fleet`).data?.['fleet.yaml'] ?? ''), fleetFile);
    expect(config.healthy).toEqual({ minCount: 2 });
    const before = find(render(withFile('fleet-values.yaml')).objects, 'Deployment').spec;
    const after = find(count, 'Deployment').spec;
    expect(at(after, 'template', 'metadata', 'annotations', 'checksum/fleet')).not.toBe(at(before, 'template', 'metadata', 'annotations', 'checksum/fleet'));
  });

  test('NOTES.txt says where the put-backs are kept and who may write', () => {
    // renderNotes renders a copy of the chart with its own extra arguments: the example's values go as --set-json.
    const fleet = (parse(readFileSync(path.join(ciDir, 'fleet-values.yaml'), 'utf8')) as { fleet: Record<string, unknown> }).fleet;
    const notes = renderNotes({ setJson: { fleet } });
    expect(notes).toContain('Fleet mode: /fleet/healthz, /fleet/version and /fleet/logspec over 3 node(s)');
    expect(notes).toContain(`Pending TTL put-backs are on the claim ${svc}-fleet-state.`);
    expect(notes).not.toContain('no one can write');
    const plain = renderNotes({ setJson: { fleet: { ...fleet, writers: [], persistence: { enabled: false } } } });
    expect(plain).toContain('empty: no one can write');
    expect(plain).toContain("an emptyDir: they survive container restarts, not the pod's replacement");
    expect(renderNotes()).not.toContain('Fleet mode');
  });

  test('off by default: no fleet ConfigMap, no claim, no fleet volume or argument', () => {
    const { objects } = render();
    expect(objects.filter((o) => o.metadata.name.endsWith('-fleet') || o.kind === 'PersistentVolumeClaim')).toEqual([]);
    expect(container(objects).args).toEqual(['--config', '/etc/hyperledger/fabric/core.yaml', '--dialect', 'peer']);
    expect(at<{ name: string }[]>(podSpec(objects), 'volumes').map((v) => v.name)).toEqual(['config', 'tls-server', 'tls-client-ca']);
  });

  test('no Role, ClusterRole or ServiceAccount token for fleet mode with static nodes only (fleet-rbac.test.ts: with discovery)', () => {
    const { objects } = render(withFile('fleet-values.yaml'));
    expect(kinds(objects).filter((kind) => kind.includes('Role') || kind === 'ServiceAccount')).toEqual([]);
    expect(podSpec(objects).automountServiceAccountToken).toBe(false);
  });

  test.each([
    [{ 'tls.provider': 'none' }, 'fleet.enabled=true needs TLS and client CAs on the server, but tls.provider=none serves plain HTTP'],
    [{ replicaCount: 2 }, 'fleet.enabled=true needs replicaCount=1 (it is 2)'],
    [
      { 'fleet.persistence.enabled': false, 'fleet.persistence.existingClaim': 'x' },
      'fleet.persistence.existingClaim=x is set but fleet.persistence.enabled=false',
    ],
  ])('render time: %j', (set, message) => {
    expect(renderFailure(withFile('fleet-values.yaml', { set }))).toContain(message);
  });

  test.each([
    [{ 'fleet.nodes': [] }, 'fleet.enabled=true needs nodes, but fleet.nodes and fleet.discovery.kubernetes are both empty'],
    [
      {
        'fleet.nodes': [
          { name: 'a', url: 'https://a:1', group: 'org1' },
          { name: 'a', url: 'https://b:1', group: 'org1' },
        ],
      },
      'fleet.nodes[1].name=a is used by an earlier node',
    ],
    [{ 'fleet.nodes': [{ name: 'a', url: 'https://a:1', group: 'org3' }] }, 'fleet.nodes[0].group=org3 is not a key of fleet.groups (groups: org1, org2)'],
    [{ extraVolumes: [{ name: 'fleet-group-0-ca', emptyDir: {} }] }, 'extraVolumes[0].name=fleet-group-0-ca is taken'],
    [
      { extraVolumeMounts: [{ name: 'x', mountPath: '/var/lib/fabric-ops/fleet' }] },
      'extraVolumeMounts[0].mountPath=/var/lib/fabric-ops/fleet is where the chart mounts',
    ],
  ])('render time: %j', (setJson, message) => {
    expect(renderFailure(withFile('fleet-values.yaml', { setJson }))).toContain(message);
  });
});

describe('defaults are what they were', () => {
  test('the pod and container security contexts, the service account and the token', () => {
    const { objects } = render();
    expect(podSpec(objects).securityContext).toEqual({
      runAsNonRoot: true,
      runAsUser: 10001,
      runAsGroup: 10001,
      fsGroup: 10001,
      seccompProfile: { type: 'RuntimeDefault' },
    });
    expect(podSpec(objects).serviceAccountName).toBeUndefined();
    expect(podSpec(objects).automountServiceAccountToken).toBe(false);
    for (const key of ['affinity', 'topologySpreadConstraints', 'tolerations']) expect(podSpec(objects)[key]).toBeUndefined();
    expect(objects.filter((object) => object.kind === 'ServiceAccount')).toEqual([]);
  });

  test('with the Kubernetes integration the chart still creates <fullname> and binds it', () => {
    const { objects } = render({ set: { 'kubernetes.events.enabled': true } });
    expect(find(objects, 'ServiceAccount', svc).automountServiceAccountToken).toBe(false);
    expect(podSpec(objects)).toMatchObject({ serviceAccountName: svc, automountServiceAccountToken: true });
    expect(at(find(objects, 'RoleBinding'), 'subjects', 0, 'name')).toBe(svc);
  });
});

describe('refusals of the new values', () => {
  test.each([
    [{ extraEnv: [{ name: 'FABRIC_LOGGING_SPEC', value: 'debug' }] }, 'extraEnv[0].name=FABRIC_LOGGING_SPEC is set by the chart'],
    [{ 'kubernetes.events.enabled': true, extraEnv: [{ name: 'POD_NAME', value: 'x' }] }, 'extraEnv[0].name=POD_NAME is set by the chart'],
    [{ env: { A: 'x' }, extraEnv: [{ name: 'A', value: 'y' }] }, 'extraEnv[0].name=A is already set (in env)'],
    [
      {
        extraEnv: [
          { name: 'B', value: 'x' },
          { name: 'B', value: 'y' },
        ],
      },
      'extraEnv[1].name=B is already set (earlier in extraEnv)',
    ],
    [{ extraVolumes: [{ name: 'config', emptyDir: {} }] }, 'extraVolumes[0].name=config is taken'],
    [
      { extraVolumeMounts: [{ name: 'x', mountPath: '/etc/fabric-ops/tls/server/' }] },
      'extraVolumeMounts[0].mountPath=/etc/fabric-ops/tls/server/ is where the chart mounts its own files',
    ],
    [
      { 'kubernetes.events.enabled': true, serviceAccount: { create: false, name: '', annotations: {} } },
      'need a ServiceAccount to bind the Role to, but serviceAccount.create=false and serviceAccount.name is empty',
    ],
    [
      { 'serviceMonitor.force': true, extraEnv: [{ name: 'CORE_METRICS_PROVIDER', value: 'statsd' }] },
      'extraEnv sets CORE_METRICS_PROVIDER="statsd", which overrides config.metrics.provider',
    ],
  ])('render time: %j', (setJson, message) => {
    expect(renderFailure({ setJson })).toContain(message);
  });
});
