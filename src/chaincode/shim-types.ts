/**
 * The few shapes of fabric-shim and fabric-contract-api this integration touches, written
 * here so that the core of fabric-ops never loads (or type-checks against) those packages.
 * They match fabric-shim 2.5 (lib/chaincode.js, lib/server.js, lib/logger.js).
 */
import type { Duplex } from 'node:stream';

/** The part of fabric-shim's ChaincodeStub read to label a transaction. */
export interface ShimStub {
  getBufferArgs(): Buffer[];
  getChannelID(): string;
  getTxID(): string;
}

/** shim.success() / shim.error(): status 200 (OK) or 500 (ERROR); 400 and above fails the proposal. */
export interface ShimResponse {
  status: number;
  message?: string;
  payload?: Uint8Array;
}

/** fabric-shim's ChaincodeInterface. */
export interface ShimChaincode {
  Init(stub: ShimStub): Promise<ShimResponse>;
  Invoke(stub: ShimStub): Promise<ShimResponse>;
}

/**
 * What ChaincodeFromContract (the chaincode fabric-shim builds from contract classes) also
 * carries: the contracts' metadata, from which known contract and function names are read.
 */
export interface ContractChaincode extends ShimChaincode {
  defaultContractName?: string;
  metadata?: { contracts?: Record<string, { transactions?: Array<{ name?: unknown }> }> };
}

export interface ShimServerOptions {
  ccid: string;
  address: string;
  tlsProps?: { key: Buffer; cert: Buffer; clientCACerts?: Buffer | null } | null;
  [grpcOption: string]: unknown;
}

/** fabric-shim's ChaincodeServer (lib/server.js). */
export interface ShimServer {
  start(): Promise<void>;
  connect(stream: PeerStream): void;
}

export type ShimServerClass = new (chaincode: ShimChaincode, options: ShimServerOptions) => ShimServer;

/** The gRPC bidirectional stream a peer opens to the chaincode server (grpc-js ServerDuplexStream). */
export interface PeerStream extends Duplex {
  getPeer(): string;
}

/** A message on that stream (a protobuf ChaincodeMessage). */
export interface ChaincodeMessage {
  getType(): number;
}

/** The fabric-shim module object (lib/chaincode.js exports the Shim class itself). */
export interface ShimModule {
  server: (chaincode: ShimChaincode, options: ShimServerOptions) => ShimServer;
}

/** A winston transport (winston-transport's TransportStream): it filters by its parent logger's level. */
export interface WinstonTransport {
  /** The first logger piped into it. */
  parent?: unknown;
  handleExceptions?: boolean;
}

/** A winston logger as fabric-shim and fabric-contract-api create them. */
export interface WinstonLogger {
  level: string;
  silent?: boolean;
  readonly transports: WinstonTransport[];
  add(transport: WinstonTransport): unknown;
  remove(transport: WinstonTransport): unknown;
}

/** lib/logger.js of fabric-shim and of fabric-contract-api (same code, separate logger maps). */
export interface WinstonLoggerModule {
  getLogger: (name?: string) => WinstonLogger;
}
