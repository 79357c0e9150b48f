/**
 * The first thing dist/cli.js does: src/cli.ts imports this before anything else, and esbuild
 * keeps that order, so it runs before any require() of the entry (the start-modules test checks
 * the built file). A JavaScript listener replaces Node's own SIGUSR1 handler, which opens the V8
 * inspector (src/inspector-guard.ts). Until it is in place (Node.js's own start, some tens of ms)
 * a SIGUSR1 still opens one in a process started without --disable-sigusr1: src/cli.ts looks for
 * an open inspector right after this, src/command.ts again once the service has started, and both
 * refuse to go on. One line for the first signal; later ones are ignored without a word (no log flood).
 */
let logged = false;
process.on('SIGUSR1', () => {
  if (logged) return;
  logged = true;
  process.stderr.write('fabric-ops: SIGUSR1 ignored: the V8 inspector is disabled (docs/reference/command.md, "SIGUSR1 and the debugger": how to debug)\n');
});

export {};
