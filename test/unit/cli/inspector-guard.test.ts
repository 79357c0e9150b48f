import { allowInspectorVariable, inspectorMayBeOpen, inspectorRefusal } from '../../../src/inspector-guard';

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

describe('inspectorMayBeOpen', () => {
  it('is true for any --inspect option on the command line or in NODE_OPTIONS, and for a configuration file', () => {
    expect(inspectorMayBeOpen(['--inspect'], {})).toBe(true);
    expect(inspectorMayBeOpen(['--disable-sigusr1', '--inspect-brk=0'], {})).toBe(true);
    expect(inspectorMayBeOpen([], { NODE_OPTIONS: '--max-old-space-size=200 --inspect-wait=127.0.0.1:0' })).toBe(true);
    expect(inspectorMayBeOpen(['--experimental-config-file=node.config.json'], {})).toBe(true);
    expect(inspectorMayBeOpen([], { NODE_OPTIONS: '--experimental-default-config-file' })).toBe(true);
  });

  it('is false when no option can have opened one', () => {
    expect(inspectorMayBeOpen([], {})).toBe(false);
    expect(inspectorMayBeOpen(['--disable-sigusr1', '--enable-source-maps'], { NODE_OPTIONS: '--max-old-space-size=200' })).toBe(false);
  });
});
