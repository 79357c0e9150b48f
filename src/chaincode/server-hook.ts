import type { Logger } from '../logging/types';
import type { ChaincodeServerState } from './server-state';
import type { ChaincodeMessage, PeerStream, ShimChaincode, ShimModule, ShimServer, ShimServerClass, ShimServerOptions } from './shim-types';
import { messageOf } from '../errors';

/** ChaincodeMessage.Type values of Fabric's chaincode_shim.proto (wire protocol constants). */
const messageType = { REGISTERED: 2, READY: 4 } as const;

export interface ServerHookOptions {
  state: ChaincodeServerState;
  logger: Logger;
  /** Instruments the chaincode a server is created with. */
  wrapChaincode(chaincode: ShimChaincode): ShimChaincode;
  /** Awaited before the server binds: the operations service is up first, so no transaction goes unmeasured. */
  beforeStart(): Promise<void>;
  /** Every server created through the hook, so that a shutdown can stop them. */
  servers: Set<StoppableServer>;
}

/** A chaincode server the hook made, which fabric-shim gives no way to stop. */
export interface StoppableServer {
  /** Closes its gRPC server and every peer stream on it at once. */
  forceStop(): void;
}

function describeStreamEnd(event: 'end' | 'cancelled' | 'error' | 'close', error?: unknown): string {
  switch (event) {
    case 'end':
      return 'the peer closed it';
    case 'cancelled':
      return 'cancelled: the connection to the peer was lost';
    case 'error':
      return `stream error: ${messageOf(error)}`;
    default:
      return 'closed';
  }
}

function observeStream(stream: PeerStream, options: ServerHookOptions): void {
  const { state, logger } = options;
  let peer = 'unknown address';
  try {
    peer = stream.getPeer();
  } catch {
    // a stream whose connection is already gone has no peer address
  }
  const record = state.streamOpened(peer);
  logger.info(`peer connected from ${peer}`, { peer });
  const onData = (message: ChaincodeMessage): void => {
    const type = message.getType();
    if (type === messageType.REGISTERED) state.streamRegistered(record);
    if (type === messageType.READY) {
      state.streamReady(record);
      logger.info(`peer at ${peer} registered the chaincode; stream ready`, { peer });
      stream.off('data', onData);
    }
  };
  stream.on('data', onData);
  const ended = (event: 'end' | 'cancelled' | 'error' | 'close') => (error?: unknown) => {
    if (record.closedAt !== undefined) return;
    const reason = describeStreamEnd(event, error);
    state.streamClosed(record, reason);
    stream.off('data', onData);
    logger.warn(`stream from the peer at ${peer} ended: ${reason}`, { peer, reason });
  };
  for (const event of ['end', 'cancelled', 'error', 'close'] as const) stream.once(event, ended(event));
}

/** A subclass of fabric-shim's ChaincodeServer that reports its state and its peer streams. */
function observedServerClass(Base: ShimServerClass, options: ServerHookOptions): ShimServerClass {
  return class ObservedChaincodeServer extends Base implements StoppableServer {
    private readonly record;

    constructor(chaincode: ShimChaincode, serverOptions: ShimServerOptions) {
      super(options.wrapChaincode(chaincode), serverOptions);
      this.record = options.state.serverStarting(serverOptions.address);
      options.servers.add(this);
    }

    forceStop(): void {
      // fabric-shim 2.5's ChaincodeServer keeps its grpc-js Server in `_server` and has no stop().
      (this as unknown as { _server?: { forceShutdown(): void } })._server?.forceShutdown();
      options.state.serverStopped(this.record);
      options.servers.delete(this);
    }

    override async start(): Promise<void> {
      try {
        await options.beforeStart();
        await super.start();
      } catch (error) {
        options.state.serverFailed(this.record, error);
        throw error;
      }
      options.state.serverListening(this.record);
      options.logger.info(`chaincode server listening on ${this.record.address}`, { address: this.record.address });
    }

    override connect(stream: PeerStream): void {
      observeStream(stream, options);
      super.connect(stream);
    }
  };
}

/**
 * Makes fabric-shim's `server()` (what `fabric-chaincode-node server` and contract bootstrap
 * call) return an observed, instrumented server. Returns the function that undoes it.
 */
export function installServerHook(shim: ShimModule, Base: ShimServerClass, options: ServerHookOptions): () => void {
  const original = shim.server;
  const Observed = observedServerClass(Base, options);
  const server = (chaincode: ShimChaincode, serverOptions: ShimServerOptions): ShimServer => new Observed(chaincode, serverOptions);
  shim.server = server;
  return () => {
    if (shim.server === server) shim.server = original;
  };
}
