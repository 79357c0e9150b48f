import { conditionProblems, type RuntimeCondition } from '../../../src/health/cri-checker';

const condition = (type: string, status: boolean, reason = '', message = ''): RuntimeCondition => ({ type, status, reason, message });

describe('conditionProblems', () => {
  const both = ['RuntimeReady', 'NetworkReady'];

  it('finds nothing wrong when every required condition is true', () => {
    expect(conditionProblems([condition('RuntimeReady', true), condition('NetworkReady', true)], both)).toEqual([]);
  });

  it("gives a false condition's reason and message", () => {
    const conditions = [
      condition('RuntimeReady', true),
      condition('NetworkReady', false, 'NetworkPluginNotReady', 'Network plugin returns error: cni plugin not initialized'),
    ];
    expect(conditionProblems(conditions, both)).toEqual([
      'NetworkReady is false: NetworkPluginNotReady: Network plugin returns error: cni plugin not initialized',
    ]);
  });

  it('ignores a false condition that is not required', () => {
    expect(conditionProblems([condition('RuntimeReady', true), condition('NetworkReady', false, 'NetworkPluginNotReady')], ['RuntimeReady'])).toEqual([]);
  });

  it('reports each failing condition in the order required, and one the runtime does not report', () => {
    expect(conditionProblems([condition('NetworkReady', false)], ['RuntimeReady', 'NetworkReady'])).toEqual([
      'RuntimeReady is not reported by the runtime',
      'NetworkReady is false',
    ]);
  });

  it('requires nothing when the list is empty (reachability only)', () => {
    expect(conditionProblems([condition('RuntimeReady', false)], [])).toEqual([]);
  });
});
