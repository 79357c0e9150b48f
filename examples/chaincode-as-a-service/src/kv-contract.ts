import { Contract, type Context } from 'fabric-contract-api';

/** A key-value contract: nothing in it knows about fabric-ops. */
export class KvContract extends Contract {
  constructor() {
    super('kv');
  }

  async put(ctx: Context, key: string, value: string): Promise<void> {
    ctx.logging.getLogger().debug(`put ${key}`);
    await ctx.stub.putState(key, Buffer.from(value));
  }

  async get(ctx: Context, key: string): Promise<string> {
    const value = await ctx.stub.getState(key);
    if (value.length === 0) throw new Error(`key ${key} does not exist`);
    return Buffer.from(value).toString('utf8');
  }

  /** Always fails: the transaction is rejected with `reason`. */
  async fail(_ctx: Context, reason: string): Promise<void> {
    throw new Error(reason);
  }
}
