import { environmentSchema } from '../config/environment';
import type { Counter, Gauge, Histogram, MetricsProvider } from '../metrics/types';
import type { ContractChaincode, ShimChaincode, ShimResponse, ShimStub } from './shim-types';
import { monotonicClock, type Clock } from '../time';

/**
 * Transaction metrics of a chaincode, taken where fabric-shim hands every transaction to the
 * chaincode (its `Init` / `Invoke`), so that nothing changes in the contract's functions and
 * every outcome is seen: fabric-contract-api's `afterTransaction` is not called when a
 * function throws, and a thrown error never leaves `Invoke` (ChaincodeFromContract turns it
 * into an error response).
 */

/** `unknown_function`: the contract or function named by the client does not exist. */
export type Outcome = 'success' | 'error' | 'unknown_function';

/** Label value for a contract or function name the chaincode does not have (names from clients are not labels). */
export const unknownName = 'unknown';

/**
 * Label value, on a chaincode written on plain Init/Invoke, for a function name without a series
 * of its own: not yet answered with success, longer than `maxFunctionNameLength`, or past the cap.
 */
export const otherName = 'other';

/** Longest function name of a plain chaincode that can be a label value. */
export const maxFunctionNameLength = 128;

/** Default cap on the function names of plain chaincodes that get series of their own. */
export const defaultMaxFunctionNames = environmentSchema.chaincodeMaxFunctions.default;

/**
 * The function names of plain (Init/Invoke) chaincodes that have series of their own. There the
 * first argument is whatever the client sent, so a name is admitted only once a transaction with
 * it has succeeded through Invoke (a chaincode answers a function it does not have with an error:
 * clients cannot fill the cap with names that do not exist; Init commonly succeeds whatever its
 * arguments, so it admits nothing), and at most `max` names are admitted per process.
 */
export class FunctionNames {
  private readonly admitted = new Set<string>();

  constructor(readonly max: number = defaultMaxFunctionNames) {}

  has(name: string): boolean {
    return this.admitted.has(name);
  }

  /** True when the name has (now) a series of its own; false when it is too long or the cap is reached. */
  admit(name: string): boolean {
    if (this.admitted.has(name)) return true;
    if (name.length > maxFunctionNameLength || this.admitted.size >= this.max) return false;
    this.admitted.add(name);
    return true;
  }
}

/** Contract and function names of a fabric-contract-api chaincode. */
export interface ContractCatalogue {
  defaultContract: string;
  functions: ReadonlyMap<string, ReadonlySet<string>>;
}

export interface ResolvedFunction {
  contract: string;
  function: string;
  known: boolean;
  /** Plain chaincode: the name the client sent, labelled `other` until it is admitted (see FunctionNames). */
  candidate?: string;
}

/** The catalogue of a ChaincodeFromContract; null for a chaincode written on ChaincodeInterface alone. */
function contractCatalogue(chaincode: ShimChaincode): ContractCatalogue | null {
  const { metadata, defaultContractName } = chaincode as ContractChaincode;
  const contracts = metadata?.contracts;
  if (contracts === undefined || typeof defaultContractName !== 'string') return null;
  const functions = new Map<string, Set<string>>();
  for (const [name, contract] of Object.entries(contracts)) {
    const names = (contract.transactions ?? []).map((transaction) => transaction.name).filter((n): n is string => typeof n === 'string');
    functions.set(name, new Set(names));
  }
  return { defaultContract: defaultContractName, functions };
}

/**
 * The contract and function a transaction's first argument names, as fabric-shim's
 * ChaincodeFromContract routes it: `contract:function`, or `function` of the default contract.
 * Unknown names are labelled `unknown`, so clients cannot create label values. Without a
 * catalogue (a plain chaincode), a name not admitted in `names` is labelled `other`.
 */
export function resolveFunction(catalogue: ContractCatalogue | null, first: string | undefined, names?: FunctionNames): ResolvedFunction {
  if (catalogue === null) {
    if (first === undefined || first === '' || names === undefined || names.has(first)) return { contract: '', function: first ?? '', known: true };
    return { contract: '', function: otherName, known: true, candidate: first };
  }
  if (first === undefined) return { contract: catalogue.defaultContract, function: '', known: true };
  const colon = first.indexOf(':');
  const named = colon < 0 ? '' : first.slice(0, colon);
  const fn = colon < 0 ? first : first.slice(colon + 1);
  const contract = named.trim() === '' ? catalogue.defaultContract : named;
  const functions = catalogue.functions.get(contract);
  if (functions === undefined) return { contract: unknownName, function: unknownName, known: false };
  if (!functions.has(fn)) return { contract, function: unknownName, known: false };
  return { contract, function: fn, known: true };
}

/** Fabric's ERRORTHRESHOLD: a response status of 400 or more fails the proposal. */
export function outcomeOf(call: ResolvedFunction, response: ShimResponse | undefined): Outcome {
  if (!call.known) return 'unknown_function';
  return response !== undefined && response.status < 400 ? 'success' : 'error';
}

/** Seconds; chaincode functions mostly take milliseconds, bounded by the peer's execute timeout (30 s by default). */
export const durationBuckets: readonly number[] = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

export interface TransactionMetrics {
  transactions: Counter;
  duration: Histogram;
  inFlight: Gauge;
  functionNamesOverflow: Counter;
}

export function createTransactionMetrics(provider: MetricsProvider): TransactionMetrics {
  const labelNames = ['channel', 'contract', 'function'];
  return {
    transactions: provider.newCounter({
      namespace: 'chaincode',
      name: 'transactions',
      help: 'Transactions the chaincode finished, by channel, contract, function and outcome (success, error, unknown_function).',
      labelNames: [...labelNames, 'outcome'],
      statsdFormat: '%{#fqname}.%{channel}.%{contract}.%{function}.%{outcome}',
    }),
    duration: provider.newHistogram({
      namespace: 'chaincode',
      name: 'transaction_duration_seconds',
      help: 'Time the chaincode took for a transaction, from the peer handing it over to the response, in seconds.',
      labelNames: [...labelNames, 'outcome'],
      statsdFormat: '%{#fqname}.%{channel}.%{contract}.%{function}.%{outcome}',
      buckets: durationBuckets,
    }),
    inFlight: provider.newGauge({
      namespace: 'chaincode',
      name: 'transactions_in_flight',
      help: 'Transactions the chaincode is executing now.',
      labelNames,
      statsdFormat: '%{#fqname}.%{channel}.%{contract}.%{function}',
    }),
    functionNamesOverflow: provider.newCounter({
      namespace: 'chaincode',
      name: 'function_names_overflow',
      help: `Successful transactions of a plain (Init/Invoke) chaincode labelled function="${otherName}" because their function name is longer than ${maxFunctionNameLength} characters or the cap of names with series of their own was reached.`,
    }),
  };
}

/** A transaction being executed, for the stuck-stream check. */
export interface RunningTransaction {
  readonly txId: string;
  readonly channel: string;
  readonly contract: string;
  readonly function: string;
  /** performance.now() at the start. */
  readonly startedAt: number;
}

interface Handles {
  inFlight: Gauge;
  done: Map<Outcome, { transactions: Counter; duration: Histogram }>;
}

/**
 * Wraps chaincodes so that each transaction is counted, timed and tracked while it runs.
 * Metrics are attached once the operations system has started; the chaincode server is
 * only started after that, so no transaction goes unrecorded.
 */
export class TransactionInstrument {
  private metrics: TransactionMetrics | null = null;
  private readonly handles = new Map<string, Handles>();
  private readonly running = new Set<RunningTransaction>();

  constructor(
    private readonly names: FunctionNames = new FunctionNames(),
    private readonly clock: Clock = monotonicClock,
  ) {}

  attach(metrics: TransactionMetrics): void {
    this.metrics = metrics;
    this.handles.clear();
  }

  wrap(chaincode: ShimChaincode): ShimChaincode {
    const catalogue = contractCatalogue(chaincode);
    const run = (method: 'Init' | 'Invoke', stub: ShimStub): Promise<ShimResponse> => this.run(catalogue, method, stub, () => chaincode[method](stub));
    return { Init: (stub) => run('Init', stub), Invoke: (stub) => run('Invoke', stub) };
  }

  /** The transaction running longest, if any. */
  oldest(): RunningTransaction | undefined {
    let oldest: RunningTransaction | undefined;
    for (const transaction of this.running) {
      if (oldest === undefined || transaction.startedAt < oldest.startedAt) oldest = transaction;
    }
    return oldest;
  }

  private async run(
    catalogue: ContractCatalogue | null,
    method: 'Init' | 'Invoke',
    stub: ShimStub,
    execute: () => Promise<ShimResponse>,
  ): Promise<ShimResponse> {
    const call = resolveFunction(catalogue, stub.getBufferArgs()[0]?.toString(), this.names);
    const channel = stub.getChannelID();
    const handles = this.handlesFor(channel, call);
    const transaction: RunningTransaction = { txId: stub.getTxID(), channel, contract: call.contract, function: call.function, startedAt: this.clock.now() };
    this.running.add(transaction);
    handles?.inFlight.add(1);
    let response: ShimResponse | undefined;
    try {
      response = await execute();
      return response;
    } finally {
      this.running.delete(transaction);
      if (handles !== undefined && this.metrics !== null) {
        handles.inFlight.add(-1);
        const outcome = outcomeOf(call, response);
        let final = handles;
        let labelled = call;
        // Only Invoke admits: a plain chaincode's Init commonly succeeds whatever its arguments.
        if (call.candidate !== undefined && outcome === 'success' && method === 'Invoke') {
          if (this.names.admit(call.candidate)) {
            labelled = { ...call, function: call.candidate, candidate: undefined };
            final = this.handlesFor(channel, labelled) ?? handles;
          } else {
            this.metrics.functionNamesOverflow.add(1);
          }
        }
        let done = final.done.get(outcome);
        if (done === undefined) {
          const labels = { channel, contract: labelled.contract, function: labelled.function, outcome };
          done = { transactions: this.metrics.transactions.with(labels), duration: this.metrics.duration.with(labels) };
          final.done.set(outcome, done);
        }
        done.transactions.add(1);
        done.duration.observe((this.clock.now() - transaction.startedAt) / 1000);
      }
    }
  }

  private handlesFor(channel: string, call: ResolvedFunction): Handles | undefined {
    if (this.metrics === null) return undefined;
    const key = `${channel}\u0000${call.contract}\u0000${call.function}`;
    let handles = this.handles.get(key);
    if (handles === undefined) {
      handles = { inFlight: this.metrics.inFlight.with({ channel, contract: call.contract, function: call.function }), done: new Map() };
      this.handles.set(key, handles);
    }
    return handles;
  }
}
