import { allowInspectorVariable, inspectorRefusal } from '../../../src/inspector-guard';

describe('inspectorRefusal', () => {
  const url = 'ws://127.0.0.1:9229/0f1e2d3c';

  it('has nothing to say when no inspector is open', () => {
    expect(inspectorRefusal(undefined, { NODE_OPTIONS: '--inspect' })).toBeNull();
  });

  it('refuses an open inspector, naming its URL, NODE_OPTIONS when that is where it came from, and the opt-in', () => {
    expect(inspectorRefusal(url, { NODE_OPTIONS: '--max-old-space-size=200 --inspect=0.0.0.0:9229' })).toBe(
      `a V8 inspector is listening at ${url} (NODE_OPTIONS contains --inspect): anyone who can reach it runs code in this process. ` +
        `Remove --inspect, or set ${allowInspectorVariable}=1 to debug on purpose`,
    );
    expect(inspectorRefusal(url, {})).toMatch(/^a V8 inspector is listening at ws:\S+: anyone/);
  });

  it('allows it with FABRIC_OPS_ALLOW_INSPECTOR=1 only', () => {
    expect(inspectorRefusal(url, { FABRIC_OPS_ALLOW_INSPECTOR: '1' })).toBeNull();
    expect(inspectorRefusal(url, { FABRIC_OPS_ALLOW_INSPECTOR: 'true' })).not.toBeNull();
  });
});
