/** The fabric-ops command, loaded by cli.ts once the Node.js version is known to be supported. */
import { parseArgs } from 'node:util';
import { commandUsage } from './command-usage';
import { settingsReference } from './config/reference';
import { readEnvironment } from './config/environment';
import { dialects, type Dialect } from './config/types';
import { ConfigError, DedicatedCaError, FabricOpsError, LogSpecError, TlsMaterialError, messageOf } from './errors';
import { openInspectorRefusal } from './inspector-guard';
import { startOperationsSystem, stopGraceMs, type OperationsSystem, type StartOptions } from './system';
import type * as FleetModule from './fleet';
import type * as FleetCliModule from './fleet/cli';
import { loadConfig, type LoadedConfig } from './config/load';
import { prepareKubernetesIntegration, type KubernetesIntegration, type PreparedKubernetesIntegration } from './kubernetes';
import { readVersion } from './version';
import { handleStopSignals } from './stop-signals';

const exitCodes = { ok: 0, runtime: 1, config: 2 } as const;

function fail(code: number, lines: readonly string[]): never {
  for (const line of lines) process.stderr.write(`fabric-ops: ${line}\n`);
  process.exit(code);
}

function parseCommandLine(argv: string[]): { configFile?: string; dialect?: Dialect; fleetConfig?: string } {
  // The usual start (settings from the environment) has no arguments: util.parseArgs and its
  // modules are not loaded for it (issue 20).
  if (argv.length === 0) return {};
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      options: {
        config: { type: 'string', short: 'c' },
        dialect: { type: 'string', short: 'd' },
        'fleet-config': { type: 'string' },
        'list-keys': { type: 'boolean', short: 'k' },
        help: { type: 'boolean', short: 'h' },
        version: { type: 'boolean', short: 'v' },
      },
      strict: true,
      allowPositionals: false,
    });
  } catch (err) {
    fail(exitCodes.config, [messageOf(err), 'run fabric-ops --help for usage']);
  }
  const { values } = parsed;
  if (values.help) {
    process.stdout.write(commandUsage);
    process.exit(exitCodes.ok);
  }
  if (values.version) {
    const { Version, CommitSHA } = readVersion();
    process.stdout.write(`fabric-ops ${Version} (commit ${CommitSHA})\n`);
    process.exit(exitCodes.ok);
  }
  const dialect = values.dialect;
  if (dialect !== undefined && !(dialects as readonly string[]).includes(dialect)) {
    fail(exitCodes.config, [`--dialect: must be one of ${dialects.join(', ')}; got "${dialect}"`]);
  }
  if (values['list-keys']) {
    process.stdout.write(formatKeyList((dialect as Dialect | undefined) ?? 'peer'));
    process.exit(exitCodes.ok);
  }
  return { configFile: values.config, dialect: dialect as Dialect | undefined, fleetConfig: values['fleet-config'] };
}

function formatKeyList(dialect: Dialect): string {
  const lines = settingsReference(dialect).map((setting) => {
    const fallback = Array.isArray(setting.defaultValue) ? `[${setting.defaultValue.join(', ')}]` : String(setting.defaultValue);
    return `${setting.key}  (${setting.environmentVariable}, ${setting.kind}, default ${fallback === '' ? '""' : fallback})\n    ${setting.doc}\n`;
  });
  return `Configuration keys read in the ${dialect} dialect:\n\n${lines.join('')}`;
}

function exitCodeFor(err: unknown): { code: number; lines: readonly string[] } {
  if (err instanceof ConfigError) return { code: exitCodes.config, lines: err.problems };
  if (err instanceof LogSpecError || err instanceof DedicatedCaError || err instanceof TlsMaterialError) {
    return { code: exitCodes.config, lines: [err.message] };
  }
  if (err instanceof FabricOpsError) return { code: exitCodes.runtime, lines: [err.message] };
  return { code: exitCodes.runtime, lines: [`unexpected error: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`] };
}

/**
 * Fleet mode (src/fleet), loaded only when asked for: a plain start loads neither it nor zod.
 * `connect` hands the fleet's events to the Kubernetes integration, which starts after the server
 * listens; the relay holds what the fleet reports before (put-backs run at start).
 */
function fleetMode(file: string | undefined): { extensions: NonNullable<StartOptions['extensions']>; connect(kubernetes: KubernetesIntegration | null): void } {
  const source = file ?? (readEnvironment(process.env, ['fleetConfig']).fleetConfig || undefined);
  if (source === undefined) return { extensions: [], connect: () => undefined };
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- fleet mode only (start time)
  const fleet = require('./fleet') as typeof FleetModule;
  const relay = new fleet.FleetEventRelay();
  return {
    extensions: [fleet.fleetExtension(fleet.loadFleetConfig(source), { onCreated: (service) => service.onEvent(relay.listener) })],
    connect: (kubernetes) => relay.connect(kubernetes === null ? null : (type, reason, message) => kubernetes.record(type, reason, message)),
  };
}

async function main(): Promise<void> {
  if (process.argv[2] === 'fleet') {
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- the fleet client only for `fabric-ops fleet`
    const { runFleetCommand } = require('./fleet/cli') as typeof FleetCliModule;
    process.exitCode = await runFleetCommand(process.argv.slice(3), process.env, process.stdout, process.stderr);
    return;
  }
  const { fleetConfig, ...options } = parseCommandLine(process.argv.slice(2));
  // SIGTERM and SIGINT are taken from here on: one that comes during the start (after the
  // "listening" line, say, before the start has returned) stops the service once it is up, as
  // later ones do, rather than killing the process (Node's default for a signal nobody handles).
  const signals = handleStopSignals({ warn: (line) => void process.stderr.write(`fabric-ops: ${line}\n`), exitCodeOnSecond: exitCodes.runtime });
  // The Kubernetes settings (pod identity, credentials) are checked before the server listens:
  // a service that logs "listening" and then exits misleads whoever reads the log.
  // The configuration is read once, here, and handed to the start as `loaded`. The command starts
  // the system as any library user does (startOperationsSystem, public options) and then uses only
  // its public API; what it takes from elsewhere is its own modules' (prepareKubernetesIntegration,
  // to check the Kubernetes settings before the server listens; fleet mode's event relay).
  let prepared: PreparedKubernetesIntegration | null;
  let loaded: LoadedConfig;
  try {
    loaded = loadConfig({ configFile: options.configFile, dialect: options.dialect, env: process.env });
    prepared = await prepareKubernetesIntegration(loaded.config, { env: process.env });
  } catch (err) {
    const { code, lines } = exitCodeFor(err);
    fail(code, lines);
  }
  let system: OperationsSystem;
  let fleet: ReturnType<typeof fleetMode>;
  try {
    fleet = fleetMode(fleetConfig);
    system = await startOperationsSystem({ ...options, env: process.env, loaded, extensions: fleet.extensions });
  } catch (err) {
    const { code, lines } = exitCodeFor(err);
    fail(code, lines);
  }
  let kubernetes: KubernetesIntegration | null;
  try {
    kubernetes = prepared === null ? null : prepared.start(system);
    fleet.connect(kubernetes);
  } catch (err) {
    await system.stop(0).catch(() => undefined);
    const { code, lines } = exitCodeFor(err);
    fail(code, lines);
  }
  // The start is over: an inspector open now is refused as at the start (src/cli.ts looked before
  // the configuration was read). A SIGUSR1 that came before the command's listener was in place
  // opens one a little after the signal, possibly after that first look (issue 28).
  const inspector = openInspectorRefusal();
  if (inspector !== null) fail(exitCodes.config, [inspector]);

  const logger = system.getLogger('operations');
  signals.warnWith((line) => logger.warn(line));
  signals.stopWith((signal) => {
    logger.info(`received ${signal}; stopping (in-flight requests get up to ${stopGraceMs / 1000}s)`);
    Promise.resolve(kubernetes?.stop())
      .then(() => system.stop())
      .then(
        () => {
          logger.info('stopped');
          process.exit(exitCodes.ok);
        },
        (err: unknown) => fail(exitCodes.runtime, [`error while stopping: ${messageOf(err)}`]),
      );
  });
}

void main();
