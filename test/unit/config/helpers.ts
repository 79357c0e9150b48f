import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { inspect } from 'node:util';
import { normaliseConfig } from '../../../src/config/normalise';
import { parseConfigYaml } from '../../../src/config/yaml';
import type { Dialect, NormalisedConfig } from '../../../src/config/types';
import { ConfigError } from '../../../src/errors';

/** Fabric's sample core.yaml and orderer.yaml, in ../shared beside the repository (integration tests only). */
export const sampleConfigDir = path.resolve(__dirname, '../../../../shared/fixtures/fabric-sampleconfig');

/** Normalises YAML text as if read from /etc/hyperledger/fabric/<file> (parsed as the loader parses files). */
export function normaliseYaml(dialect: Dialect, yamlText: string, env: Record<string, string> = {}): NormalisedConfig {
  const configDir = '/etc/hyperledger/fabric';
  const fileName = dialect === 'peer' ? 'core.yaml' : 'orderer.yaml';
  const configFile = path.join(configDir, fileName);
  return normaliseConfig({ dialect, document: parseConfigYaml(yamlText, configFile), env, configDir, configFile });
}

/** The problems of the ConfigError `action` throws; fails the test when it throws nothing or something else. */
export function problemsOf(action: () => unknown): readonly string[] {
  let thrown: unknown;
  try {
    action();
  } catch (error) {
    thrown = error;
  }
  if (!(thrown instanceof ConfigError)) {
    throw new Error(`expected a ConfigError, got ${thrown === undefined ? 'no error' : inspect(thrown)}`);
  }
  expect(thrown.message).toBe(thrown.problems.join('\n'));
  return thrown.problems;
}

/** A fresh directory under os.tmpdir(), removed by removeTempDirs(). */
const tempDirs: string[] = [];
export function makeTempDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fabric-ops-config-'));
  tempDirs.push(dir);
  return dir;
}
export function removeTempDirs(): void {
  for (const dir of tempDirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
}

export function writeFile(dir: string, name: string, text: string): string {
  const file = path.join(dir, name);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, text);
  return file;
}
