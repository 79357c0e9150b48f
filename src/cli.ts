#!/usr/bin/env node
// Checks the Node.js version before the command and its dependencies are loaded: they may use
// APIs that an older Node.js lacks, which would fail later and less clearly.
import { readFileSync } from 'node:fs';
import { enableCompileCache } from 'node:module';
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
// Node's on-disk cache of compiled code (in the OS temp directory, or NODE_COMPILE_CACHE;
// NODE_DISABLE_COMPILE_CACHE=1 turns it off): later starts do not compile the modules again.
// Where the directory cannot be written it does nothing.
enableCompileCache();
// eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded only after the version check, which must run on any Node
require('./command');
