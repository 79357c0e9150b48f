import { parseLogSpec } from '../../../src/logging/spec';
import { requireHelm } from '../../support/real-binaries';
import { chartDir, helm, render, renderFailure, renderNotes, validateObjects } from './helm';

/**
 * helm lint, helm's own schema check (one refusal, to show helm runs it: every refusal of the
 * schema is checked without helm in test/chart/values-schema.test.ts), and the render-time
 * refusals of the templates.
 */

// The opt-in suite: without helm every test fails, saying so (test/support/real-binaries.ts).
beforeAll(() => {
  requireHelm();
});

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

describe('values the schema lets through render', () => {
  test('maps keep their free keys: env, labels, annotations, nodeSelector', () => {
    const { objects } = render({
      set: { 'env.CORE_METRICS_STATSD_PREFIX': 'peer0', 'podLabels.team': 'ops', 'podAnnotations.note': 'x', 'nodeSelector.kubernetes\\.io/os': 'linux' },
    });
    expect(JSON.stringify(objects)).toContain('CORE_METRICS_STATSD_PREFIX');
  });

  test('a misspelt key is refused by helm itself (its schema check runs before the templates)', () => {
    const error = renderFailure({ setJson: { tolerations: [{ kye: 'node-role', operator: 'Exists' }] } });
    expect(error).toContain("values don't meet the specifications of the schema");
    expect(error).toContain('kye');
    expect(render({ setJson: { tolerations: [{ key: 'node-role', operator: 'Exists', effect: 'NoSchedule' }] } }).objects.length).toBeGreaterThan(0);
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

  // Issue 30 item 15: each of these rendered before, and the pod crash-looped or was unreachable.
  // helm's schema check refuses them first; a render that skips it (--skip-schema-validation,
  // helm >= 3.16) meets the template's refusal, which says why.
  test.each([
    ['0.0.0.0:9443', 'carries a port: listenHost is the address only (the port is operations.port)'],
    ['999.1.1.1', 'is not an address the chart can bind in a pod'],
    ['127.0.0.1', 'is a loopback address, reachable only from inside the pod'],
    ['127.0.0.2', 'is a loopback address, reachable only from inside the pod'],
    ['::1', 'is a loopback address, reachable only from inside the pod'],
    ['localhost', 'is a loopback address, reachable only from inside the pod'],
  ])('operations.listenHost=%s is refused by the schema, and by the templates with the reason', (host, why) => {
    const schemaError = renderFailure({ set: { 'operations.listenHost': host } });
    expect(schemaError).toContain("values don't meet the specifications of the schema");
    expect(schemaError).toContain('listenHost');
    const templateError = renderFailure({ set: { 'operations.listenHost': host }, extra: ['--skip-schema-validation'] });
    expect(templateError).toContain(`operations.listenHost=${host} ${why}`);
    expect(templateError).toContain('Use 0.0.0.0 (every IPv4 address of the pod) or :: (IPv6 and dual-stack: IPv4 too)');
  });

  test.each([
    ['0.0.0.0', '0.0.0.0:9443'],
    ['::', '[::]:9443'],
  ])('operations.listenHost=%s renders the listen address %s', (host, address) => {
    const { objects } = render({ set: { 'operations.listenHost': host } });
    expect(JSON.stringify(objects)).toContain(`{"name":"CORE_OPERATIONS_LISTENADDRESS","value":"${address}"}`);
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

  test('a ServiceMonitor needs the prometheus provider, and the message says what asked for it', () => {
    expect(renderFailure({ set: { 'serviceMonitor.enabled': true, 'serviceMonitor.force': true, 'config.metrics.provider': 'statsd' } })).toContain(
      'serviceMonitor.enabled=true needs config.metrics.provider=prometheus (it is "statsd"',
    );
    expect(renderFailure({ set: { 'serviceMonitor.force': true, 'config.metrics.provider': 'statsd' } })).toContain(
      'serviceMonitor.force=true needs config.metrics.provider=prometheus (it is "statsd"',
    );
    expect(renderFailure({ set: { 'config.metrics.provider': 'statsd' }, apiVersions: ['monitoring.coreos.com/v1'] })).toContain(
      'a ServiceMonitor (serviceMonitor.enabled=null, the default, creates one because the cluster serves monitoring.coreos.com/v1) needs config.metrics.provider=prometheus',
    );
    // Not rendered (no API, not forced, not asked for): nothing to refuse.
    expect(render({ set: { 'config.metrics.provider': 'statsd' } }).objects.length).toBeGreaterThan(0);
  });

  // Issue 30 item 15: serviceMonitor.enabled=true rendered nothing without the CRD, silently.
  test('serviceMonitor.enabled=true without the monitoring API fails, naming the value, the API and how to force it', () => {
    const error = renderFailure({ set: { 'serviceMonitor.enabled': true } });
    expect(error).toContain('serviceMonitor.enabled=true, but the cluster does not serve monitoring.coreos.com/v1');
    expect(error).toContain('pass --api-versions monitoring.coreos.com/v1');
    expect(error).toContain('set serviceMonitor.force=true');
    const kindsOf = (objects: { kind: string }[]): string[] => objects.map((o) => o.kind);
    expect(kindsOf(render({ set: { 'serviceMonitor.enabled': true }, apiVersions: ['monitoring.coreos.com/v1'] }).objects)).toContain('ServiceMonitor');
    expect(kindsOf(render({ set: { 'serviceMonitor.enabled': true, 'serviceMonitor.force': true } }).objects)).toContain('ServiceMonitor');
    // The default (null) and false render without it, and without a failure.
    expect(kindsOf(render().objects)).not.toContain('ServiceMonitor');
    expect(kindsOf(render({ set: { 'serviceMonitor.enabled': false }, apiVersions: ['monitoring.coreos.com/v1'] }).objects)).not.toContain('ServiceMonitor');
  });

  test('prometheusRule.enabled=true without the monitoring API fails the same way', () => {
    const error = renderFailure({ set: { 'prometheusRule.enabled': true } });
    expect(error).toContain('prometheusRule.enabled=true, but the cluster does not serve monitoring.coreos.com/v1');
    expect(error).toContain('set prometheusRule.force=true');
    expect(render({ set: { 'prometheusRule.enabled': true, 'prometheusRule.force': true } }).objects.map((o) => o.kind)).toContain('PrometheusRule');
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

/**
 * Values the schema lets through but the pod cannot run with (issue 21 item 5): each refused at
 * render time, naming the value and what is allowed.
 */
describe('render-time refusals of values that would crash-loop the pod or contradict the docs', () => {
  /** Specs the service accepts or refuses (src/logging/spec.ts); the chart must agree on each. */
  const specs = [
    'info',
    'INFO',
    'Debug',
    'DeBuG',
    'warning',
    'notice:critical',
    '',
    'health=debug:info',
    'health,http.server=debug:warn',
    'a.b.=payload',
    'a#b_c-d=fatal',
    'info:',
    ':',
    'a..b=debug',
    '.=debug',
    'a,,b=debug',
    '=debug',
    'health=Debug',
    'health=verbose',
    'a=b=info',
    'a b=info',
    'grpc:info',
    'health=debug:chaincode=info:error',
  ];

  test.each(specs.map((spec) => [spec]))('logging.spec %j: the chart refuses exactly what the service refuses', (spec) => {
    let serviceError: string | undefined;
    try {
      parseLogSpec(spec);
    } catch (error) {
      serviceError = (error as Error).message;
    }
    if (spec === '') {
      // The schema keeps minLength 1 (an empty value is always a mistake in values); the service reads '' as info.
      expect(renderFailure({ setJson: { 'logging.spec': spec } })).toContain('logging.spec');
      return;
    }
    if (serviceError === undefined) {
      expect(render({ setJson: { 'logging.spec': spec } }).yaml).toContain(`value: ${JSON.stringify(spec)}`);
    } else {
      const error = renderFailure({ setJson: { 'logging.spec': spec } });
      expect(error).toContain(`logging.spec=${JSON.stringify(spec)} is not a logging specification the service accepts`);
      // The same reason as the service gives (bad segment / bad logger name / no logger specified).
      expect(error).toContain(serviceError.replace(/^invalid logging specification '.*': /, ''));
      expect(error).toContain('each all lower-case or all upper-case');
    }
  });

  test('logging.spec=Debug: refused, naming the value and the levels allowed', () => {
    const error = renderFailure({ set: { 'logging.spec': 'Debug' } });
    expect(error).toContain(`logging.spec="Debug" is not a logging specification the service accepts (bad segment 'Debug'`);
    expect(error).toContain('levels are payload, debug, info, warn, warning, error');
  });

  test('the logspec ConfigMap initial spec is checked the same way (when the ConfigMap is on)', () => {
    expect(renderFailure({ set: { 'kubernetes.logspecConfigMap.enabled': true, 'kubernetes.logspecConfigMap.initialSpec': 'Info' } })).toContain(
      `kubernetes.logspecConfigMap.initialSpec="Info" is not a logging specification`,
    );
  });

  test.each([
    ['3s', 3],
    ['3000ms', 3],
    ['1m', 3],
    ['4s', 4],
  ])('config.healthCheck.timeout=%s is refused when not below probes.readiness.timeoutSeconds=%i (the probe on /healthz)', (timeout, seconds) => {
    const error = renderFailure({ set: { 'config.healthCheck.timeout': timeout, 'probes.readiness.timeoutSeconds': seconds } });
    expect(error).toContain(`config.healthCheck.timeout=${timeout} is not below probes.readiness.timeoutSeconds=${seconds}`);
    expect(error).toContain('the readiness probe fails and the pod leaves the Service');
  });

  test('startup and liveness ask /version, which runs no checker: their timeouts are not compared with config.healthCheck.timeout', () => {
    const set = {
      'config.healthCheck.timeout': '5s',
      'probes.readiness.timeoutSeconds': 6,
      'probes.startup.timeoutSeconds': 1,
      'probes.liveness.timeoutSeconds': 1,
    };
    expect(render({ set }).objects.length).toBeGreaterThan(0);
  });

  test('config.healthCheck.timeout just below the probes renders; without probes or with an existing ConfigMap it is not compared', () => {
    expect(render({ set: { 'config.healthCheck.timeout': '2999ms' } }).objects.length).toBeGreaterThan(0);
    expect(render({ set: { 'config.healthCheck.timeout': '1m', 'probes.enabled': false } }).objects.length).toBeGreaterThan(0);
    expect(render({ set: { 'config.healthCheck.timeout': '1m', 'config.existingConfigMap': 'mine' } }).objects.length).toBeGreaterThan(0);
  });

  test.each([
    ['peer', 'CORE_METRICS_PROVIDER', 'statsd'],
    ['peer', 'CORE_METRICS_PROVIDER', 'disabled'],
    ['orderer', 'ORDERER_METRICS_PROVIDER', 'statsd'],
  ])('%s: env.%s=%s with a ServiceMonitor is refused (env overrides config.metrics.provider)', (dialect, name, value) => {
    const error = renderFailure({ set: { dialect, 'serviceMonitor.force': true, [`env.${name}`]: value } });
    expect(error).toContain(`serviceMonitor.force=true needs the prometheus metrics provider, but env.${name}="${value}" overrides config.metrics.provider`);
    // Without a ServiceMonitor the override is the user's choice, and NOTES.txt shows no /metrics line.
    const notes = renderNotes({ set: { dialect, [`env.${name}`]: value } });
    expect(notes).toContain('/healthz');
    expect(notes).toMatch(/^ *curl .*\/healthz$/m);
    expect(notes).not.toMatch(/^ *curl .*\/metrics$/m);
  });

  test('tls.provider=none with clientAuthRequired=true is refused (it would be silently dropped), with or without probes', () => {
    for (const probes of [true, false]) {
      const error = renderFailure({ set: { 'tls.provider': 'none', 'tls.clientAuthRequired': true, 'probes.enabled': probes } });
      expect(error).toContain('tls.clientAuthRequired=true needs TLS, but tls.provider=none serves plain HTTP');
      expect(error).toContain('Set tls.provider=certManager or existingSecrets, or tls.clientAuthRequired=false');
    }
  });

  test.each([
    ['720h', '720h'],
    ['2160h', '2160h'],
    ['2h', '90m'],
  ])('tls.certManager.renewBefore >= duration is refused (duration %s, renewBefore %s)', (duration, renewBefore) => {
    const set = { 'tls.certManager.duration': duration, 'tls.certManager.renewBefore': renewBefore };
    if (duration === '2h') {
      // 90m < 2h: renders (the comparison reads the units).
      return expect(render({ set }).objects.length).toBeGreaterThan(0);
    }
    expect(renderFailure({ set })).toContain(`tls.certManager.renewBefore=${renewBefore} is not shorter than tls.certManager.duration=${duration}`);
  });

  test('renewBefore is not compared when cert-manager is not the provider', () => {
    expect(render({ set: { 'tls.provider': 'none', 'tls.certManager.renewBefore': '9999h' } }).objects.length).toBeGreaterThan(0);
  });

  test.each([
    ['nameOverride', 'Peer_Ops'],
    ['nameOverride', 'ops.peer'],
    ['nameOverride', '-ops'],
    ['nameOverride', 'ops-'],
    ['fullnameOverride', 'Peer0'],
    ['fullnameOverride', '0peer'],
  ])('%s=%s (not a DNS label) is refused', (key, value) => {
    const error = renderFailure({ set: { [key]: value } });
    expect(error).toContain(`${key}="${value}" is not a DNS label`);
    expect(error).toContain("lower-case letters, digits and '-'");
  });

  test('DNS-label overrides render valid objects', () => {
    const { objects } = render({ set: { nameOverride: '0ops' } });
    expect(objects.map((o) => o.metadata.name)).toContain('peer0-0ops');
    expect(validateObjects(render({ set: { fullnameOverride: 'ops-a1' } }).objects).flatMap((r) => r.errors)).toEqual([]);
  });

  test.each([
    ['--set', 'env.FOO=1', 'env.FOO=1 is a number'],
    ['--set', 'env.FOO=true', 'env.FOO=true is a boolean'],
  ])('%s %s is refused with the hint to use --set-string', (flag, assignment, message) => {
    const run = helm(['template', 'peer0', chartDir, flag, assignment]);
    expect(run.status).not.toBe(0);
    expect(run.stderr).toContain(message);
    expect(run.stderr).toContain(`use --set-string ${assignment}`);
    const ok = helm(['template', 'peer0', chartDir, '--set-string', assignment]);
    expect(ok.stderr).toBe('');
    expect(ok.stdout).toContain(`value: "${assignment.split('=')[1]}"`);
  });
});

describe('NOTES.txt and Pod Security (issue 21 item 18)', () => {
  test('with runtimeSocket.enabled it says the pod needs a privileged namespace, and the label to set', () => {
    const notes = renderNotes({ set: { 'runtimeSocket.enabled': true, 'runtimeSocket.runtime': 'crio' }, namespace: 'org7' });
    expect(notes).toContain('hostPath');
    expect(notes).toContain('the baseline and restricted Pod Security levels forbid');
    expect(notes).toContain('(/var/run/crio/crio.sock)');
    expect(notes).toContain('kubectl label namespace org7 pod-security.kubernetes.io/enforce=privileged --overwrite');
  });

  test('without the monitoring API it says no ServiceMonitor was created and how to get one; not when asked for none', () => {
    const notes = renderNotes();
    expect(notes).toContain('No ServiceMonitor was created: the cluster does not serve monitoring.coreos.com/v1');
    expect(notes).toContain('set serviceMonitor.enabled=true to make the install fail');
    expect(renderNotes({ set: { 'serviceMonitor.enabled': false } })).not.toContain('ServiceMonitor');
    expect(renderNotes({ apiVersions: ['monitoring.coreos.com/v1'] })).not.toContain('No ServiceMonitor');
  });

  test('without the socket it says nothing about Pod Security', () => {
    const notes = renderNotes();
    expect(notes).toContain('helm test');
    expect(notes).not.toContain('Pod Security');
    expect(notes).not.toContain('pod-security.kubernetes.io');
  });
});
