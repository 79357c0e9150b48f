/**
 * The V8 inspector runs any code sent to it, in the process that holds the TLS key, and asks
 * nobody for credentials. SIGUSR1 opens it on 127.0.0.1:9229 in a stock Node.js process (issue 18):
 * the command starts with --disable-sigusr1 and also ignores the signal itself; an inspector that
 * is already open at start (--inspect in NODE_OPTIONS, say) is refused unless allowed on purpose.
 */

/** The variable an operator sets to run the command under a debugger deliberately. */
export const allowInspectorVariable = 'FABRIC_OPS_ALLOW_INSPECTOR';

/**
 * Whether an inspector may be open at start, from the options Node.js was given: only an
 * `--inspect*` option opens one then (SIGUSR1 is disabled), on the command line, in NODE_OPTIONS,
 * or in a configuration file such an option names. When false the command skips loading
 * node:inspector (about 1.7 ms of every start, issue 20); when true it asks node:inspector.
 */
export function inspectorMayBeOpen(execArgv: readonly string[], env: NodeJS.ProcessEnv): boolean {
  return [...execArgv, env.NODE_OPTIONS ?? ''].some((option) => /--inspect|config-file/.test(option));
}

/**
 * Why the command must not run, or null: `url` is node:inspector's url() (undefined when no
 * inspector is open), `env` the process environment.
 */
export function inspectorRefusal(url: string | undefined, env: NodeJS.ProcessEnv): string | null {
  if (url === undefined) return null;
  if (env[allowInspectorVariable] === '1') return null;
  const where = /--inspect/.test(env.NODE_OPTIONS ?? '') ? ' (NODE_OPTIONS contains --inspect)' : '';
  return (
    `a V8 inspector is listening at ${url}${where}: anyone who can reach it runs code in this process. ` +
    `Remove --inspect, or set ${allowInspectorVariable}=1 to debug on purpose`
  );
}
