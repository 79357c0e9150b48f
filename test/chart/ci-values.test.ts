import { readdirSync } from 'node:fs';
import * as path from 'node:path';
import { at, chartDir, defaultRelease, find, helm, kinds, render, renderFailure, validateObjects, type K8sObject, type RenderOptions } from './helm';

/**
 * Values as the ecosystem's charts take them (issue 17 item 6): the security contexts passed
 * through, scheduling, extra volumes and environment, the ServiceAccount; every ci/*-values.yaml
 * rendered by the real helm, linted, and validated against the Kubernetes schemas.
 */

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
  test('there are the five example files', () => {
    expect(ciFiles.sort()).toEqual([
      'existing-service-account-values.yaml',
      'extra-values.yaml',
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
    [{ podSecurityContext: { runAsUsr: 5 } }, 'Additional property runAsUsr is not allowed'],
    [{ containerSecurityContext: { readOnlyRootFileSystem: true } }, 'Additional property readOnlyRootFileSystem is not allowed'],
    [{ affinity: { podAntiAfinity: {} } }, 'Additional property podAntiAfinity is not allowed'],
    [{ extraEnv: [{ name: 'A', valu: 'x' }] }, 'Additional property valu is not allowed'],
    [{ extraVolumeMounts: [{ name: 'a', mountpath: '/x' }] }, 'Additional property mountpath is not allowed'],
    [{ topologySpreadConstraints: [{ maxSkew: 1, topologyKey: 'k' }] }, 'whenUnsatisfiable is required'],
    [{ serviceAccount: { craete: true } }, 'Additional property craete is not allowed'],
  ])('schema: %j', (setJson, message) => {
    expect(renderFailure({ setJson })).toContain(message);
  });

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
