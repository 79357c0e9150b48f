import type { DialectDefinition } from './dialect';
import { environmentVariableFor, schemaLeaves, type Environment } from './settings';
import { quoteValue } from './values';

/**
 * Keys of a configuration file that fabric-ops does not read, where that is most likely a typo.
 * Fabric's own files carry many keys fabric-ops does not read, and Fabric ignores keys it does
 * not know, so an unknown key is reported only:
 * - as a problem (the start is refused) under a section only fabric-ops reads
 *   (`operations.healthCheck`, `operations.kubernetes`; no Fabric release has keys there, so
 *   whatever is there was written for fabric-ops and is misspelt);
 * - as a warning elsewhere in a section fabric-ops reads, when it is a near miss (edit distance)
 *   of a key read there (`operations.listenAdress`): Fabric takes the same file and ignores it.
 */
export interface UnknownKeyFindings {
  problems: string[];
  warnings: string[];
}

/** Levenshtein distance, case-insensitive (viper's keys are). */
export function editDistance(a: string, b: string): number {
  const x = a.toLowerCase();
  const y = b.toLowerCase();
  let previous = Array.from({ length: y.length + 1 }, (_, index) => index);
  for (let i = 1; i <= x.length; i += 1) {
    const current = [i];
    for (let j = 1; j <= y.length; j += 1) {
      const cost = x[i - 1] === y[j - 1] ? 0 : 1;
      current.push(Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, (previous[j - 1] ?? 0) + cost));
    }
    previous = current;
  }
  return previous[y.length] ?? 0;
}

/** A near miss: one edit for short names, two for longer ones (so `ca` and `key` are not each other's typo). */
function nearMiss(name: string, known: string): boolean {
  const allowed = Math.min(name.length, known.length) <= 5 ? 1 : 2;
  const distance = editDistance(name, known);
  return distance > 0 && distance <= allowed;
}

/**
 * Keys Fabric defines (sampleconfig of 2.5 and 3.0) in the sections fabric-ops reads but that
 * fabric-ops does not read: never reported, however close to one of ours (`General.LocalMSPID`
 * is one edit from `General.LocalMSPDir`).
 */
const fabricKeys: Readonly<Record<DialectDefinition['dialect'], readonly string[]>> = {
  peer: [
    'peer.BCCSP',
    'peer.address',
    'peer.addressAutoDetect',
    'peer.authentication',
    'peer.client',
    'peer.deliveryclient',
    'peer.discovery',
    'peer.fileSystemPath',
    'peer.gateway',
    'peer.gossip',
    'peer.handlers',
    'peer.id',
    'peer.keepalive',
    'peer.limits',
    'peer.listenAddress',
    'peer.localMspId',
    'peer.localMspType',
    'peer.maxRecvMsgSize',
    'peer.maxSendMsgSize',
    'peer.networkId',
    'peer.profile',
    'peer.tls.cert',
    'peer.tls.clientAuthRequired',
    'peer.tls.clientCert',
    'peer.tls.clientKey',
    'peer.tls.enabled',
    'peer.tls.key',
    'peer.validatorPoolSize',
    'vm.docker.attachStdout',
    'vm.docker.hostConfig',
  ],
  orderer: [
    'General.Authentication',
    'General.BCCSP',
    'General.Backoff',
    'General.BootstrapFile',
    'General.BootstrapMethod',
    'General.Cluster',
    'General.Keepalive',
    'General.ListenAddress',
    'General.ListenPort',
    'General.LocalMSPID',
    'General.MaxRecvMsgSize',
    'General.MaxSendMsgSize',
    'General.Profile',
    'General.TLS.Certificate',
    'General.TLS.ClientAuthRequired',
    'General.TLS.Enabled',
    'General.TLS.PrivateKey',
    'General.Throttling',
  ],
};

interface SchemaNode {
  /** Child names as the schema spells them. */
  children: Map<string, SchemaNode | null>;
  /** Every leaf below is a fabric-ops key (its doc starts with `fabric-ops:`). */
  ownOnly: boolean;
}

function schemaTree(definition: DialectDefinition): SchemaNode {
  const root: SchemaNode = { children: new Map(), ownOnly: false };
  const own = new Map<SchemaNode, boolean>();
  for (const leaf of schemaLeaves(definition.schema)) {
    const segments = leaf.path.split('.');
    const isOwn = leaf.doc.startsWith('fabric-ops:');
    let node = root;
    for (const [index, segment] of segments.entries()) {
      if (index === segments.length - 1) {
        node.children.set(segment, null);
        break;
      }
      let child = node.children.get(segment);
      if (!child) {
        child = { children: new Map(), ownOnly: true };
        node.children.set(segment, child);
      }
      own.set(child, (own.get(child) ?? true) && isOwn);
      node = child;
    }
  }
  for (const [node, ownOnly] of own) node.ownOnly = ownOnly;
  return root;
}

function isMapping(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The findings for a parsed document (`file` names it in each line). */
export function unknownKeys(definition: DialectDefinition, document: unknown, file: string): UnknownKeyFindings {
  const findings: UnknownKeyFindings = { problems: [], warnings: [] };
  const fabric = new Set(fabricKeys[definition.dialect].map((key) => key.toLowerCase()));
  const visit = (node: SchemaNode, value: unknown, path: string, underOwn: boolean): void => {
    if (!isMapping(value)) return;
    const known = [...node.children.keys()];
    for (const [name, child] of Object.entries(value)) {
      const match = known.find((candidate) => candidate.toLowerCase() === name.toLowerCase());
      const key = path === '' ? name : `${path}.${name}`;
      if (fabric.has(key.toLowerCase())) continue;
      if (match !== undefined) {
        const schemaChild = node.children.get(match);
        if (schemaChild) visit(schemaChild, child, path === '' ? match : `${path}.${match}`, underOwn || schemaChild.ownOnly);
        continue;
      }
      const suggestion = known.find((candidate) => nearMiss(name, candidate));
      const shown = quoteValue(key, 120);
      const meant = suggestion === undefined ? '' : `; did you mean ${path === '' ? suggestion : `${path}.${suggestion}`}?`;
      if (underOwn) {
        findings.problems.push(
          `config file ${file}: unknown key ${shown} in ${path}, a section only fabric-ops reads${meant || `; known there: ${known.join(', ')}`}`,
        );
      } else if (suggestion !== undefined && path !== '') {
        findings.warnings.push(`config file ${file}: unknown key ${shown} is ignored (Fabric ignores it too)${meant}`);
      }
    }
  };
  visit(schemaTree(definition), document, '', false);
  return findings;
}

/**
 * Environment variables under a section only fabric-ops reads (`CORE_OPERATIONS_HEALTHCHECK_*`,
 * `ORDERER_OPERATIONS_KUBERNETES_*`, ...) that name no key: refused as the file's keys there are
 * (`CORE_OPERATIONS_HEALTHCHECK_TIMOUT` would otherwise be ignored without a word).
 */
export function unknownVariables(definition: DialectDefinition, env: Environment): string[] {
  const leaves = schemaLeaves(definition.schema);
  const known = new Set(leaves.map((leaf) => environmentVariableFor(definition.envPrefix, leaf.path)));
  const ownSections = new Set<string>();
  const tree = schemaTree(definition);
  const collect = (node: SchemaNode, path: string): void => {
    for (const [name, child] of node.children) {
      if (!child) continue;
      const childPath = path === '' ? name : `${path}.${name}`;
      if (child.ownOnly) ownSections.add(`${environmentVariableFor(definition.envPrefix, childPath)}_`);
      else collect(child, childPath);
    }
  };
  collect(tree, '');
  const problems: string[] = [];
  for (const variable of Object.keys(env).sort()) {
    if (known.has(variable) || ![...ownSections].some((prefix) => variable.startsWith(prefix))) continue;
    const suggestion = [...known].find((candidate) => nearMiss(variable, candidate));
    const meant = suggestion === undefined ? '' : `; did you mean ${suggestion}?`;
    problems.push(`${quoteValue(variable, 120)}: names no key of a section only fabric-ops reads${meant}`);
  }
  return problems;
}
