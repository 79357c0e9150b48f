import type { LogLevel } from './types';

/**
 * Level names as Fabric's flogging accepts them: each level in all-lower or all-upper
 * case only (`Debug` is not a level). `warning`, `notice` and `critical` are aliases.
 */
const levelByName: ReadonlyMap<string, LogLevel> = new Map<string, LogLevel>(
  (
    [
      ['payload', 'payload'],
      ['debug', 'debug'],
      ['info', 'info'],
      ['warn', 'warn'],
      ['warning', 'warn'],
      ['error', 'error'],
      ['dpanic', 'dpanic'],
      ['panic', 'panic'],
      ['fatal', 'fatal'],
      ['notice', 'info'],
      ['critical', 'error'],
    ] as const
  ).flatMap(([name, level]): [string, LogLevel][] => [
    [name, level],
    [name.toUpperCase(), level],
  ]),
);

/** The level a name stands for, or undefined when Fabric would reject the name. */
export function parseLevelName(name: string): LogLevel | undefined {
  return levelByName.get(name);
}

/**
 * Bunyan's numeric level for each Fabric level. `payload` sits in bunyan's `trace`
 * slot (below debug); `dpanic` and `panic` lie between bunyan's error (50) and fatal (60).
 */
export const bunyanLevels: Readonly<Record<LogLevel, number>> = {
  payload: 10,
  debug: 20,
  info: 30,
  warn: 40,
  error: 50,
  dpanic: 53,
  panic: 56,
  fatal: 60,
};
