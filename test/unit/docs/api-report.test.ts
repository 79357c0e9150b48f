/**
 * docs/reference/api.md, the library's API reference, is what scripts/api-report.ts generates from
 * the types (`make docs`): a change of the public surface (an export added, removed or retyped, a
 * member of an interface an export uses) fails here until the page is generated again, so that it
 * shows in review as a change of that page.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { entryPoints, renderApiReport } from '../../../scripts/api-report';

const root = path.resolve(__dirname, '..', '..', '..');
const file = path.join(root, 'docs', 'reference', 'api.md');

let generated: string;

beforeAll(() => {
  generated = renderApiReport(root);
}, 120_000);

test('the committed docs/reference/api.md is what scripts/api-report.ts generates from the types', () => {
  const committed = readFileSync(file, 'utf8');
  if (committed !== generated) {
    const was = committed.split('\n');
    const now = generated.split('\n');
    const first = now.findIndex((line, index) => line !== was[index]);
    throw new Error(
      `docs/reference/api.md differs from the library's types from line ${first + 1}: the public API changed; run make docs and review the change.\n` +
        `  committed: ${was[first] ?? '(end of file)'}\n  generated: ${now[first] ?? '(end of file)'}`,
    );
  }
});

test('both entry points are there, each export with its declaration', () => {
  expect(entryPoints.map((entry) => entry.specifier)).toEqual(['fabric-ops', 'fabric-ops/chaincode']);
  expect(generated).toContain('## `fabric-ops`\n');
  expect(generated).toContain('## `fabric-ops/chaincode`\n');
  expect(generated).toContain('### `startOperationsSystem`');
  expect(generated).toMatch(/```ts\nfunction enableChaincodeOperations\(options\?: ChaincodeOperationsOptions\): ChaincodeOperations;\n```/);
  expect(generated).toMatch(/```ts\nclass ConfigError extends FabricOpsError \{\n {4}readonly code = "FABRIC_OPS_CONFIG";/);
});

test('the types the exports use without exporting them are printed too, with their module', () => {
  expect(generated).toContain('## Types the exports use without exporting them');
  // FleetConfig (exported) names KubernetesDiscoverySource (not exported by name).
  expect(generated).toContain('### `KubernetesDiscoverySource` (fleet/config)');
  // A type reached through `typeof`: Dialect is (typeof dialects)[number].
  expect(generated).toContain('### `dialects` (config/types)');
});

test('members keep their documentation comments; @internal members are left out, as the published declarations leave them', () => {
  expect(generated).toMatch(/interface StartOptions \{\n {4}\/\*\* A normalised configuration; when absent it is loaded as the command does\. \*\//);
  expect(generated).not.toMatch(/@internal/);
});
