#!/usr/bin/env node
// Validates Kubernetes objects (a YAML stream on stdin, e.g. `helm template ... |`) against
// their schemas: kubernetes-models for core objects, @kubernetes-models/cert-manager and
// @kubernetes-models/prometheus-operator for the CRDs (each model's .validate()). Core objects
// are also checked for unknown fields, which those schemas let through, with the field lists of
// @kubernetes/client-node's models (as `kubectl apply --validate=strict` would refuse them).
// An object of a kind no schema covers is an error.
//
// Prints a JSON array, one entry per object in stream order:
//   {"index":0,"apiVersion":"v1","kind":"Service","name":"x","errors":["..."]}
// Exit status 1 when any object has an error. ESM because kubernetes-models is ESM only.
import { parseAllDocuments } from 'yaml';
import * as clientNode from '@kubernetes/client-node';

function modelModule(apiVersion) {
  const [group, version] = apiVersion.includes('/') ? apiVersion.split('/') : ['', apiVersion];
  if (group === 'cert-manager.io') return `@kubernetes-models/cert-manager/${group}/${version}`;
  if (group === 'monitoring.coreos.com') return `@kubernetes-models/prometheus-operator/${group}/${version}`;
  return group === '' ? `kubernetes-models/${version}` : `kubernetes-models/${group}/${version}`;
}

function describeValidationError(error) {
  const details = Array.isArray(error?.errors)
    ? error.errors.map((item) => `${item.instancePath || '/'} ${item.message}${item.params ? ` ${JSON.stringify(item.params)}` : ''}`)
    : [];
  return details.length > 0 ? details : [String(error?.message ?? error)];
}

/** Unknown fields of a core object, from @kubernetes/client-node's attribute maps. */
function unknownFields(value, typeName, at, errors) {
  if (value === null || value === undefined) return;
  const array = /^Array<(.+)>$/.exec(typeName);
  if (array) {
    if (!Array.isArray(value)) errors.push(`${at}: expected a list (${typeName})`);
    else value.forEach((item, i) => unknownFields(item, array[1], `${at}[${i}]`, errors));
    return;
  }
  const map = /^\{ \[key: string\]: (.+); \}$/.exec(typeName);
  if (map) {
    for (const [key, item] of Object.entries(value)) unknownFields(item, map[1], `${at}[${JSON.stringify(key)}]`, errors);
    return;
  }
  const model = clientNode[typeName];
  if (!model || !Array.isArray(model.attributeTypeMap)) return;
  if (typeof value !== 'object' || Array.isArray(value)) {
    errors.push(`${at}: expected an object (${typeName})`);
    return;
  }
  const fields = new Map(model.attributeTypeMap.map((attribute) => [attribute.baseName, attribute.type]));
  for (const [key, item] of Object.entries(value)) {
    const type = fields.get(key);
    if (type === undefined) errors.push(`${at}.${key}: unknown field (${typeName} has ${[...fields.keys()].join(', ')})`);
    else unknownFields(item, type, `${at}.${key}`, errors);
  }
}

async function validate(object, index) {
  const apiVersion = String(object?.apiVersion ?? '');
  const kind = String(object?.kind ?? '');
  const result = { index, apiVersion, kind, name: object?.metadata?.name ?? null, errors: [] };
  let models;
  try {
    models = await import(modelModule(apiVersion));
  } catch {
    result.errors.push(`no schema for apiVersion ${JSON.stringify(apiVersion)}`);
    return result;
  }
  const Model = models[kind];
  if (typeof Model !== 'function') {
    result.errors.push(`no schema for kind ${JSON.stringify(kind)} in ${apiVersion}`);
    return result;
  }
  try {
    new Model(object).validate();
  } catch (error) {
    result.errors.push(...describeValidationError(error));
  }
  const group = apiVersion.includes('/') ? apiVersion.split('/')[0] : '';
  if (!group.includes('.') || group.endsWith('.k8s.io')) {
    const version = apiVersion.split('/').pop() ?? '';
    const typeName = `${version.charAt(0).toUpperCase()}${version.slice(1)}${kind}`;
    if (clientNode[typeName]) unknownFields(object, typeName, kind, result.errors);
    else result.errors.push(`no field list for ${typeName} in @kubernetes/client-node`);
  }
  return result;
}

async function main() {
  const chunks = [];
  for await (const chunk of process.stdin) chunks.push(chunk);
  const documents = parseAllDocuments(Buffer.concat(chunks).toString('utf8'));
  const objects = [];
  for (const document of Array.isArray(documents) ? documents : [documents]) {
    if (document.errors.length > 0) throw new Error(`not valid YAML: ${document.errors[0].message}`);
    const object = document.toJS();
    if (object !== null && object !== undefined) objects.push(object);
  }
  const results = [];
  for (const [index, object] of objects.entries()) results.push(await validate(object, index));
  process.stdout.write(`${JSON.stringify(results, null, 1)}\n`);
  return results.some((result) => result.errors.length > 0) ? 1 : 0;
}

main().then(
  (status) => {
    process.exitCode = status;
  },
  (error) => {
    process.stderr.write(`chart-validate: ${error.message}\n`);
    process.exitCode = 2;
  },
);
