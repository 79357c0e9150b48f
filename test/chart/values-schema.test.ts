import { existsSync, readdirSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { Generator, schemaConstraintIds, unbreakable, unknownKeywords, type RefusalCase } from './schema-constraints';
import {
  ciFiles,
  coalesce,
  defaults,
  mergedValues,
  parseValues,
  readCiValues,
  renderError,
  repoRoot,
  schema,
  schemaErrors,
  setKeySegments,
  validateValues,
  type SchemaNode,
  type UserValues,
  type Values,
} from './values-schema';

/**
 * values.schema.json, checked without helm (issue 27): the merged values Helm would validate
 * (values.yaml, then the user's values over it) against the schema, with ajv. What the chart's
 * templates refuse at render time (`fail`) is the opt-in suite's, test/real/chart/.
 */

// ---------------------------------------------------------------------------------------------
// The documented examples of chart values.

interface CodeBlock {
  file: string;
  line: number;
  lang: string;
  text: string;
}

const docFiles = [
  'README.md',
  'charts/fabric-ops/README.md',
  ...readdirSync(path.join(repoRoot, 'docs'))
    .filter((file) => file.endsWith('.md'))
    .map((file) => `docs/${file}`),
];

function codeBlocks(file: string): CodeBlock[] {
  const lines = readFileSync(path.join(repoRoot, file), 'utf8').split('\n');
  const blocks: CodeBlock[] = [];
  for (let i = 0; i < lines.length; i += 1) {
    const open = /^(\s*)(`{3,}|~{3,})\s*([\w-]*)\s*$/.exec(lines[i] ?? '');
    if (!open) continue;
    const [, indent = '', fence = '', lang = ''] = open;
    const body: string[] = [];
    let j = i + 1;
    while (j < lines.length && !new RegExp(`^\\s*${fence}\\s*$`).test(lines[j] ?? '')) {
      body.push((lines[j] ?? '').startsWith(indent) ? (lines[j] ?? '').slice(indent.length) : (lines[j] ?? ''));
      j += 1;
    }
    if (j >= lines.length) throw new Error(`${file}:${i + 1}: code block never closed`);
    blocks.push({ file, line: i + 1, lang, text: body.join('\n') });
    i = j;
  }
  return blocks;
}

const blocks = docFiles.flatMap(codeBlocks);

/**
 * A YAML block is an example of chart values when its first line is the helm command that takes
 * it: `# helm install <release> charts/fabric-ops ... -f <file>`.
 */
const valuesMarker = /^#\s*(helm\s+(?:install|upgrade|template)\s+\S+\s+charts\/fabric-ops\b.*?\s-f\s+\S+)/;

const yamlExamples = blocks
  .filter((block) => block.lang === 'yaml' || block.lang === 'yml')
  .flatMap((block) => {
    const command = valuesMarker.exec(block.text.split('\n')[0] ?? '')?.[1];
    return command === undefined ? [] : [{ ...block, command: command.replace(/\s+/g, ' ') }];
  });

/** The examples the docs must keep (more may come; each found one is checked). */
const expectedYamlExamples = [{ file: 'charts/fabric-ops/README.md', command: 'helm install org1-fleet charts/fabric-ops -n org1 -f fleet.yaml' }];

/** Shell words, with '...' and "..." quoting. */
function shellWords(line: string): string[] {
  const words: string[] = [];
  const pattern = /'([^']*)'|"((?:\\.|[^"\\])*)"|(\S+)/g;
  let current = '';
  let last = -1;
  for (let match = pattern.exec(line); match !== null; match = pattern.exec(line)) {
    const piece = match[1] ?? match[2]?.replace(/\\(.)/g, '$1') ?? match[3] ?? '';
    if (last === match.index) current += piece;
    else {
      if (last >= 0) words.push(current);
      current = piece;
    }
    last = match.index + match[0].length;
  }
  if (last >= 0) words.push(current);
  return words;
}

/** A `--set` value typed as Helm's strvals types it (true, false, null, integers; --set-string keeps text). */
function typedSetValue(text: string, asString: boolean): unknown {
  if (asString) return text;
  if (/^true$/i.test(text)) return true;
  if (/^false$/i.test(text)) return false;
  if (/^null$/i.test(text)) return null;
  if (text === '0') return 0;
  if (/^[-+]?[1-9][0-9]*$/.test(text) && Number.isSafeInteger(Number(text))) return Number(text);
  return text;
}

interface HelmCommand {
  file: string;
  line: number;
  command: string;
  user: UserValues;
}

/** `helm install|upgrade|template <release> charts/fabric-ops ...` commands of the shell blocks, with the values they give. */
const helmCommands: HelmCommand[] = blocks
  .filter((block) => block.lang === 'sh' || block.lang === 'bash' || block.lang === 'shell')
  .flatMap((block) =>
    block.text
      .replace(/\\\n\s*/g, ' ')
      .split('\n')
      .map((line) => line.replace(/\s+#\s.*$/, '').trim())
      .filter((line) => /^helm\s+(install|upgrade|template)\s+\S+\s+charts\/fabric-ops(\s|$)/.test(line))
      .map((line) => {
        const words = shellWords(line);
        const user: Required<UserValues> = { files: [], setJson: {}, set: {} };
        for (let i = 0; i < words.length; i += 1) {
          const flag = words[i] ?? '';
          const argument = words[i + 1] ?? '';
          if (flag === '--set' || flag === '--set-string') {
            for (const assignment of argument.split(/(?<!\\),/)) {
              const equals = assignment.indexOf('=');
              user.set[assignment.slice(0, equals)] = typedSetValue(assignment.slice(equals + 1), flag === '--set-string');
            }
            i += 1;
          } else if (flag === '--set-json') {
            const equals = argument.indexOf('=');
            user.setJson[argument.slice(0, equals)] = JSON.parse(argument.slice(equals + 1));
            i += 1;
          } else if (flag === '-f' || flag === '--values') {
            const file = path.join(repoRoot, argument);
            if (!existsSync(file)) throw new Error(`${block.file}: ${line}: ${argument} does not exist`);
            user.files.push(parseValues(readFileSync(file, 'utf8'), argument));
            i += 1;
          }
        }
        return { file: block.file, line: block.line, command: line.replace(/\s+/g, ' '), user };
      }),
  );

const expectedHelmCommands = [
  // The README's quick start (test/integration/command/readme-quickstarts.test.ts checks it too).
  { file: 'README.md', command: 'helm install peer0-ops charts/fabric-ops -n org1 --set serviceMonitor.enabled=true' },
  { file: 'docs/kubernetes.md', command: 'helm install peer0-ops charts/fabric-ops -n org1' },
  { file: 'docs/kubernetes.md', command: 'helm install orderer0-ops charts/fabric-ops -n org1 --set dialect=orderer' },
  {
    file: 'docs/kubernetes.md',
    command:
      'helm upgrade peer0-ops charts/fabric-ops -n org1 --set kubernetes.events.enabled=true --set kubernetes.logspecConfigMap.enabled=true --set kubernetes.logspecConfigMap.initialSpec=info',
  },
  { file: 'charts/fabric-ops/README.md', command: 'helm install peer0-ops charts/fabric-ops -n org1' },
  { file: 'charts/fabric-ops/README.md', command: 'helm install orderer0-ops charts/fabric-ops -n org1 --set dialect=orderer' },
  {
    file: 'charts/fabric-ops/README.md',
    command:
      'helm install peer0-ops charts/fabric-ops -n org1 --set tls.provider=existingSecrets --set tls.existingSecrets.server=ops-server --set tls.existingSecrets.clientCA=ops-client-ca --set tls.existingSecrets.client=ops-scraper',
  },
  // Companion mode (a sidecar of an existing peer), with the worked example's values.
  { file: 'charts/fabric-ops/README.md', command: 'helm install org1-peer0-ops charts/fabric-ops -n org1 -f charts/fabric-ops/ci/companion-values.yaml' },
  { file: 'docs/kubernetes-companion.md', command: 'helm install org1-peer0-ops charts/fabric-ops -n org1 -f charts/fabric-ops/ci/companion-values.yaml' },
];

// ---------------------------------------------------------------------------------------------
// (a) values.yaml and the ci/ examples; (b) the documented examples.

describe('values.yaml and ci/*-values.yaml, merged as Helm merges them, meet the schema', () => {
  test('values.yaml alone', () => {
    expect(validateValues(defaults).map(renderError)).toEqual([]);
    expect(schemaErrors()).toEqual([]);
  });

  test('the ci/ examples are there', () => {
    expect(ciFiles).toEqual(expect.arrayContaining(['extra-values.yaml', 'fleet-values.yaml', 'openshift-values.yaml', 'scheduling-values.yaml']));
  });

  test.each(ciFiles)('%s over values.yaml', (file) => {
    expect(schemaErrors({ files: [readCiValues(file)] })).toEqual([]);
  });
});

describe('the documented examples of chart values meet the schema', () => {
  test('every expected YAML example is found (a yaml block headed by the helm command that takes it with -f)', () => {
    expect(yamlExamples.map(({ file, command }) => ({ file, command }))).toEqual(expect.arrayContaining(expectedYamlExamples));
  });

  test.each(yamlExamples.map((example) => [`${example.file}:${example.line}`, example] as const))('%s', (_where, example) => {
    const values = parseValues(example.text, `${example.file}:${example.line}`);
    expect(Object.keys(values).length).toBeGreaterThan(0);
    expect(schemaErrors({ files: [values] })).toEqual([]);
  });

  test('every expected helm command with --set is found', () => {
    expect(helmCommands.map(({ file, command }) => ({ file, command }))).toEqual(expect.arrayContaining(expectedHelmCommands));
  });

  test.each(helmCommands.map((command) => [`${command.file}:${command.line}: ${command.command}`, command] as const))('%s', (_where, command) => {
    expect(schemaErrors(command.user)).toEqual([]);
  });
});

// ---------------------------------------------------------------------------------------------
// (c) every refusal the schema promises, generated from the schema.

/**
 * Valid values for places the examples leave empty, so each constraint has valid values around
 * it (checked valid below, like the examples).
 */
const seeds: Values[] = [
  {
    fleet: {
      writers: [{ subject: 'O=org1,CN=admin', issuerFingerprint: `sha256:${'cd:'.repeat(31)}cd` }, { fingerprint: `SHA256:${'ab:'.repeat(31)}ab` }],
    },
  },
];

const corpus: Values[] = [
  mergedValues(),
  ...ciFiles.map((file) => mergedValues({ files: [readCiValues(file)] })),
  ...yamlExamples.map((example) => mergedValues({ files: [parseValues(example.text, example.file)] })),
  ...helmCommands.map((command) => mergedValues(command.user)),
  ...seeds.map((seed) => mergedValues({ files: [seed] })),
];
const cases: RefusalCase[] = new Generator(corpus).cases();

describe('every refusal values.schema.json promises: a value breaking each constraint is refused, naming its path', () => {
  test.each(seeds.map((seed, i) => [i, seed] as const))('seed %i is valid', (_i, seed) => {
    expect(schemaErrors({ files: [seed] })).toEqual([]);
  });

  test('every keyword of the schema is one the generator knows', () => {
    expect(unknownKeywords()).toEqual([]);
  });

  test('every constraint of the schema has its case (no node is out of the walk)', () => {
    const covered = new Set(cases.map((refusal) => refusal.id));
    const ids = schemaConstraintIds();
    expect(ids.length).toBeGreaterThan(400);
    expect(ids.filter((id) => !covered.has(id))).toEqual([]);
    // The constraints said to be unbreakable exist.
    expect(Object.keys(unbreakable).filter((id) => !ids.includes(id))).toEqual([]);
  });

  test.each(cases.filter((refusal) => refusal.unbreakable !== true).map((refusal) => [refusal.name, refusal] as const))('%s', (_name, refusal) => {
    if (refusal.problem !== undefined) throw new Error(`cannot make a value that breaks ${refusal.id}: ${refusal.problem}`);
    // The values around it are valid: only the broken value can be refused.
    expect(schemaErrors({ files: [refusal.base ?? {}] })).toEqual([]);
    const errors = validateValues(mergedValues({ files: [refusal.broken ?? {}] })).map((error) => `${renderError(error)}   [${error.schemaPath}]`);
    const escape = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    expect(errors).toContainEqual(expect.stringMatching(new RegExp(`^${escape(refusal.path ?? '')}: .*\\[${escape(refusal.schemaPath)}\\]$`)));
  });
});

// ---------------------------------------------------------------------------------------------
// The schema's shape.

describe('the shape of values.schema.json', () => {
  /** Every object node that declares properties, with its dotted path ('' for the root); $ref'd Kubernetes types are not entered. */
  function objectNodes(node: SchemaNode, at = ''): { path: string; node: SchemaNode }[] {
    const items = node.items as SchemaNode | undefined;
    const inItems = items ? objectNodes(items, `${at}[]`) : [];
    const properties = node.properties as Record<string, SchemaNode> | undefined;
    if (properties === undefined) return inItems;
    return [{ path: at, node }, ...Object.entries(properties).flatMap(([key, child]) => objectNodes(child, at === '' ? key : `${at}.${key}`)), ...inItems];
  }

  test('every object level declares additionalProperties: false, and every property has a description', () => {
    const nodes = objectNodes(schema);
    expect(nodes.length).toBeGreaterThan(20);
    for (const { path: at, node } of nodes) {
      expect({ at, additionalProperties: node.additionalProperties }).toEqual({ at, additionalProperties: false });
      for (const [key, child] of Object.entries((node.properties as Record<string, SchemaNode> | undefined) ?? {})) {
        // List items (tolerations[]) are Kubernetes objects, documented by Kubernetes.
        if (child.properties === undefined && !at.includes('[]')) {
          expect({ key: `${at}.${key}`, description: typeof child.description }).toEqual({ key: `${at}.${key}`, description: 'string' });
        }
      }
    }
  });
});

// ---------------------------------------------------------------------------------------------
// Helm's merge, as the checks above use it.

describe("Helm's merge of the user's values over values.yaml", () => {
  test('a null deletes the chart default (ci/openshift-values.yaml), the rest of the map stays', () => {
    const merged = mergedValues({ files: [readCiValues('openshift-values.yaml')] });
    expect(merged.podSecurityContext).toEqual({ runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } });
  });

  test('maps are merged, lists replaced', () => {
    const merged = mergedValues({ files: [readCiValues('extra-values.yaml')], set: { 'runtimeSocket.requiredConditions': ['RuntimeReady'] } });
    expect(merged.serviceAccount).toEqual({
      create: true,
      name: '',
      annotations: { 'eks.amazonaws.com/role-arn': 'arn:aws:iam::123456789012:role/fabric-ops' },
    });
    expect((merged.runtimeSocket as Values).requiredConditions).toEqual(['RuntimeReady']);
    expect((merged.podSecurityContext as Values).supplementalGroups).toEqual([995]);
    expect((merged.podSecurityContext as Values).runAsUser).toBe(10001);
  });

  test('a null under a key values.yaml does not have stays, and is validated', () => {
    expect(coalesce({ podLabels: { team: null } }, defaults).podLabels).toEqual({ team: null });
    expect(schemaErrors({ files: [{ podLabels: { team: null } }] })).toEqual(['podLabels.team: must be string (is null)']);
  });

  test('--set-json replaces the value at its key (the file’s map under it is not merged); --set keys as Helm reads them', () => {
    const merged = mergedValues({ files: [readCiValues('fleet-values.yaml')], setJson: { 'fleet.groups': { org3: { secret: 'c' } } } });
    expect((merged.fleet as Values).groups).toEqual({ org3: { secret: 'c' } });
    expect(setKeySegments('nodeSelector.kubernetes\\.io/os')).toEqual(['nodeSelector', 'kubernetes.io/os']);
    expect(setKeySegments('networkPolicy.allowedNamespaces[1]')).toEqual(['networkPolicy', 'allowedNamespaces', 1]);
    expect((mergedValues({ set: { 'networkPolicy.allowedNamespaces[1]': 'monitoring' } }).networkPolicy as Values).allowedNamespaces).toEqual([
      null,
      'monitoring',
    ]);
  });

  test('a file Helm (YAML 1.1) reads differently is refused, naming it', () => {
    expect(() => parseValues('probes:\n  enabled: yes\n', 'mine.yaml')).toThrow('mine.yaml: reads differently under YAML 1.1 (Helm) and 1.2');
    expect(parseValues('', 'empty.yaml')).toEqual({});
  });
});

// ---------------------------------------------------------------------------------------------
// The refusals the chart's tests named one by one (schema-level; the render-time ones are in
// test/real/chart/).

describe('named refusals', () => {
  test.each([
    ['dialect', 'gateway', 'dialect: must be one of "peer", "orderer" (is "gateway")'],
    ['tls.provider', 'vault', 'tls.provider: must be one of "certManager", "existingSecrets", "none" (is "vault")'],
    ['runtimeSocket.runtime', 'podman', 'runtimeSocket.runtime: must be one of "containerd", "crio", "docker" (is "podman")'],
    ['config.metrics.provider', 'prometeus', 'config.metrics.provider: must be one of "prometheus", "statsd", "disabled" (is "prometeus")'],
    ['config.metrics.statsd.network', 'sctp', 'config.metrics.statsd.network: must be one of "udp", "tcp" (is "sctp")'],
    ['image.pullPolicy', 'Sometimes', 'image.pullPolicy: must be one of "Always", "IfNotPresent", "Never" (is "Sometimes")'],
  ])('enum %s refuses %s', (key, value, line) => {
    expect(schemaErrors({ set: { [key]: value } })).toEqual([line]);
  });

  test.each([
    ['config.healthCheck.timeout', '2 seconds', /^config\.healthCheck\.timeout: must match pattern ".*" \(is "2 seconds"\)$/],
    ['operations.port', 70000, /^operations\.port: must be <= 65535 \(is 70000\)$/],
    ['probes.liveness.timeoutSeconds', 0, /^probes\.liveness\.timeoutSeconds: must be >= 1 \(is 0\)$/],
    ['podSecurityContext.runAsUser', 0, /^podSecurityContext\.runAsUser: must be >= 1 \(is 0\)$/],
    ['env.1NOT_A_NAME', 'x', /^env\.1NOT_A_NAME: key must match pattern "\^\[A-Za-z_\]\[A-Za-z0-9_\]\*\$"$/],
    ['networkPolicy.allowedNamespaces[0]', 'Not_A_Namespace', /^networkPolicy\.allowedNamespaces\[0\]: must match pattern ".*" \(is "Not_A_Namespace"\)$/],
    ['runtimeSocket.path', 'relative.sock', /^runtimeSocket\.path: must match pattern "\^\$\|\^\/" \(is "relative\.sock"\)$/],
    ['logging.spec', '', /^logging\.spec: must NOT have fewer than 1 characters \(is ""\)$/],
    ['fleet.concurrency', 0, /^fleet\.concurrency: must be >= 1 \(is 0\)$/],
    ['fleet.nodeTimeout', '2 seconds', /^fleet\.nodeTimeout: must match pattern/],
  ])('%s refuses %j', (key, value, line) => {
    const errors = schemaErrors({ set: { [key]: value } });
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatch(line);
  });

  // Issue 30 item 15: each of these rendered, and the pod crash-looped or was unreachable.
  test.each([
    ['0.0.0.0:9443', 'a port in the host: rendered [0.0.0.0:9443]:9443, which the service refuses at start'],
    ['999.1.1.1', 'not an address: the service cannot bind it'],
    ['10.1.2.3', 'an address the pod does not have (its own IP is not known when the chart renders)'],
    ['127.0.0.1', 'loopback: the probes, the Service and Prometheus cannot reach it'],
    ['127.0.0.2', 'loopback (all of 127.0.0.0/8)'],
    ['127.255.255.254', 'loopback (all of 127.0.0.0/8)'],
    ['::1', 'IPv6 loopback'],
    ['localhost', 'loopback by name'],
    ['[::]', 'brackets: the chart adds them'],
    ['', 'empty'],
  ])('operations.listenHost=%j is refused (%s)', (value) => {
    expect(schemaErrors({ setJson: { 'operations.listenHost': value } })).toEqual([
      `operations.listenHost: must be one of "0.0.0.0", "::" (is ${JSON.stringify(value)})`,
    ]);
  });

  test('operations.listenHost takes 0.0.0.0 and ::, and says why it takes nothing else', () => {
    expect(schemaErrors({ set: { 'operations.listenHost': '0.0.0.0' } })).toEqual([]);
    expect(schemaErrors({ set: { 'operations.listenHost': '::' } })).toEqual([]);
    const node = ((schema.properties as Record<string, SchemaNode>).operations?.properties as Record<string, SchemaNode>).listenHost as SchemaNode;
    expect(node.description).toMatch(/loopback address \(`127\.0\.0\.0\/8`, `::1`, `localhost`\) is reachable only from inside the pod/);
    expect(node.description).toMatch(/without the port \(that is `operations\.port`\)/);
  });

  test('serviceMonitor.enabled is null (created where the API is served), true or false', () => {
    expect((defaults.serviceMonitor as Values).enabled).toBeNull();
    for (const enabled of [true, false, null]) expect(schemaErrors({ setJson: { 'serviceMonitor.enabled': enabled } })).toEqual([]);
    expect(schemaErrors({ setJson: { 'serviceMonitor.enabled': 'auto' } })).toEqual(['serviceMonitor.enabled: must be boolean or null (is "auto")']);
  });

  test('a misspelt key names itself and the keys allowed there', () => {
    expect(schemaErrors({ set: { 'tls.certManager.clusterDomian': 'x' } })).toEqual([
      'tls.certManager.clusterDomian: is not a key of tls.certManager (keys: clusterDomain, extraDnsNames, caDuration, duration, renewBefore)',
    ]);
    expect(schemaErrors({ set: { dialcet: 'peer' } })[0]).toMatch(/^dialcet: is not a key of the top level \(keys: dialect, image, /);
  });

  test('a misspelt key inside a list item (tolerations[].key) is refused; the right one is not', () => {
    expect(schemaErrors({ setJson: { tolerations: [{ kye: 'node-role', operator: 'Exists' }] } })).toEqual([
      'tolerations[0].kye: is not a key of tolerations[0] (keys: key, operator, value, effect, tolerationSeconds)',
    ]);
    expect(schemaErrors({ setJson: { tolerations: [{ key: 'node-role', operator: 'Exists', effect: 'NoSchedule' }] } })).toEqual([]);
  });

  test('maps keep their free keys: env, podLabels, podAnnotations, nodeSelector', () => {
    expect(
      schemaErrors({
        set: { 'env.CORE_METRICS_STATSD_PREFIX': 'peer0', 'podLabels.team': 'ops', 'podAnnotations.note': 'x', 'nodeSelector.kubernetes\\.io/os': 'linux' },
      }),
    ).toEqual([]);
  });

  const fleetValues = readCiValues('fleet-values.yaml');

  test.each([
    [{ 'fleet.groups': { org1: { secret: 'a', cert: 'x' } } }, 'fleet.groups.org1.cert: is not a key of fleet.groups.org1 (keys: secret, caSecret, caKey)'],
    [{ 'fleet.groups': { org1: {} } }, 'fleet.groups.org1.secret: is required'],
    [
      { 'fleet.nodes': [{ name: 'a', url: 'https://a:1/path', group: 'org1' }] },
      /^fleet\.nodes\[0\]\.url: must match pattern ".*" \(is "https:\/\/a:1\/path"\)$/,
    ],
    [
      { 'fleet.nodes': [{ name: 'a', url: 'https://a:1', group: 'org1', dialect: 'client' }] },
      'fleet.nodes[0].dialect: must be one of "peer", "orderer", "unknown" (is "client")',
    ],
    [{ 'fleet.nodes': [{ name: 'a', url: 'https://a:1', group: 'org1', role: 'peer' }] }, /^fleet\.nodes\[0\]\.role: is not a key of fleet\.nodes\[0\] /],
    [{ 'fleet.healthy': { minShare: 2 } }, 'fleet.healthy.minShare: must be <= 1 (is 2)'],
    [{ 'fleet.discovery': { consul: [] } }, /^fleet\.discovery\.consul: is not a key of fleet\.discovery \(keys: kubernetes\)$/],
    [{ 'fleet.stateConfigMap': { enabled: 'yes' } }, 'fleet.stateConfigMap.enabled: must be boolean or null (is "yes")'],
    [{ 'fleet.stateConfigMap': { name: 'Org1_PutBacks' } }, /^fleet\.stateConfigMap\.name: must match pattern/],
  ])('fleet (ci/fleet-values.yaml with --set-json %j)', (setJson, line) => {
    const errors = schemaErrors({ files: [fleetValues], setJson });
    expect(errors).toContainEqual(typeof line === 'string' ? line : expect.stringMatching(line));
  });

  const service = (extra: Record<string, unknown> = {}): Values => ({
    kind: 'Service',
    selector: 'app.kubernetes.io/component=peer',
    port: 'operations',
    group: 'org1',
    ...extra,
  });

  test.each([
    [{ kind: 'Service', port: 'operations', group: 'org1' }, 'fleet.discovery.kubernetes[0].selector: is required'],
    [service({ selector: '' }), /^fleet\.discovery\.kubernetes\[0\]\.selector: must NOT have fewer than 1 characters/],
    [service({ kind: 'Deployment' }), 'fleet.discovery.kubernetes[0].kind: must be one of "Service", "Pod" (is "Deployment")'],
    [service({ port: 'Operations' }), /^fleet\.discovery\.kubernetes\[0\]\.port: must match pattern/],
    [service({ port: 'ops--metrics' }), /^fleet\.discovery\.kubernetes\[0\]\.port: must match pattern/],
    [service({ port: '-ops' }), /^fleet\.discovery\.kubernetes\[0\]\.port: must match pattern/],
    [service({ port: '9443' }), /^fleet\.discovery\.kubernetes\[0\]\.port: must match pattern/],
    [service({ port: 'operations-port1' }), 'fleet.discovery.kubernetes[0].port: must NOT have more than 15 characters (is "operations-port1")'],
    [service({ port: 0 }), 'fleet.discovery.kubernetes[0].port: must be >= 1 (is 0)'],
    [service({ port: 65536 }), 'fleet.discovery.kubernetes[0].port: must be <= 65535 (is 65536)'],
    [service({ namespace: 'Org2' }), /^fleet\.discovery\.kubernetes\[0\]\.namespace: must match pattern/],
    [service({ scheme: 'grpc' }), 'fleet.discovery.kubernetes[0].scheme: must be one of "https", "http" (is "grpc")'],
    [service({ address: 'nodePort' }), 'fleet.discovery.kubernetes[0].address: must be one of "dns", "clusterIP" (is "nodePort")'],
    [service({ dialectLabel: 'not a label' }), /^fleet\.discovery\.kubernetes\[0\]\.dialectLabel: must match pattern/],
    [service({ labelSelector: 'a=b' }), /^fleet\.discovery\.kubernetes\[0\]\.labelSelector: is not a key of fleet\.discovery\.kubernetes\[0\] /],
  ])('discovery source %j', (source, line) => {
    const errors = schemaErrors({ files: [fleetValues], setJson: { 'fleet.discovery.kubernetes': [source] } });
    expect(errors).toContainEqual(typeof line === 'string' ? line : expect.stringMatching(line));
  });

  test.each([
    [{ issuerFingerprint: `sha256:${'cd:'.repeat(31)}cd` }, ['fleet.writers[0].subject: is required', 'fleet.writers[0].fingerprint: is required']],
    // An issuer named by its distinguished name is what any trusted CA can mint (issue 28): refused.
    [
      { subject: 'O=org1,CN=operator', issuer: 'O=org1,CN=ca.org1' },
      [expect.stringMatching(/^fleet\.writers\[0\]\.issuer: is not a key of fleet\.writers\[0\] \(keys: subject, issuerFingerprint, fingerprint\)$/)],
    ],
    [{ fingerprint: 'abc' }, [expect.stringMatching(/^fleet\.writers\[0\]\.fingerprint: must match pattern/)]],
    [
      { subject: 'O=org1,CN=operator', role: 'admin' },
      [expect.stringMatching(/^fleet\.writers\[0\]\.role: is not a key of fleet\.writers\[0\] \(keys: subject, issuerFingerprint, fingerprint\)$/)],
    ],
  ])('writer %j', (writer, lines) => {
    const errors = schemaErrors({ files: [fleetValues], setJson: { 'fleet.writers': [writer] } });
    expect(errors).toEqual(expect.arrayContaining([...lines, 'fleet.writers[0]: must match exactly one schema in oneOf']));
  });

  test.each([
    [{ podSecurityContext: { runAsUsr: 5 } }, /^podSecurityContext\.runAsUsr: is not a key of podSecurityContext /],
    [
      { containerSecurityContext: { readOnlyRootFileSystem: true } },
      /^containerSecurityContext\.readOnlyRootFileSystem: is not a key of containerSecurityContext /,
    ],
    [{ affinity: { podAntiAfinity: {} } }, 'affinity.podAntiAfinity: is not a key of affinity (keys: nodeAffinity, podAffinity, podAntiAffinity)'],
    [{ extraEnv: [{ name: 'A', valu: 'x' }] }, 'extraEnv[0].valu: is not a key of extraEnv[0] (keys: name, value, valueFrom)'],
    [{ extraEnv: [{ name: 'A', value: 'x', valueFrom: { fieldRef: {} } }] }, 'extraEnv[0]: must not match {"required":["value","valueFrom"]}'],
    [{ extraVolumeMounts: [{ name: 'a', mountpath: '/x' }] }, /^extraVolumeMounts\[0\]\.mountpath: is not a key of extraVolumeMounts\[0\] /],
    [{ topologySpreadConstraints: [{ maxSkew: 1, topologyKey: 'k' }] }, 'topologySpreadConstraints[0].whenUnsatisfiable: is required'],
    [{ serviceAccount: { craete: true } }, 'serviceAccount.craete: is not a key of serviceAccount (keys: create, name, annotations)'],
  ])('passed-through Kubernetes values: %j', (setJson, line) => {
    expect(schemaErrors({ setJson })).toContainEqual(typeof line === 'string' ? line : expect.stringMatching(line));
  });
});
