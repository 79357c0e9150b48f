import { FabricOpsError } from '../../../src/errors';
import { KubernetesApiError } from '../../../src/kubernetes/api-error';
import { EventWriteTimeoutError } from '../../../src/kubernetes/recorder';

describe('errors of the Kubernetes integration', () => {
  test('an API error is a FabricOpsError with its own code, its status and the Status message', () => {
    const error = KubernetesApiError.fromAnswer(
      403,
      'Forbidden',
      JSON.stringify({ kind: 'Status', message: 'events is forbidden: User "x" cannot create resource "events"', reason: 'Forbidden' }),
    );
    expect(error).toBeInstanceOf(FabricOpsError);
    expect(error.code).toBe('FABRIC_OPS_KUBERNETES_API');
    expect(error.name).toBe('KubernetesApiError');
    expect(error.status).toBe(403);
    expect(error.reason).toBe('Forbidden');
    expect(error.message).toBe('HTTP 403: events is forbidden: User "x" cannot create resource "events"');
  });

  test('an in-stream ERROR event (410 Expired) keeps its status beside the string code', () => {
    const error = KubernetesApiError.fromStatus({ kind: 'Status', code: 410, reason: 'Expired', message: 'too old resource version: 1 (2)' });
    expect(error.code).toBe('FABRIC_OPS_KUBERNETES_API');
    expect(error.status).toBe(410);
    expect(error.message).toBe('HTTP 410: too old resource version: 1 (2)');
  });

  test('an Event write without an answer in time is a FabricOpsError with its own code', () => {
    const error = new EventWriteTimeoutError('no answer within 10 ms');
    expect(error).toBeInstanceOf(FabricOpsError);
    expect(error.code).toBe('FABRIC_OPS_KUBERNETES_EVENT_TIMEOUT');
    expect(error.name).toBe('EventWriteTimeoutError');
  });
});
