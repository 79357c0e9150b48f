import path from 'node:path';
import { compatReleaseHomes, releaseLine } from './releases';

/** Which releases the differential suite runs against (the suite itself is compat.test.ts). */

const tools = path.resolve(__dirname, '../../../shared/tools');

describe('compat releases', () => {
  it('defaults to 2.5.12 and 3.0.0, in that order', () => {
    expect(compatReleaseHomes({ CI: 'true' })).toEqual([path.join(tools, 'fabric-2.5.12'), path.join(tools, 'fabric-3.0.0')]);
  });

  it('FABRIC_HOMES names the releases; FABRIC_HOME one', () => {
    expect(compatReleaseHomes({ FABRIC_HOMES: `${tools}/fabric-3.0.0:${tools}/fabric-2.5.12` })).toEqual([
      path.join(tools, 'fabric-3.0.0'),
      path.join(tools, 'fabric-2.5.12'),
    ]);
    expect(compatReleaseHomes({ FABRIC_HOME: `${tools}/fabric-3.0.0` })).toEqual([path.join(tools, 'fabric-3.0.0')]);
  });

  it('a release folder named but incomplete fails loudly', () => {
    expect(() => compatReleaseHomes({ FABRIC_HOMES: `${tools}/fabric-2.5.12 ${tools}/fabric-9.9.9` })).toThrow(/fabric-9\.9\.9\/bin\/peer is missing/);
  });

  it('deviations name release lines', () => {
    expect(releaseLine('2.5.12')).toBe('2.5');
    expect(releaseLine('3.0.0')).toBe('3.0');
  });
});
