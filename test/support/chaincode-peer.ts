import { randomUUID } from 'node:crypto';
import path from 'node:path';
import type { ClientDuplexStream } from '@grpc/grpc-js';

/**
 * A peer as a `ccaas` chaincode server sees it, for tests that need fabric-shim's real server,
 * handler and stub without a Fabric network: it opens the `protos.Chaincode/Connect` stream,
 * answers the chaincode's REGISTER with REGISTERED then READY (what a 2.5 peer sends), and sends
 * TRANSACTION / INIT messages whose payload is a ChaincodeInput, waiting for COMPLETED or ERROR.
 * It uses the protos fabric-shim itself is built on. It does not answer the chaincode's own
 * requests (GET_STATE, PUT_STATE...): chaincodes driven by it must not touch the ledger.
 * test/real/fabric/chaincode-network.test.ts drives the same paths with a real peer.
 */

interface ProtoMessage {
  serializeBinary(): Uint8Array;
}
interface ChaincodeMessagePb extends ProtoMessage {
  getType(): number;
  getTxid(): string;
  getPayload_asU8(): Uint8Array;
  setType(type: number): void;
  setTxid(txid: string): void;
  setChannelId(channel: string): void;
  setPayload(payload: Uint8Array): void;
}
interface PeerProtos {
  ChaincodeClient: new (address: string, credentials: unknown) => { connect(): ClientDuplexStream<ChaincodeMessagePb, ChaincodeMessagePb>; close(): void };
  ChaincodeMessage: (new () => ChaincodeMessagePb) & { Type: Record<string, number> };
  ChaincodeInput: new () => ProtoMessage & { setArgsList(args: Uint8Array[]): void };
  Response: { deserializeBinary(bytes: Uint8Array): { getStatus(): number; getMessage(): string } };
}

// The copies fabric-shim loads, so that the messages are the ones its handler decodes.
const shimDir = path.dirname(require.resolve('fabric-shim/package.json'));
const protosPath = require.resolve('@hyperledger/fabric-protos', { paths: [shimDir] });
// eslint-disable-next-line @typescript-eslint/no-require-imports -- fabric-shim's own copy, found at run time
const { peer } = require(protosPath) as { peer: PeerProtos };
// eslint-disable-next-line @typescript-eslint/no-require-imports -- the grpc-js that copy uses
const grpc = require(require.resolve('@grpc/grpc-js', { paths: [path.dirname(protosPath)] })) as typeof import('@grpc/grpc-js');
const Type = peer.ChaincodeMessage.Type as Record<'REGISTER' | 'REGISTERED' | 'READY' | 'INIT' | 'TRANSACTION' | 'COMPLETED' | 'ERROR', number>;

export interface TransactionAnswer {
  /** COMPLETED (with the chaincode's response status) or ERROR. */
  kind: 'completed' | 'error';
  status: number;
  message: string;
}

export class FakePeer {
  private readonly client;
  private readonly stream;
  private readonly pending = new Map<string, (answer: TransactionAnswer) => void>();
  /** Resolves once the chaincode registered and was told READY. */
  readonly ready: Promise<void>;

  constructor(address: string) {
    this.client = new peer.ChaincodeClient(address, grpc.credentials.createInsecure());
    this.stream = this.client.connect();
    this.ready = new Promise<void>((resolve, reject) => {
      this.stream.on('error', reject);
      this.stream.on('data', (message: ChaincodeMessagePb) => {
        const type = message.getType();
        if (type === Type.REGISTER) {
          this.send(Type.REGISTERED, '', '');
          this.send(Type.READY, '', '');
          resolve();
          return;
        }
        const answered = this.pending.get(message.getTxid());
        if (answered === undefined) return;
        this.pending.delete(message.getTxid());
        if (type === Type.COMPLETED) {
          const response = peer.Response.deserializeBinary(message.getPayload_asU8());
          answered({ kind: 'completed', status: response.getStatus(), message: response.getMessage() });
        } else {
          answered({ kind: 'error', status: 0, message: Buffer.from(message.getPayload_asU8()).toString() });
        }
      });
    });
  }

  /** One transaction with these arguments (the first names the function); resolves with the chaincode's answer. */
  invoke(channel: string, args: ReadonlyArray<string | Buffer>, kind: 'transaction' | 'init' = 'transaction'): Promise<TransactionAnswer> {
    const input = new peer.ChaincodeInput();
    input.setArgsList(args.map((arg) => new Uint8Array(Buffer.from(arg))));
    const txid = randomUUID().replace(/-/g, '');
    const answer = new Promise<TransactionAnswer>((resolve) => this.pending.set(txid, resolve));
    this.send(kind === 'init' ? Type.INIT : Type.TRANSACTION, txid, channel, input.serializeBinary());
    return answer;
  }

  close(): void {
    this.stream.end();
    this.client.close();
  }

  private send(type: number, txid: string, channel: string, payload?: Uint8Array): void {
    const message = new peer.ChaincodeMessage();
    message.setType(type);
    message.setTxid(txid);
    message.setChannelId(channel);
    if (payload !== undefined) message.setPayload(payload);
    this.stream.write(message);
  }
}
