import type { Delivery, NetworkId, TokenContract, TokenSymbol } from '../types.js';
import type { RpcBatchItem, RpcCaller, RpcRequest } from './rpc-client.js';
import type { EvmFeeFields, FeeQuote } from './token-sender.js';
import type { EvmFees } from './fee-model.js';

// What an EVM sweep method (chains/evm/sweep-*.ts) takes from the adapter: one object, built once by
// EvmChainAdapter.sweepContext(), so a method never reaches into the adapter's private state.

export interface EvmSweepContext {
  readonly network: NetworkId;
  /** The adapter's JSON-RPC (failover pool): single calls, and batches (one HTTP request for many calls). */
  readonly rpc: RpcCaller & { batch<T>(requests: readonly RpcRequest[]): Promise<Array<RpcBatchItem<T>>> };
  /** The registry's tokens on this chain (canonical lowercase addresses). */
  readonly tokens: readonly TokenContract[];
  chainId(): Promise<bigint>;
  /** Current base fee (null on legacy-gasPrice chains), tip and gasPrice; `fresh` skips the one-second cache. */
  feeQuote(fresh: boolean): Promise<FeeQuote>;
  /** Fee fields for a transaction sent now, `feeBumpPercent` above the current levels (the payout sender's rule). */
  feeFields(feeBumpPercent: number): Promise<EvmFeeFields>;
  /** The network's fee model: L1 parts to quote and hold, the fee a landed transaction paid (chains/evm/fee-model.ts). */
  readonly fees: EvmFees;
  /** What a succeeded transaction moved of `token` out of `from`: to `to`, and elsewhere (the adapter's readDelivery). */
  readDelivery(hash: string, token: TokenSymbol, from: string, to: string): Promise<Delivery | null>;
}
