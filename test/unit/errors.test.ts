import * as api from '../../src';
import { FabricOpsError, messageOf } from '../../src/errors';
import { CheckCancelledError, CheckTimeoutError } from '../../src/health/abort-reasons';
import { CriRequestError } from '../../src/health/cri-checker';
import { DockerRequestError } from '../../src/health/docker-checker';
import { MissingPeerDependencyError } from '../../src/chaincode/errors';
import { FleetRequestError } from '../../src/fleet/logspec';
import { PutBackPersistError } from '../../src/fleet/putback-store';

describe('messageOf', () => {
  it('gives an Error its message, and its name when the message is empty', () => {
    expect(messageOf(new RangeError('out of range'))).toBe('out of range');
    expect(messageOf(new TypeError(''))).toBe('TypeError');
  });

  it('gives anything else thrown as String() writes it, even an object without a prototype', () => {
    expect(messageOf('plain text')).toBe('plain text');
    expect(messageOf(42)).toBe('42');
    expect(messageOf(undefined)).toBe('undefined');
    expect(messageOf(Object.create(null))).toBe('[object Object]');
  });
});

describe('error classes', () => {
  const publicClasses = Object.entries(api).filter(([, value]) => typeof value === 'function' && value.prototype instanceof FabricOpsError);

  it('every public error class has its own FABRIC_OPS_ code', () => {
    const codes = publicClasses.map(([name, value]) => {
      const ErrorClass = value as new (...args: never[]) => FabricOpsError;
      const error: FabricOpsError = Reflect.construct(ErrorClass, name === 'ConfigError' ? [['a problem']] : ['x', 'y']) as FabricOpsError;
      expect(error).toBeInstanceOf(FabricOpsError);
      expect(error.name).toBe(name);
      return error.code;
    });
    expect(codes.length).toBeGreaterThanOrEqual(11);
    for (const code of codes) expect(code).toMatch(/^FABRIC_OPS_[A-Z_]+$/);
    expect(new Set(codes).size).toBe(codes.length);
  });

  it('the health checkers, chaincode and fleet errors extend FabricOpsError, each with its code', () => {
    const errors: FabricOpsError[] = [
      new CheckTimeoutError(2000),
      new CheckCancelledError(),
      new CriRequestError('unavailable', 14),
      new DockerRequestError('refused'),
      new MissingPeerDependencyError('fabric-shim', '^2.5.0'),
      new FleetRequestError('bad'),
      new PutBackPersistError('disk full'),
    ];
    expect(errors.map((error) => [error.name, error.code, error instanceof FabricOpsError])).toEqual([
      ['CheckTimeoutError', 'FABRIC_OPS_CHECK_TIMEOUT', true],
      ['CheckCancelledError', 'FABRIC_OPS_CHECK_CANCELLED', true],
      ['CriRequestError', 'FABRIC_OPS_CRI_REQUEST', true],
      ['DockerRequestError', 'FABRIC_OPS_DOCKER_REQUEST', true],
      ['MissingPeerDependencyError', 'FABRIC_OPS_MISSING_PEER_DEPENDENCY', true],
      ['FleetRequestError', 'FABRIC_OPS_FLEET_REQUEST', true],
      ['PutBackPersistError', 'FABRIC_OPS_PUT_BACK_PERSIST', true],
    ]);
    expect(new CriRequestError('unavailable', 14).grpcStatus).toBe(14);
    expect(new CheckTimeoutError(2000).message).toBe('timed out after 2s');
  });

  it('a value error is not a label error', () => {
    expect(new api.MetricValueError('x')).not.toBeInstanceOf(api.MetricLabelsError);
  });
});
