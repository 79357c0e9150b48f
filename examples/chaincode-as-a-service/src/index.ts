import { existsSync, readFileSync } from 'node:fs';
import { enableChaincodeOperations } from 'fabric-ops/chaincode';
import { KvContract } from './kv-contract';

// The operations service (/metrics, /healthz, /logspec, /version) on CORE_OPERATIONS_LISTENADDRESS,
// with the transaction metrics, the chaincode server's health and the shim's logging.
// On SIGTERM/SIGINT (docker stop, a pod deleted) it stops the chaincode server and the operations
// server and exits 0: `handleSignals: false` leaves signals to an application that has its own
// handling (it then calls `operations.shutdown()`).
export const operations = enableChaincodeOperations({ handleSignals: true });

// A checker of the author's own: the operator drains the chaincode by creating a file.
const maintenanceFile = process.env.KV_MAINTENANCE_FILE;
if (maintenanceFile) {
  operations.registerChecker('kv.maintenance', {
    check: async () => (existsSync(maintenanceFile) ? { ok: false, reason: `maintenance: ${readFileSync(maintenanceFile, 'utf8').trim()}` } : { ok: true }),
  });
}

// What `fabric-chaincode-node server` serves.
export const contracts = [KvContract];
