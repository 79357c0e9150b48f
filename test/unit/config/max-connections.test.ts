import { settingsReference } from '../../../src/config/reference';
import { normaliseYaml, problemsOf } from './helpers';

describe('the connection cap: operations.maxConnections / Operations.MaxConnections', () => {
  it('defaults to 1024 in both dialects', () => {
    expect(normaliseYaml('peer', '').operations.maxConnections).toBe(1024);
    expect(normaliseYaml('orderer', '').operations.maxConnections).toBe(1024);
    expect(settingsReference('peer').find((s) => s.key === 'operations.maxConnections')).toMatchObject({
      environmentVariable: 'CORE_OPERATIONS_MAXCONNECTIONS',
      defaultValue: '1024',
    });
    expect(settingsReference('orderer').find((s) => s.key === 'Operations.MaxConnections')).toMatchObject({
      environmentVariable: 'ORDERER_OPERATIONS_MAXCONNECTIONS',
      defaultValue: '1024',
    });
  });

  it('reads a YAML number or string, and the environment wins', () => {
    expect(normaliseYaml('peer', 'operations: { maxConnections: 64 }').operations.maxConnections).toBe(64);
    expect(normaliseYaml('orderer', 'Operations: { MaxConnections: "4096" }').operations.maxConnections).toBe(4096);
    expect(normaliseYaml('peer', 'operations: { maxConnections: 64 }', { CORE_OPERATIONS_MAXCONNECTIONS: '10' }).operations.maxConnections).toBe(10);
    expect(normaliseYaml('orderer', '', { ORDERER_OPERATIONS_MAXCONNECTIONS: '7' }).operations.maxConnections).toBe(7);
  });

  it.each([
    ['peer', 'operations: { maxConnections: 0 }', {}, 'operations.maxConnections: must be a whole number from 1 to 1000000; got "0"'],
    ['peer', 'operations: { maxConnections: -5 }', {}, 'operations.maxConnections: must be a whole number from 1 to 1000000; got "-5"'],
    ['orderer', 'Operations: { MaxConnections: 1.5 }', {}, 'Operations.MaxConnections: must be a whole number from 1 to 1000000; got "1.5"'],
    [
      'orderer',
      '',
      { ORDERER_OPERATIONS_MAXCONNECTIONS: 'lots' },
      'Operations.MaxConnections (from ORDERER_OPERATIONS_MAXCONNECTIONS): must be a whole number from 1 to 1000000; got "lots"',
    ],
    ['peer', 'operations: { maxConnections: [1] }', {}, 'operations.maxConnections: must be a string; got a list'],
  ])('%s %j %j: refused naming the key', (dialect, yaml, env, problem) => {
    expect(problemsOf(() => normaliseYaml(dialect as 'peer' | 'orderer', yaml, env))).toEqual([problem]);
  });
});
