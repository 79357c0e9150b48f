import { existsSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { parse } from 'yaml';
import { loadConfig } from '../../src/config/load';
import { settingsReference } from '../../src/config/reference';
import type { NormalisedConfig } from '../../src/config/types';
import { deployerPods, type DeployerPod, type Volume } from './companion-deployers';
import { validateObjects } from './kubernetes-schema';
import { describeViolations, restrictedViolations } from './pod-security';

/**
 * The sidecar blocks of docs/kubernetes-companion.md (issue 29 item 6), so that the docs cannot
 * drift from Kubernetes, from Pod Security `restricted`, from fabric-ops' keys or from the
 * deployers' pods: each block (a yaml block whose first line is `# fabric-ops sidecar: <id>
 * (<dialect>)`) is a strategic-merge patch of the deployer's Deployment, checked against that
 * deployer's pod as its source renders it (test/chart/companion-deployers.ts). No cluster and no
 * helm: the chart's own rendering of the sidecar is the opt-in suite's (test/real/chart/companion.test.ts).
 */

const repoRoot = path.resolve(__dirname, '../..');
const docFile = 'docs/kubernetes-companion.md';
const sampleConfigDir = path.resolve(repoRoot, '..', 'shared', 'fixtures', 'fabric-sampleconfig');

type Obj = Record<string, unknown>;

interface Block {
  line: number;
  id: string;
  dialect: string;
  applyLine: string;
  text: string;
}

function docBlocks(): Block[] {
  const lines = readFileSync(path.join(repoRoot, docFile), 'utf8').split('\n');
  const blocks: Block[] = [];
  for (let i = 0; i < lines.length; i += 1) {
    if (!/^```ya?ml\s*$/.test(lines[i] ?? '')) continue;
    const body: string[] = [];
    let j = i + 1;
    while (j < lines.length && !/^```\s*$/.test(lines[j] ?? '')) body.push(lines[j++] ?? '');
    if (j >= lines.length) throw new Error(`${docFile}:${i + 1}: code block never closed`);
    const marker = /^# fabric-ops sidecar: (\S+) \((peer|orderer)\)$/.exec(body[0] ?? '');
    if (marker) blocks.push({ line: i + 1, id: marker[1] ?? '', dialect: marker[2] ?? '', applyLine: body[1] ?? '', text: body.join('\n') });
    i = j;
  }
  return blocks;
}

const blocks = docBlocks();

function isMap(value: unknown): value is Obj {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function mapAt(value: unknown, ...keys: string[]): Obj {
  let current: unknown = value;
  for (const key of keys) current = isMap(current) ? current[key] : undefined;
  if (!isMap(current)) throw new Error(`no map at ${keys.join('.')}`);
  return current;
}

function listAt(value: unknown, ...keys: string[]): Obj[] {
  const parent = keys.length > 1 ? mapAt(value, ...keys.slice(0, -1)) : isMap(value) ? value : {};
  const current = parent[keys[keys.length - 1] ?? ''];
  return Array.isArray(current) ? current.filter(isMap) : [];
}

/** The patch as kubectl reads it: YAML 1.1 and 1.2 must agree (sigs.k8s.io/yaml reads YAML 1.1). */
function parsePatch(block: Block): Obj {
  const modern: unknown = parse(block.text);
  const kubectlRead: unknown = parse(block.text, { version: '1.1' });
  if (!isDeepStrictEqual(modern, kubectlRead)) throw new Error(`${docFile}:${block.line}: reads differently under YAML 1.1 (kubectl) and 1.2; quote the value`);
  if (!isMap(modern)) throw new Error(`${docFile}:${block.line}: not a map`);
  return modern;
}

interface Mount {
  name: string;
  mountPath: string;
  subPath?: string;
  readOnly?: boolean;
}

interface Resolved {
  mount: Mount;
  volume: Volume;
  /** The path inside the volume ('' for the volume's root or the subPath's folder). */
  rel: string;
  /** A file the volume holds (a Secret's or ConfigMap's key, items considered), a folder, or unknown content (a claim). */
  what: 'file' | 'folder' | 'missing' | 'claim';
}

/** The files a Secret or ConfigMap volume shows: its items' paths, else every key. */
function volumeFiles(volume: Volume, deployer: DeployerPod): string[] | null {
  const source = isMap(volume.secret) ? volume.secret : isMap(volume.configMap) ? volume.configMap : null;
  if (source === null) return null;
  const name = String(isMap(volume.secret) ? source.secretName : source.name);
  const keys = isMap(volume.secret) ? deployer.secrets[name] : Object.keys(deployer.configMaps[name] ?? {});
  if (keys === undefined) throw new Error(`volume ${volume.name}: Secret ${name} is not one of the deployer's (${Object.keys(deployer.secrets).join(', ')})`);
  const items = Array.isArray(source.items) ? source.items.filter(isMap) : null;
  if (items === null) return keys;
  for (const item of items)
    if (!keys.includes(String(item.key))) throw new Error(`volume ${volume.name}: item key ${String(item.key)} is not in ${name} (${keys.join(', ')})`);
  return items.map((item) => String(item.path));
}

/** Which mount a path of the sidecar lands on (the deepest one), and what is there. */
function resolvePath(file: string, mounts: readonly Mount[], volumes: ReadonlyMap<string, Volume>, deployer: DeployerPod): Resolved | null {
  const candidates = mounts
    .filter((mount) => file === mount.mountPath.replace(/\/$/, '') || file.startsWith(`${mount.mountPath.replace(/\/$/, '')}/`))
    .sort((a, b) => b.mountPath.length - a.mountPath.length);
  const mount = candidates[0];
  if (mount === undefined) return null;
  const volume = volumes.get(mount.name);
  if (volume === undefined) throw new Error(`mount ${mount.mountPath}: no volume ${mount.name}`);
  const inMount = file.slice(mount.mountPath.replace(/\/$/, '').length).replace(/^\//, '');
  const rel = [mount.subPath ?? '', inMount].filter((part) => part !== '').join('/');
  const files = volumeFiles(volume, deployer);
  if (files === null) return { mount, volume, rel, what: 'claim' };
  if (inMount === '' && (mount.subPath ?? '') === '') return { mount, volume, rel, what: 'folder' };
  return { mount, volume, rel, what: files.includes(rel) ? 'file' : 'missing' };
}

/** A private key by its file name, as Fabric's and the deployers' layouts name them. */
function looksLikeKey(file: string): boolean {
  const base = path.posix.basename(file);
  return /(^|[._-])key(\.pem)?$|\.key$|_sk$|^priv/i.test(base);
}

interface Checked {
  block: Block;
  deployer: DeployerPod;
  patch: Obj;
  container: Obj;
  patchVolumes: Volume[];
  volumes: Map<string, Volume>;
  mounts: Mount[];
  env: { name: string; value?: string }[];
}

function prepare(block: Block): Checked {
  const deployer = deployerPods.find((pod) => pod.id === block.id);
  if (deployer === undefined) throw new Error(`${docFile}:${block.line}: no deployer pod ${block.id} in test/chart/companion-deployers.ts`);
  const patch = parsePatch(block);
  const containers = listAt(patch, 'spec', 'template', 'spec', 'containers');
  const container = containers[0] ?? {};
  const patchVolumes = listAt(patch, 'spec', 'template', 'spec', 'volumes') as Volume[];
  const volumes = new Map<string, Volume>([...deployer.volumes, ...patchVolumes].map((volume) => [volume.name, volume]));
  const mounts = (Array.isArray(container.volumeMounts) ? container.volumeMounts : []) as Mount[];
  const env = (Array.isArray(container.env) ? container.env : []) as { name: string; value?: string }[];
  return { block, deployer, patch, container, patchVolumes, volumes, mounts, env };
}

/** The sidecar alone in a pod with the volumes it mounts (the deployer's and the patch's), and no pod-level securityContext. */
function sidecarPod(checked: Checked): Obj {
  const used = new Set(checked.mounts.map((mount) => mount.name));
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: `${checked.deployer.workload.name}-sidecar`, labels: checked.deployer.podLabels },
    spec: { containers: [checked.container], volumes: [...checked.volumes.values()].filter((volume) => used.has(volume.name)) },
  };
}

/** The sidecar's configuration, loaded by fabric-ops' own loader as the sidecar would: Fabric's sample file standing in for the node's, the node's values, its variables, the sidecar's. */
function loadSidecarConfig(checked: Checked): { config: NormalisedConfig; configArg: string; mapPath: (file: string) => string } {
  const args = (checked.container.args ?? []) as string[];
  const configArg = args[args.indexOf('--config') + 1] ?? '';
  const sample = path.join(sampleConfigDir, checked.deployer.configKey);
  if (!existsSync(sample)) throw new Error(`Fabric's sample ${checked.deployer.configKey} is missing: ${sample} (../shared/fixtures/fabric-sampleconfig)`);
  const fromConfigMaps: Record<string, string> = {};
  for (const source of listAt(checked.container, 'envFrom')) {
    const name = String(mapAt(source, 'configMapRef').name);
    const data = checked.deployer.configMaps[name];
    if (data === undefined)
      throw new Error(`envFrom configMapRef ${name} is not one of the deployer's ConfigMaps (${Object.keys(checked.deployer.configMaps).join(', ')})`);
    Object.assign(fromConfigMaps, data);
  }
  const own = Object.fromEntries(
    checked.env.filter((variable) => typeof variable.value === 'string').map((variable) => [variable.name, variable.value as string]),
  );
  const env = { ...checked.deployer.fileValues, ...fromConfigMaps, ...own };
  const { config } = loadConfig({ configFile: sample, dialect: checked.deployer.dialect, env });
  // A relative path is against the config file's folder: the sidecar's, not the sample's.
  const sampleDir = path.dirname(sample);
  const mapPath = (file: string): string =>
    file === sampleDir || file.startsWith(`${sampleDir}/`) ? path.posix.join(path.posix.dirname(configArg), file.slice(sampleDir.length)) : file;
  return { config, configArg, mapPath };
}

/**
 * Where the sidecar's reads land: every certificate file and folder and every data folder fabric-ops
 * reads (as its loader resolves them) must lie on one of its mounts, a file as a key the mounted
 * Secret or ConfigMap holds, a data folder on the node's claim. One line per problem.
 */
function placementProblems(entry: Checked): string[] {
  const { config, mapPath } = loadSidecarConfig(entry);
  const companion = config.companion;
  if (companion === undefined) return ['companion mode is off'];
  // Fabric's MSP needs signcerts/ and cacerts/ (msp/configbuilder.go); the other folders may be absent.
  const optionalFolders = ['msp_intermediatecert', 'msp_tlscacert', 'msp_tlsintermediatecert', 'msp_admincert'];
  const problems: string[] = [];
  for (const source of companion.certificates.sources) {
    const file = mapPath(source.path);
    const resolved = resolvePath(file, entry.mounts, entry.volumes, entry.deployer);
    const wanted = source.form === 'folder' ? 'folder' : 'file';
    if (resolved?.what === wanted) continue;
    if (source.form === 'folder' && optionalFolders.includes(source.kind)) continue;
    problems.push(
      `${source.key} (${source.kind}) ${file}: ${resolved === null ? 'on no mount' : `${resolved.what} in volume ${resolved.volume.name} (${resolved.rel})`}`,
    );
  }
  if (companion.certificates.sources.filter((source) => source.form === 'file').length < 2)
    problems.push('fewer than two certificate files read (the TLS server certificate and its root CA at least)');
  for (const folder of companion.dataFolders) {
    if (entry.deployer.unmountedDataFolders[folder.key] !== undefined) continue;
    const resolved = resolvePath(mapPath(folder.path), entry.mounts, entry.volumes, entry.deployer);
    if (resolved?.what !== 'claim' || !isMap(resolved.volume.persistentVolumeClaim))
      problems.push(`${folder.key} ${folder.path}: not on the node's data claim`);
  }
  if (companion.dataFolders.length < 2) problems.push('fewer than two data folders read');
  return problems;
}

const checked = blocks.map(prepare);
const byId = (id: string): Checked => {
  const found = checked.find((entry) => entry.block.id === id);
  if (found === undefined) throw new Error(`no block ${id}`);
  return found;
};

describe(`${docFile}: the sidecar blocks`, () => {
  test('there is one block per deployer the docs promise, each for its dialect', () => {
    expect(blocks.map((block) => `${block.id} (${block.dialect})`)).toEqual([
      'hlf-peer (peer)',
      'hlf-ordnode (orderer)',
      'hlf-operator (peer)',
      'fabric-operator (peer)',
    ]);
    for (const block of blocks) expect({ id: block.id, dialect: byId(block.id).deployer.dialect }).toEqual({ id: block.id, dialect: block.dialect });
  });

  describe.each(blocks.map((block) => [`${block.id} (${docFile}:${block.line})`, block.id] as const))('%s', (_name, id) => {
    test("a strategic-merge patch of the deployer's Deployment, adding one container and free volume names; the apply line names it", () => {
      const { patch, deployer, patchVolumes, block } = byId(id);
      expect({ apiVersion: patch.apiVersion, kind: patch.kind, name: mapAt(patch, 'metadata').name }).toEqual({
        apiVersion: 'apps/v1',
        kind: deployer.workload.kind,
        name: deployer.workload.name,
      });
      expect(Object.keys(mapAt(patch, 'spec'))).toEqual(['template']);
      expect(Object.keys(mapAt(patch, 'spec', 'template'))).toEqual(['spec']);
      expect(Object.keys(mapAt(patch, 'spec', 'template', 'spec')).filter((key) => key !== 'volumes')).toEqual(['containers']);
      expect(listAt(patch, 'spec', 'template', 'spec', 'containers').map((container) => container.name)).toEqual(['fabric-ops']);
      const taken = deployer.volumes.map((volume) => volume.name);
      expect(patchVolumes.map((volume) => volume.name).filter((name) => taken.includes(name))).toEqual([]);
      expect(block.applyLine).toMatch(
        new RegExp(`^# kubectl -n \\S+ patch ${deployer.workload.kind.toLowerCase()} ${deployer.workload.name} --patch-file \\S+$`),
      );
    });

    test('in a Pod with the volumes it mounts, it passes the Kubernetes schema (unknown fields included) and Pod Security restricted with no pod-level context', () => {
      const entry = byId(id);
      for (const mount of entry.mounts)
        expect({ mount: mount.mountPath, volume: entry.volumes.has(mount.name) }).toEqual({ mount: mount.mountPath, volume: true });
      const pod = sidecarPod(entry);
      expect(validateObjects([pod]).flatMap((result) => result.errors)).toEqual([]);
      expect(describeViolations(restrictedViolations(mapAt(pod, 'spec')))).toEqual([]);
    });

    test('hardened field by field, probes on /version and no readiness probe, read-only mounts, resources', () => {
      const { container, mounts } = byId(id);
      expect(container.securityContext).toMatchObject({
        runAsNonRoot: true,
        readOnlyRootFilesystem: true,
        allowPrivilegeEscalation: false,
        capabilities: { drop: ['ALL'] },
        seccompProfile: { type: 'RuntimeDefault' },
      });
      const context = mapAt(container, 'securityContext');
      expect(context.privileged).not.toBe(true);
      expect(typeof context.runAsUser === 'number' && context.runAsUser > 0).toBe(true);
      expect(mapAt(context, 'capabilities').add).toBeUndefined();
      expect(container.ports).toEqual([{ name: 'fabric-ops', containerPort: 9449, protocol: 'TCP' }]);
      for (const probe of ['startupProbe', 'livenessProbe'])
        expect({ probe, httpGet: mapAt(container, probe, 'httpGet') }).toEqual({ probe, httpGet: { path: '/version', port: 'fabric-ops' } });
      expect(container.readinessProbe).toBeUndefined();
      expect(mounts.filter((mount) => mount.readOnly !== true).map((mount) => mount.mountPath)).toEqual([]);
      const resources = mapAt(container, 'resources');
      for (const side of ['requests', 'limits']) expect(Object.keys(mapAt(resources, side)).sort()).toEqual(['cpu', 'memory']);
    });

    test('every variable it sets is a key fabric-ops reads in its dialect (fabric-ops --list-keys), or its own FABRIC_LOGGING_*', () => {
      const { env, deployer } = byId(id);
      const known = new Set([
        ...settingsReference(deployer.dialect).map((setting) => setting.environmentVariable),
        'FABRIC_LOGGING_SPEC',
        'FABRIC_LOGGING_FORMAT',
        'FABRIC_CFG_PATH',
      ]);
      expect(env.length).toBeGreaterThan(3);
      expect(env.map((variable) => variable.name).filter((name) => !known.has(name))).toEqual([]);
      expect(env.filter((variable) => typeof variable.value !== 'string').map((variable) => variable.name)).toEqual([]);
      // Never a key file of the node's (fabric-ops' own server and client keys only).
      expect(
        env.filter((variable) => /(KEY_FILE|PRIVATEKEY)$/.test(variable.name) && !/_COMPANION_/.test(variable.name)).map((variable) => variable.name),
      ).toEqual([]);
    });

    test("it takes the node's environment: the node's env ConfigMap, or each of the node's own variables that fabric-ops reads (its key files aside), with the node's value", () => {
      const { deployer, container, env } = byId(id);
      const read = new Set(settingsReference(deployer.dialect).map((setting) => setting.environmentVariable));
      if (deployer.nodeEnv === undefined) {
        const envConfigMaps = Object.entries(deployer.configMaps).filter(([, data]) => Object.keys(data).some((key) => /^(CORE|ORDERER)_/.test(key)));
        expect(listAt(container, 'envFrom').map((source) => mapAt(source, 'configMapRef').name)).toEqual(envConfigMaps.map(([name]) => name));
      } else {
        const own = Object.fromEntries(env.map((variable) => [variable.name, variable.value]));
        // The node's key files are the node's: in companion mode fabric-ops reads none of them (docs/companion.md).
        const nodeRead = Object.entries(deployer.nodeEnv).filter(([name]) => read.has(name) && !/(KEY_FILE|PRIVATEKEY)$/.test(name));
        expect(nodeRead.length).toBeGreaterThan(5);
        expect(nodeRead.filter(([name, value]) => own[name] !== value)).toEqual([]);
      }
    });

    test("fabric-ops' loader finds companion mode on, its port, and the node's endpoint at the deployer's port, with no runtime check", () => {
      const entry = byId(id);
      const { config, configArg } = loadSidecarConfig(entry);
      expect(config.companion).toBeDefined();
      expect(config.operations.listen).toEqual({ host: '0.0.0.0', port: 9449 });
      expect(config.companion?.node.address).toEqual({ host: '127.0.0.1', port: entry.deployer.nodeOperationsPort });
      expect(config.health.containerRuntime.type).toBe('none');
      const resolved = resolvePath(configArg, entry.mounts, entry.volumes, entry.deployer);
      expect({ configArg, volume: resolved?.volume.name, what: resolved?.what, rel: resolved?.rel }).toEqual({
        configArg,
        volume: expect.any(String),
        what: 'file',
        rel: entry.deployer.configKey,
      });
      expect(isMap(resolved?.volume.configMap)).toBe(true);
    });

    test('every certificate file and folder and every data folder it reads lies on a mount, as a file the mounted Secret or ConfigMap holds', () => {
      expect(placementProblems(byId(id))).toEqual([]);
    });

    test('no private key is mounted: no keystore, no file of a mounted Secret named as keys are', () => {
      const entry = byId(id);
      const visible = entry.mounts.flatMap((mount) => {
        const volume = entry.volumes.get(mount.name);
        const files = volume === undefined ? null : volumeFiles(volume, entry.deployer);
        return files === null || !isMap(volume?.secret) ? [] : files.map((file) => `${mount.mountPath}/${file}`);
      });
      expect(visible.length).toBeGreaterThan(3);
      expect(visible.filter(looksLikeKey)).toEqual([]);
      expect(entry.mounts.filter((mount) => /keystore|key/i.test(mount.name) || /keystore/.test(mount.mountPath)).map((mount) => mount.name)).toEqual([]);
    });
  });
});

describe('charts/fabric-ops/ci/companion-values.yaml: the hlf-peer layout as chart values', () => {
  // What the chart's sidecar takes from these values (templates/_helpers.tpl, fabric-ops.companionContainer):
  // companion.volumeMounts (read-only), extraVolumes added to the pod, envFrom, then env; and the
  // companion's own pinned variables, of which the loader needs these three. Rendered with helm in
  // test/real/chart/companion.test.ts.
  const values = parse(readFileSync(path.join(repoRoot, 'charts', 'fabric-ops', 'ci', 'companion-values.yaml'), 'utf8')) as {
    companion: { workload: { kind: string; name: string; podLabels: Record<string, string> }; configFile: string; volumeMounts: Mount[]; envFrom: Obj[] };
    env: Record<string, string>;
    extraVolumes: Volume[];
  };
  const deployer = deployerPods.find((pod) => pod.id === 'hlf-peer');
  if (deployer === undefined) throw new Error('no hlf-peer deployer pod');
  const container: Obj = {
    name: 'fabric-ops',
    args: ['--config', values.companion.configFile, '--dialect', 'peer'],
    envFrom: values.companion.envFrom,
    env: [
      { name: 'CORE_OPERATIONS_COMPANION_ENABLED', value: 'true' },
      { name: 'CORE_OPERATIONS_COMPANION_LISTENADDRESS', value: '0.0.0.0:9449' },
      { name: 'CORE_OPERATIONS_HEALTHCHECK_CONTAINERRUNTIME_TYPE', value: 'none' },
      ...Object.entries(values.env).map(([name, value]) => ({ name, value })),
    ],
    volumeMounts: values.companion.volumeMounts.map((mount) => ({ ...mount, readOnly: true })),
  };
  const entry: Checked = {
    block: { line: 0, id: 'hlf-peer', dialect: 'peer', applyLine: '', text: '' },
    deployer,
    patch: {},
    container,
    patchVolumes: values.extraVolumes,
    volumes: new Map<string, Volume>([...deployer.volumes, ...values.extraVolumes].map((volume) => [volume.name, volume])),
    mounts: container.volumeMounts as Mount[],
    env: container.env as { name: string; value?: string }[],
  };

  test("the workload, pod labels and env ConfigMap are the hlf-peer chart's", () => {
    expect(values.companion.workload).toEqual({ kind: 'Deployment', name: deployer.workload.name, podLabels: deployer.podLabels });
    expect(values.companion.envFrom).toEqual([{ configMapRef: { name: 'org1-peer0-hlf-peer--peer' } }]);
  });

  test('every certificate file and folder and every data folder lies on a mount, as a file the mounted Secret or ConfigMap holds; no key is mounted', () => {
    expect(placementProblems(entry)).toEqual([]);
    const visible = entry.mounts.flatMap((mount) => {
      const volume = entry.volumes.get(mount.name);
      const files = volume === undefined ? null : volumeFiles(volume, deployer);
      return files === null || !isMap(volume?.secret) ? [] : files.map((file) => `${mount.mountPath}/${file}`);
    });
    expect(visible.filter(looksLikeKey)).toEqual([]);
  });
});

describe('the checks above can fail', () => {
  test('a key-holding Secret mounted whole, a hostPath volume, a missing file and a root container are each caught', () => {
    const entry = byId('hlf-peer');
    const broken: Checked = {
      ...entry,
      container: { ...entry.container, securityContext: { ...mapAt(entry.container, 'securityContext'), runAsUser: 0, allowPrivilegeEscalation: true } },
      mounts: [
        ...entry.mounts.filter((mount) => mount.name !== 'fabric-ops-node-tls'),
        { name: 'tls', mountPath: '/etc/hyperledger/node/tls/pair', readOnly: true },
      ],
    };
    broken.container = { ...broken.container, volumeMounts: broken.mounts };
    const visible = (volumeFiles(entry.volumes.get('tls') as Volume, entry.deployer) ?? []).filter(looksLikeKey);
    expect(visible).toEqual(['tls.key']);
    const pod = sidecarPod(broken);
    (mapAt(pod, 'spec').volumes as Volume[]).push({ name: 'dockersocket', hostPath: { path: '/var/run/docker.sock' } });
    const violations = describeViolations(restrictedViolations(mapAt(pod, 'spec')));
    expect(violations).toEqual(
      expect.arrayContaining([
        'baseline: HostPath Volumes: spec.volumes[dockersocket].hostPath must be unset',
        'restricted: Privilege Escalation: spec.containers[fabric-ops].securityContext.allowPrivilegeEscalation must be false',
        'restricted: Running as Non-root user: spec.containers[fabric-ops].securityContext.runAsUser must not be 0',
      ]),
    );
    const resolved = resolvePath('/etc/hyperledger/node/tls/root/cert.pem', entry.mounts, entry.volumes, entry.deployer);
    expect(resolved?.what).toBe('missing');
    expect(resolvePath('/etc/hyperledger/node/tls/root/cacert.pem', entry.mounts, entry.volumes, entry.deployer)?.what).toBe('file');
    expect(resolvePath('/nowhere/cert.pem', entry.mounts, entry.volumes, entry.deployer)).toBeNull();
    // A variable naming a file the Secret does not hold, and the data volume left out.
    const misplaced: Checked = {
      ...entry,
      env: entry.env.map((variable) =>
        variable.name === 'CORE_PEER_TLS_ROOTCERT_FILE' ? { ...variable, value: '/etc/hyperledger/node/tls/root/ca.crt' } : variable,
      ),
      mounts: entry.mounts.filter((mount) => mount.name !== 'data'),
    };
    expect(placementProblems(misplaced)).toEqual([
      'peer.tls.rootcert.file (tls_root_ca) /etc/hyperledger/node/tls/root/ca.crt: missing in volume tls-rootcert (ca.crt)',
      "peer.fileSystemPath /var/hyperledger/production: not on the node's data claim",
      "ledger.snapshots.rootDir /var/hyperledger/production/snapshots: not on the node's data claim",
    ]);
  });

  test('an unknown field and a misspelt variable are caught', () => {
    const entry = byId('fabric-operator');
    const pod = sidecarPod({
      ...entry,
      container: { ...entry.container, readinessProbe: { httpGet: { path: '/healthz', port: 'fabric-ops' } }, volumeMount: [] },
    });
    expect(validateObjects([pod]).flatMap((result) => result.errors)).toEqual([expect.stringContaining('volumeMount: unknown field')]);
    const known = new Set(settingsReference('peer').map((setting) => setting.environmentVariable));
    expect(known.has('CORE_OPERATIONS_COMPANION_LISTENADDRESS')).toBe(true);
    expect(known.has('CORE_OPERATIONS_COMPANION_LISTEN_ADDRESS')).toBe(false);
    expect(known.has('ORDERER_OPERATIONS_COMPANION_LISTENADDRESS')).toBe(false);
  });
});
