#!/usr/bin/env -S node --disable-sigusr1
// --disable-sigusr1: a SIGUSR1 must not open the V8 inspector (src/inspector-guard.ts). Run as
// `node dist/cli.js`, without the flag, the listener below ignores the signal all the same.
//
// Checks the Node.js version before the command and its dependencies are loaded: they may use
// APIs that an older Node.js lacks, which would fail later and less clearly.
import { readFileSync } from 'node:fs';
import { url as inspectorUrl } from 'node:inspector';
import { enableCompileCache, flushCompileCache } from 'node:module';
import { join } from 'node:path';
import { inspectorRefusal } from './inspector-guard';
import { nodeVersionProblem } from './node-version';

// A JavaScript listener replaces Node's own SIGUSR1 handler (the one that starts the inspector).
// One line for the first signal; later ones are ignored without a word (no log flood).
let sigusr1Logged = false;
process.on('SIGUSR1', () => {
  if (sigusr1Logged) return;
  sigusr1Logged = true;
  process.stderr.write('fabric-ops: SIGUSR1 ignored: the V8 inspector is disabled (README, "The command": how to debug)\n');
});

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
const inspectorProblem = inspectorRefusal(inspectorUrl(), process.env);
if (inspectorProblem !== null) {
  process.stderr.write(`fabric-ops: ${inspectorProblem}\n`);
  process.exit(2);
}
// Node's on-disk cache of compiled code (in the OS temp directory, or NODE_COMPILE_CACHE;
// NODE_DISABLE_COMPILE_CACHE=1 turns it off): later starts do not compile the modules again.
// Where the directory cannot be written it does nothing. In the built command, './command' is
// the bundle of everything else (scripts/bundle.js), so the cache covers it.
enableCompileCache();
// eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded only after the version check, which must run on any Node
require('./command');
// Node writes the cache at a normal exit; written once the start is over as well, it holds the
// code compiled during the start even when the process is killed, and the next start reuses it.
setTimeout(() => flushCompileCache(), 1000).unref();
