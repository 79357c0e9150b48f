/**
 * Companion mode and the container-runtime checker (docs/companion.md, "What changes meaning in
 * companion mode"): the node's `vm.endpoint` is the node's chaincode runtime, which the node's own
 * /healthz checks (Fabric registers its docker checker on it) and the companion's `node` checker
 * reports; in companion mode it registers no checker of fabric-ops' own unless the operator sets
 * `operations.healthCheck.containerRuntime.type`. Read from Fabric's own sample core.yaml
 * (`vm.endpoint: unix:///var/run/docker.sock`), as a sidecar reads the node's file.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { normaliseYaml } from '../../unit/config/helpers';

const coreYaml = readFileSync(path.resolve(__dirname, '../../../../shared/fixtures/fabric-recorded/2.5.12/sampleconfig/core.yaml'), 'utf8');
const companion = { CORE_OPERATIONS_COMPANION_ENABLED: 'true' };

test("Fabric's sample core.yaml names the Docker socket as vm.endpoint", () => {
  expect(coreYaml).toMatch(/^ {4}endpoint: unix:\/\/\/var\/run\/docker\.sock$/m);
});

test('without companion mode, vm.endpoint registers the docker checker, as Fabric does', () => {
  const { containerRuntime } = normaliseYaml('peer', coreYaml).health;
  expect([containerRuntime.type, containerRuntime.endpoint]).toEqual(['docker', 'unix:///var/run/docker.sock']);
});

test("in companion mode, the node's vm.endpoint registers no container-runtime checker", () => {
  const config = normaliseYaml('peer', coreYaml, companion);
  expect(config.companion).toBeDefined();
  expect(config.health.containerRuntime.type).toBe('none');
  expect(config.health.containerRuntime.endpoint).toBe('');
});

test('in companion mode, a type the operator sets is honoured: docker takes vm.endpoint, cri its own socket', () => {
  const docker = normaliseYaml('peer', coreYaml, { ...companion, CORE_OPERATIONS_HEALTHCHECK_CONTAINERRUNTIME_TYPE: 'docker' }).health.containerRuntime;
  expect([docker.type, docker.endpoint]).toEqual(['docker', 'unix:///var/run/docker.sock']);
  const cri = normaliseYaml('peer', coreYaml, { ...companion, CORE_OPERATIONS_HEALTHCHECK_CONTAINERRUNTIME_TYPE: 'cri' }).health.containerRuntime;
  expect(cri.type).toBe('cri');
});
