/**
 * The Node.js version check of the command. Pure, and only ES2023 that every Node.js the
 * check may run on understands: cli.ts runs it before loading anything that may need a newer
 * Node.js.
 */

type Version = [number, number, number];

function parseVersion(text: string): Version | null {
  const match = /^v?(\d+)(?:\.(\d+))?(?:\.(\d+))?/.exec(text.trim());
  if (!match) return null;
  return [Number(match[1]), Number(match[2] ?? 0), Number(match[3] ?? 0)];
}

function compare(a: Version, b: Version): number {
  for (let index = 0; index < 3; index += 1) {
    const difference = (a[index] ?? 0) - (b[index] ?? 0);
    if (difference !== 0) return difference;
  }
  return 0;
}

/**
 * The problem with running on Node.js `found` (e.g. `process.versions.node`) when package.json
 * says `engines.node: required` (a `>=X[.Y[.Z]]` range), or null when it is fine.
 */
export function nodeVersionProblem(found: string, required: string): string | null {
  const minimumText = /^\s*>=\s*v?(\d+(?:\.\d+){0,2})\s*$/.exec(required)?.[1];
  const minimum = minimumText === undefined ? null : parseVersion(minimumText);
  if (minimum === null || minimumText === undefined) {
    throw new Error(`internal error: package.json engines.node ${JSON.stringify(required)} is not of the form >=X.Y.Z`);
  }
  const version = parseVersion(found);
  if (version !== null && compare(version, minimum) >= 0) return null;
  return `Node.js ${found} is too old: fabric-ops needs Node.js ${minimumText} or later (package.json engines: ${required.trim()}); run it with a newer node`;
}
