import { dialectDefinition } from './dialect';
import { environmentVariableFor, schemaLeaves, type SettingKind, type SettingValue } from './settings';
import type { Dialect } from './types';

export interface SettingReference {
  /** The key as the dialect spells it, e.g. `operations.tls.cert.file`. */
  key: string;
  /** Fabric's environment override, e.g. `CORE_OPERATIONS_TLS_CERT_FILE`. */
  environmentVariable: string;
  kind: SettingKind;
  defaultValue: SettingValue;
  doc: string;
}

/** Every key fabric-ops reads in a dialect, with its environment variable and default (for --help and docs). */
export function settingsReference(dialect: Dialect): SettingReference[] {
  const definition = dialectDefinition(dialect);
  return schemaLeaves(definition.schema).map((leaf) => ({
    key: leaf.path,
    environmentVariable: environmentVariableFor(definition.envPrefix, leaf.path),
    kind: leaf.kind,
    defaultValue: leaf.defaultValue,
    doc: leaf.doc,
  }));
}
