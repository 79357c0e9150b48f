import type { LogLevel } from '../logging/types';

/**
 * Fabric logger names for the winston loggers of fabric-shim and fabric-contract-api, so that
 * the logging specification can name them: the shim's own modules become `shim.<module>`
 * (`lib/handler.js` is `shim.handler`, its protocol messages), fabric-contract-api's become
 * `contractapi.<module>`, and the loggers a contract asks for (`ctx.logging.getLogger('x')`
 * in contract `kv` is winston's `kv:x`) become `kv.x`.
 */
export type LoggerSource = 'shim' | 'contractapi';

/** Names the two packages create when their modules load (fabric-shim / fabric-contract-api 2.5). */
export const knownLoggerNames: Readonly<Record<LoggerSource, readonly string[]>> = {
  shim: [
    '_',
    'fabric-shim/cli',
    'lib/chaincode.js',
    'lib/handler.js',
    'lib/server.js',
    'lib/stub.js',
    'lib/iterators.js',
    'contracts-spi/bootstrap.js',
    'contracts-spi/chaincodefromcontract.js',
    'contracts-spi/datamarshall.js',
  ],
  contractapi: [
    './lib/contract.js',
    './lib/jsontransactionserializer.js',
    './lib/annotations/default.js',
    './lib/annotations/info.js',
    './lib/annotations/object.js',
    './lib/annotations/transaction.js',
  ],
};

function moduleName(path: string): string {
  const base = path.split('/').pop() ?? '';
  return base.replace(/\.js$/, '');
}

/** One word of a Fabric logger name: `[A-Za-z0-9_#-]`, anything else made `_`. */
function word(text: string): string {
  return text.replace(/[^A-Za-z0-9_#-]/g, '_');
}

function dotted(parts: readonly string[]): string {
  return parts
    .filter((part) => part !== '')
    .map(word)
    .join('.');
}

/** The Fabric logger name of a winston logger created by `source` under `name`. */
export function fabricLoggerName(source: LoggerSource, name: string): string {
  if (source === 'contractapi') return dotted(['contractapi', moduleName(name)]);
  if (name === '' || name === '_' || name === 'shim') return 'shim';
  if (name.includes('/') || name.endsWith('.js')) return dotted(['shim', moduleName(name)]);
  return dotted(name.split(/[.:]/)) || 'shim';
}

/** winston's setting for a Fabric level: winston has nothing above `error`, so higher levels silence the logger. */
export function winstonLevel(level: LogLevel): { level: string; silent: boolean } {
  switch (level) {
    case 'payload':
    case 'debug':
      return { level: 'debug', silent: false };
    case 'info':
      return { level: 'info', silent: false };
    case 'warn':
      return { level: 'warn', silent: false };
    case 'error':
      return { level: 'error', silent: false };
    default:
      return { level: 'error', silent: true };
  }
}
