import { FabricOpsError } from '../errors';

/**
 * fabric-ops/chaincode was used where fabric-shim (an optional peer dependency of fabric-ops)
 * cannot be loaded: it is to be installed beside fabric-ops. `code` is stable for programs.
 */
export class MissingPeerDependencyError extends FabricOpsError {
  override readonly code = 'FABRIC_OPS_MISSING_PEER_DEPENDENCY';
  /** The package that could not be loaded. */
  readonly dependency: string;

  constructor(dependency: string, range: string) {
    super(
      `fabric-ops/chaincode needs ${dependency}, an optional peer dependency of fabric-ops that is not installed where fabric-ops is: ` +
        `install it beside fabric-ops (npm install ${dependency}@${range}); fabric-contract-api too for contract chaincodes`,
    );
    this.dependency = dependency;
  }
}
