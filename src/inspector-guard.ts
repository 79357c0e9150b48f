/**
 * The V8 inspector runs any code sent to it, in the process that holds the TLS key, and asks
 * nobody for credentials. SIGUSR1 opens it on 127.0.0.1:9229 in a stock Node.js process (issue 18):
 * the command starts with --disable-sigusr1 and also ignores the signal itself (src/ignore-sigusr1.ts).
 * A signal that comes before that listener is in place (while Node.js itself starts, issue 28)
 * still opens one, so the command asks node:inspector whether one is open, after the listener
 * and again once the service has started; one that is open, however it was opened (--inspect in
 * NODE_OPTIONS, that early signal, code the process preloaded), is refused unless allowed on purpose.
 */

import { allowInspectorVariable, inspectorAllowed } from './config/environment';

/** The variable an operator sets to run the command under a debugger deliberately (declared in src/config/environment.ts). */
export { allowInspectorVariable };

/**
 * Whether an inspector may have been opened by the options Node.js was given: an `--inspect*`
 * option on the command line, in NODE_OPTIONS, or in a configuration file such an option names.
 * It only words the refusal: the command asks node:inspector at every start all the same.
 */
export function inspectorMayBeOpen(execArgv: readonly string[], env: NodeJS.ProcessEnv): boolean {
  return [...execArgv, env.NODE_OPTIONS ?? ''].some((option) => /--inspect|config-file/.test(option));
}

/**
 * Why the command must not run, or null: `url` is node:inspector's url() (undefined when no
 * inspector is open), `env` the process environment, `execArgv` Node's options when known (an
 * inspector that no option opened is then said to come from a SIGUSR1 or preloaded code).
 */
export function inspectorRefusal(url: string | undefined, env: NodeJS.ProcessEnv, execArgv?: readonly string[]): string | null {
  if (url === undefined) return null;
  if (inspectorAllowed(env)) return null;
  const byOption = execArgv === undefined || inspectorMayBeOpen(execArgv, env);
  const where = /--inspect/.test(env.NODE_OPTIONS ?? '')
    ? ' (NODE_OPTIONS contains --inspect)'
    : byOption
      ? ''
      : ' (no --inspect option opened it: a SIGUSR1 that came before the command could ignore it, or code the process preloaded)';
  const remedy = byOption ? 'Remove --inspect' : 'Start the command with node --disable-sigusr1 (as its bin, make run and npm start do)';
  return `a V8 inspector is listening at ${url}${where}: anyone who can reach it runs code in this process. ${remedy}, or set ${allowInspectorVariable}=1 to debug on purpose`;
}

/**
 * Why this process must stop now, or null: asks node:inspector whether an inspector is open
 * (about 3 ms of the start to load it, the first time). With FABRIC_OPS_ALLOW_INSPECTOR=1, null
 * without asking.
 */
export function openInspectorRefusal(): string | null {
  if (inspectorAllowed(process.env)) return null;
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded when first asked, after the SIGUSR1 listener and the version check
  const { url } = require('node:inspector') as typeof import('node:inspector');
  return inspectorRefusal(url(), process.env, process.execArgv);
}
