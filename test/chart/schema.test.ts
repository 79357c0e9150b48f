import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { chartDir, helm, render, renderFailure } from './helm';

/** helm lint, the strict values schema, and the render-time refusals. */

interface SchemaNode {
  type?: string | string[];
  properties?: Record<string, SchemaNode>;
  additionalProperties?: boolean | SchemaNode;
  items?: SchemaNode;
  enum?: unknown[];
  description?: string;
}

const schema = JSON.parse(readFileSync(path.join(chartDir, 'values.schema.json'), 'utf8')) as SchemaNode;

/** Every object node that declares properties, with its dotted path ('' for the root). */
function objectNodes(node: SchemaNode, at = ''): { path: string; node: SchemaNode }[] {
  const inItems = node.items ? objectNodes(node.items, `${at}[]`) : [];
  if (node.properties === undefined) return inItems;
  return [{ path: at, node }, ...Object.entries(node.properties).flatMap(([key, child]) => objectNodes(child, at === '' ? key : `${at}.${key}`)), ...inItems];
}

/** A plausible misspelling: the key with two letters swapped (tls.certManager.clusterDomain → clusterDomian). */
function misspell(key: string): string {
  if (key.length < 3) return `${key}x`;
  const i = key.length - 2;
  return `${key.slice(0, i - 1)}${key.charAt(i)}${key.charAt(i - 1)}${key.slice(i + 1)}`;
}

describe('helm lint --strict', () => {
  test.each([
    ['defaults', [] as string[]],
    ['orderer, TLS off', ['--set', 'dialect=orderer', '--set', 'tls.provider=none']],
    [
      'existing Secrets, everything on',
      [
        '--set',
        'tls.provider=existingSecrets,tls.existingSecrets.server=a,tls.existingSecrets.clientCA=b,tls.existingSecrets.client=c',
        '--set',
        'serviceMonitor.force=true,prometheusRule.force=true,prometheusRule.enabled=true,podDisruptionBudget.enabled=true,networkPolicy.enabled=true,runtimeSocket.enabled=true',
      ],
    ],
  ])('%s: passes', (_name, args) => {
    const run = helm(['lint', '--strict', chartDir, ...args]);
    expect(run.stderr).toBe('');
    expect(run.stdout).toMatch(/1 chart\(s\) linted, 0 chart\(s\) failed/);
    expect(run.status).toBe(0);
  });

  test('fails on a value the schema refuses (lint runs the schema too)', () => {
    const run = helm(['lint', '--strict', chartDir, '--set', 'dialect=gateway']);
    expect(run.status).not.toBe(0);
    expect(run.stdout + run.stderr).toMatch(/dialect/);
  });
});

describe('values.schema.json', () => {
  const nodes = objectNodes(schema);

  test('every object level declares additionalProperties: false, and every property has a description', () => {
    expect(nodes.length).toBeGreaterThan(20);
    for (const { path: at, node } of nodes) {
      expect({ at, additionalProperties: node.additionalProperties }).toEqual({ at, additionalProperties: false });
      for (const [key, child] of Object.entries(node.properties ?? {})) {
        // List items (tolerations[]) are Kubernetes objects, documented by Kubernetes.
        if (child.properties === undefined && !at.includes('[]'))
          expect({ key: `${at}.${key}`, description: typeof child.description }).toEqual({ key: `${at}.${key}`, description: 'string' });
      }
    }
  });

  test.each(
    objectNodes(schema)
      .filter(({ path: at }) => !at.includes('[]'))
      .map(({ path: at, node }) => [at === '' ? '(top level)' : at, at, Object.keys(node.properties ?? {})[0] ?? 'x'] as const),
  )('a misspelt key under %s is rejected', (_label, at, firstKey) => {
    const wrong = misspell(firstKey);
    expect(wrong).not.toBe(firstKey);
    const key = at === '' ? wrong : `${at}.${wrong}`;
    const error = renderFailure({ setJson: { [key]: 'x' } });
    expect(error).toContain("values don't meet the specifications of the schema");
    expect(error).toContain(`Additional property ${wrong} is not allowed`);
  });

  test('a misspelt key inside a list item (tolerations[].key) is rejected', () => {
    expect(objectNodes(schema).map((n) => n.path)).toContain('tolerations[]');
    const error = renderFailure({ setJson: { tolerations: [{ kye: 'node-role', operator: 'Exists' }] } });
    expect(error).toContain('Additional property kye is not allowed');
    expect(render({ setJson: { tolerations: [{ key: 'node-role', operator: 'Exists', effect: 'NoSchedule' }] } }).objects.length).toBeGreaterThan(0);
  });

  test.each([
    ['dialect', 'gateway'],
    ['tls.provider', 'vault'],
    ['runtimeSocket.runtime', 'podman'],
    ['config.metrics.provider', 'prometeus'],
    ['config.metrics.statsd.network', 'sctp'],
    ['image.pullPolicy', 'Sometimes'],
  ])('enum %s refuses %s', (key, value) => {
    const error = renderFailure({ set: { [key]: value } });
    expect(error).toContain(key.split('.').pop() ?? key);
    expect(error).toMatch(/must be one of/);
  });

  test.each([
    ['config.healthCheck.timeout', '2 seconds'],
    ['operations.port', 70000],
    ['probes.liveness.timeoutSeconds', 0],
    ['podSecurityContext.runAsUser', 0],
    ['env.1NOT_A_NAME', 'x'],
    ['networkPolicy.allowedNamespaces[0]', 'Not_A_Namespace'],
    ['runtimeSocket.path', 'relative.sock'],
  ])('%s refuses %s', (key, value) => {
    expect(renderFailure({ set: { [key]: value } })).toContain("values don't meet the specifications of the schema");
  });

  test('maps keep their free keys: env, labels, annotations, nodeSelector', () => {
    const { objects } = render({
      set: { 'env.CORE_METRICS_STATSD_PREFIX': 'peer0', 'podLabels.team': 'ops', 'podAnnotations.note': 'x', 'nodeSelector.kubernetes\\.io/os': 'linux' },
    });
    expect(JSON.stringify(objects)).toContain('CORE_METRICS_STATSD_PREFIX');
  });
});

describe('render-time refusals', () => {
  test('clientAuthRequired with probes: fails, saying why (kubelet has no client certificate) and what to set instead', () => {
    const error = renderFailure({ set: { 'tls.clientAuthRequired': true } });
    expect(error).toContain('tls.clientAuthRequired=true cannot be combined with probes.enabled=true');
    expect(error).toContain('kubelet');
    expect(error).toContain('cannot present a client certificate');
    expect(error).toContain('Keep tls.clientAuthRequired=false');
    expect(error).toContain('probes.enabled=false');
    // Without probes it renders, and without TLS the flag means nothing.
    expect(render({ set: { 'tls.clientAuthRequired': true, 'probes.enabled': false } }).objects.length).toBeGreaterThan(0);
  });

  test('127.0.0.1 as the listen host', () => {
    expect(renderFailure({ set: { 'operations.listenHost': '127.0.0.1' } })).toContain('operations.listenHost=127.0.0.1 is reachable only from inside the pod');
  });

  test.each([
    'CORE_OPERATIONS_LISTENADDRESS',
    'CORE_OPERATIONS_HEALTHCHECK_CONTAINERRUNTIME_TYPE',
    'CORE_VM_ENDPOINT',
    'ORDERER_OPERATIONS_TLS_CERTIFICATE',
    'FABRIC_CFG_PATH',
  ])('env may not set %s, which the chart pins', (name) => {
    expect(renderFailure({ set: { [`env.${name}`]: 'x' } })).toContain(`env.${name} is set by the chart`);
  });

  test('existing Secrets must all be named', () => {
    expect(renderFailure({ set: { 'tls.provider': 'existingSecrets', 'tls.existingSecrets.server': 'a', 'tls.existingSecrets.clientCA': 'b' } })).toContain(
      'tls.existingSecrets.client is required with tls.provider=existingSecrets',
    );
  });

  test('a ServiceMonitor needs the prometheus provider', () => {
    const error = renderFailure({ set: { 'serviceMonitor.force': true, 'config.metrics.provider': 'statsd' } });
    expect(error).toContain('serviceMonitor.enabled=true needs config.metrics.provider=prometheus (it is "statsd"');
    // Not rendered (no API, not forced): nothing to refuse.
    expect(render({ set: { 'config.metrics.provider': 'statsd' } }).objects.length).toBeGreaterThan(0);
  });

  test('a PodDisruptionBudget takes minAvailable or maxUnavailable, not both', () => {
    expect(renderFailure({ set: { 'podDisruptionBudget.enabled': true, 'podDisruptionBudget.minAvailable': 1 } })).toContain(
      'set minAvailable or maxUnavailable, not both',
    );
    const { objects } = render({
      set: { 'podDisruptionBudget.enabled': true, 'podDisruptionBudget.minAvailable': '50%', 'podDisruptionBudget.maxUnavailable': null },
    });
    const pdb = objects.find((o) => o.kind === 'PodDisruptionBudget');
    expect(pdb?.spec).toMatchObject({ minAvailable: '50%' });
    expect(pdb?.spec?.maxUnavailable).toBeUndefined();
  });
});
