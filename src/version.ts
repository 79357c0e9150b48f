import fs from 'node:fs';
import path from 'node:path';

/** What GET /version answers (Fabric's field names). */
export interface VersionDocument {
  CommitSHA: string;
  Version: string;
}

function readJson(file: string): Record<string, unknown> | null {
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, unknown>;
  } catch {
    return null;
  }
}

/** The package version and the commit baked into dist/build-info.json at build time ('unknown' otherwise). */
export function readVersion(): VersionDocument {
  const pkg = readJson(path.join(__dirname, '..', 'package.json'));
  const build = readJson(path.join(__dirname, 'build-info.json'));
  const version = typeof pkg?.version === 'string' ? pkg.version : 'unknown';
  const commit = typeof build?.commit === 'string' && build.commit !== '' ? build.commit : 'unknown';
  return { CommitSHA: commit, Version: version };
}
