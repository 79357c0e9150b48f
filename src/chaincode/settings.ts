import { environmentSchema, readEnvironment } from '../config/environment';
import { ConfigError } from '../errors';
import type { ChaincodeHealthSettings } from './server-state';

// Declared, as every variable of fabric-ops' own, in src/config/environment.ts.
/** Environment variables of the chaincode health check (Go durations). */
export const chaincodeEnv = {
  registrationTimeout: environmentSchema.chaincodeRegistrationTimeout.env,
  stuckTimeout: environmentSchema.chaincodeStuckTimeout.env,
  maxFunctions: environmentSchema.chaincodeMaxFunctions.env,
} as const;

export const defaultRegistrationTimeoutMs = environmentSchema.chaincodeRegistrationTimeout.default;
export const defaultStuckTimeoutMs = environmentSchema.chaincodeStuckTimeout.default;

export interface ChaincodeHealthOptions {
  /** Default: $FABRIC_OPS_CHAINCODE_REGISTRATION_TIMEOUT, else 60 s. */
  registrationTimeoutMs?: number;
  /** Default: $FABRIC_OPS_CHAINCODE_STUCK_TIMEOUT, else 60 s. */
  stuckTimeoutMs?: number;
}

export interface ChaincodeMetricsOptions {
  /**
   * Plain (Init/Invoke) chaincodes: how many function names get series of their own, the rest
   * being labelled `other`. Default: $FABRIC_OPS_CHAINCODE_MAX_FUNCTIONS, else 100.
   */
  maxFunctionNames?: number;
}

/** Series are made per channel, function and outcome: beyond this many names a cap protects nothing. */
const maxFunctionNamesLimit = environmentSchema.chaincodeMaxFunctions.maximum;

/** The cap on function names; options win over the environment; a bad value is a ConfigError naming it. */
export function chaincodeMaxFunctionNames(options: ChaincodeMetricsOptions, env: NodeJS.ProcessEnv): number {
  const given = options.maxFunctionNames;
  if (given === undefined) return readEnvironment(env, ['chaincodeMaxFunctions']).chaincodeMaxFunctions;
  if (Number.isInteger(given) && given >= 0 && given <= maxFunctionNamesLimit) return given;
  throw new ConfigError([`maxFunctionNames: must be a whole number from 0 to ${maxFunctionNamesLimit}; got ${String(given)}`]);
}

/** Options win over the environment; a value that is not a positive duration is a ConfigError naming it (every one, not only the first). */
export function chaincodeHealthSettings(options: ChaincodeHealthOptions, env: NodeJS.ProcessEnv): ChaincodeHealthSettings {
  const problems: string[] = [];
  const pick = (given: number | undefined, key: 'chaincodeRegistrationTimeout' | 'chaincodeStuckTimeout', option: string): number => {
    const fallback = environmentSchema[key].default;
    if (given !== undefined) {
      if (Number.isInteger(given) && given > 0) return given;
      problems.push(`${option}: must be a positive whole number of milliseconds; got ${String(given)}`);
      return fallback;
    }
    try {
      return readEnvironment(env, [key])[key];
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error;
      problems.push(...error.problems);
      return fallback;
    }
  };
  const settings = {
    registrationTimeoutMs: pick(options.registrationTimeoutMs, 'chaincodeRegistrationTimeout', 'registrationTimeoutMs'),
    stuckTimeoutMs: pick(options.stuckTimeoutMs, 'chaincodeStuckTimeout', 'stuckTimeoutMs'),
  };
  if (problems.length > 0) throw new ConfigError(problems);
  return settings;
}

/**
 * The chaincode's operations address when nothing sets one. Not the peer's 127.0.0.1:9443 (also
 * the default of the orderer's admin server and of fabric-ca's operations server), nor any other
 * Fabric default (7050-7054, 8443, 6060, 5984) or the usual chaincode server port 9999: a chaincode
 * next to a peer must not fail on a taken port.
 */
export const chaincodeListenAddress = '127.0.0.1:9998';

/**
 * Defaults of the chaincode integration where they differ from the peer's sample
 * core.yaml: its own operations address (above), metrics on /metrics (`prometheus`), and no
 * container-runtime checker (a chaincode pod has no Docker socket). They apply only with the
 * embedded defaults (no config file, no FABRIC_CFG_PATH); explicit CORE_* variables still win.
 */
export function chaincodeConfigEnv(env: NodeJS.ProcessEnv, hasConfigFile: boolean): NodeJS.ProcessEnv {
  if (hasConfigFile || (env.FABRIC_CFG_PATH !== undefined && env.FABRIC_CFG_PATH !== '')) return env;
  return {
    CORE_OPERATIONS_LISTENADDRESS: chaincodeListenAddress,
    CORE_METRICS_PROVIDER: 'prometheus',
    CORE_OPERATIONS_HEALTHCHECK_CONTAINERRUNTIME_TYPE: 'none',
    ...env,
  };
}
