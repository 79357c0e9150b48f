import { existsSync } from 'node:fs';
import path from 'node:path';
import { fabricHome, repositoryRoot } from '../support/fabric-reference';

/**
 * The Fabric releases the differential suite runs against, each a folder with bin/ and
 * sampleconfig/: $FABRIC_HOMES (space- or colon-separated), else $FABRIC_HOME (one release), else
 * every release of ../shared/tools the suite knows (2.5.12, the LTS line, and 3.0.0). A folder
 * named but incomplete fails the suite (fabricHome throws); with CI=true so does a default one
 * that is missing, so that a run never passes on fewer releases than it claims.
 */
export const defaultReleases = ['fabric-2.5.12', 'fabric-3.0.0'] as const;

export function compatReleaseHomes(env: NodeJS.ProcessEnv = process.env): string[] {
  const listed = (env.FABRIC_HOMES ?? '')
    .split(/[\s:]+/)
    .filter((item) => item !== '')
    .map((item) => path.resolve(item));
  if (listed.length > 0) return listed.map((home) => fabricHome(home));
  if (env.FABRIC_HOME !== undefined && env.FABRIC_HOME !== '') return [fabricHome(path.resolve(env.FABRIC_HOME))];
  const tools = path.resolve(repositoryRoot(), '../shared/tools');
  const present = defaultReleases.map((name) => path.join(tools, name)).filter((home) => existsSync(home));
  const missing = defaultReleases.filter((name) => !existsSync(path.join(tools, name)));
  if (missing.length > 0 && (env.CI === 'true' || present.length === 0)) {
    throw new Error(`compat: Fabric release folders missing in ${tools}: ${missing.join(', ')} (CI runs against every one; FABRIC_HOMES names others)`);
  }
  if (missing.length > 0) console.warn(`compat: running without ${missing.join(', ')} (not in ${tools}); CI=true makes this an error`);
  return present.map((home) => fabricHome(home));
}

/** `2.5.12` → `2.5`: deviations name the release lines they apply to. */
export function releaseLine(version: string): string {
  return version.split('.').slice(0, 2).join('.');
}
