import { readFileSync } from 'node:fs';
import path from 'node:path';
import { nodeVersionProblem } from '../../../src/node-version';

describe('nodeVersionProblem', () => {
  const engines = (JSON.parse(readFileSync(path.resolve(__dirname, '../../../package.json'), 'utf8')) as { engines: { node: string } }).engines.node;

  it("reads package.json's engines.node", () => {
    expect(engines).toBe('>=22.22');
    expect(nodeVersionProblem(process.versions.node, engines)).toBeNull();
  });

  it.each(['22.22.0', '22.22.1', '22.23.0', '23.0.0', '24.21.0', '100.0.0'])('accepts Node.js %s for >=22.22', (version) => {
    expect(nodeVersionProblem(version, '>=22.22')).toBeNull();
  });

  it.each(['20.20.2', '22.21.9', '22.9.0', '18.0.0', '0.10.48'])('refuses Node.js %s for >=22.22, naming both versions', (version) => {
    expect(nodeVersionProblem(version, '>=22.22')).toBe(
      `Node.js ${version} is too old: fabric-ops needs Node.js 22.22 or later (package.json engines: >=22.22); run it with a newer node`,
    );
  });

  it('compares every part of a three-part minimum', () => {
    expect(nodeVersionProblem('22.22.2', '>= 22.22.3')).toMatch(/needs Node\.js 22\.22\.3 or later/);
    expect(nodeVersionProblem('22.22.3', '>= 22.22.3')).toBeNull();
    expect(nodeVersionProblem('23.0.0', '>=23')).toBeNull();
  });

  it('refuses to guess a range it cannot read', () => {
    expect(() => nodeVersionProblem('24.0.0', '^22 || ^24')).toThrow('internal error: package.json engines.node "^22 || ^24" is not of the form >=X.Y.Z');
  });
});
