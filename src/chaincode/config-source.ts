import { readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { environmentSchema, readEnvironment } from '../config/environment';
import type * as YamlModule from '../config/yaml';
import { ConfigError } from '../errors';
import { chaincodeConfigEnv } from './settings';

// Declared, as every variable of fabric-ops' own, in src/config/environment.ts.
/** The chaincode's own configuration file (a peer-dialect YAML file: `operations`, `metrics`). */
export const chaincodeConfigVariable = environmentSchema.chaincodeConfig.env;

/** Top-level sections only a peer's core.yaml has; a chaincode's own file has no use for them. */
const peerSections = ['ledger', 'vm', 'chaincode'] as const;
/** Keys of the `peer` section that only a peer's file carries. */
const peerKeys = ['id', 'address', 'fileSystemPath', 'gossip'] as const;

export interface ChaincodeConfigChoice {
  /** The file the operations system reads, when the chaincode chose one. */
  configFile?: string;
  /** The environment the operations system reads (chaincode defaults added when no file is used). */
  env: NodeJS.ProcessEnv;
  /** Set when the configuration is not the chaincode's own; to be logged at warning level. */
  warning?: string;
}

/**
 * Where a chaincode's operations configuration comes from. Its own: the `config` / `configFile`
 * options, else $FABRIC_OPS_CHAINCODE_CONFIG (a file), else the embedded defaults. FABRIC_CFG_PATH
 * is the peer's variable, often set in the shell a chaincode is started from: still read (a
 * chaincode's own core.yaml there keeps working) but with a warning, and a core.yaml there that is
 * plainly a peer's (`peer.id`, `vm`, `ledger`, ...) is refused, so that a chaincode never runs on a
 * peer's settings by accident. Throws ConfigError naming the variable and the file.
 */
export function chooseChaincodeConfig(options: { config?: unknown; configFile?: string }, env: NodeJS.ProcessEnv): ChaincodeConfigChoice {
  if (options.config !== undefined || nonEmpty(options.configFile)) return { env };
  const own = readEnvironment(env, ['chaincodeConfig']).chaincodeConfig;
  if (own !== '') return { configFile: path.resolve(own), env };
  const configPath = env.FABRIC_CFG_PATH;
  if (!nonEmpty(configPath)) return { env: chaincodeConfigEnv(env, false) };

  const coreYaml = path.join(path.resolve(configPath), 'core.yaml');
  const found = peerOnlyKeys(coreYaml);
  if (found.length > 0) {
    throw new ConfigError([
      `FABRIC_CFG_PATH=${configPath}: ${coreYaml} is a peer's configuration (it has ${found.join(', ')}); a chaincode does not take a peer's ` +
        `configuration: unset FABRIC_CFG_PATH for the chaincode, or name the chaincode's own file in ${chaincodeConfigVariable} (read whatever it holds)`,
    ]);
  }
  return {
    env,
    warning:
      `the operations configuration comes from FABRIC_CFG_PATH=${configPath}, the peer's variable, not the chaincode's own; ` +
      `name the chaincode's file in ${chaincodeConfigVariable} (or unset FABRIC_CFG_PATH for the embedded defaults)`,
  };
}

function nonEmpty(value: string | undefined): value is string {
  return value !== undefined && value !== '';
}

/** The peer-only keys of the YAML file, dotted; none when it is not a readable regular file (the loader then says why). */
function peerOnlyKeys(file: string): string[] {
  try {
    if (!statSync(file).isFile()) return [];
  } catch {
    return [];
  }
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return [];
  }
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- the YAML parser is loaded only when there is a file (as src/config/load.ts does)
  const { parseConfigYaml } = require('../config/yaml') as typeof YamlModule;
  const document = parseConfigYaml(text, file);
  if (typeof document !== 'object' || document === null) return [];
  const top = document as Record<string, unknown>;
  const found: string[] = peerSections.filter((section) => section in top);
  const peer = top.peer;
  if (typeof peer === 'object' && peer !== null) {
    for (const key of peerKeys) if (key in peer) found.unshift(`peer.${key}`);
  }
  return found;
}
