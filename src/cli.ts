#!/usr/bin/env node
// Checks the Node.js version before the command and its dependencies are loaded: they may use
// APIs that an older Node.js lacks, which would fail later and less clearly.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { nodeVersionProblem } from './node-version';

function requiredNodeVersion(): string | null {
  try {
    const pkg = JSON.parse(readFileSync(join(__dirname, '..', 'package.json'), 'utf8')) as { engines?: { node?: unknown } };
    return typeof pkg.engines?.node === 'string' ? pkg.engines.node : null;
  } catch {
    return null;
  }
}

const required = requiredNodeVersion();
const problem = required === null ? null : nodeVersionProblem(process.versions.node, required);
if (problem !== null) {
  process.stderr.write(`fabric-ops: ${problem}\n`);
  process.exit(2);
}
// eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded only after the version check, which must run on any Node
require('./command');
