import { TransferRejectedError, type UnsignedTransfer, type Wallet } from '../types.js';
import type { RpcReceipt } from './rpc-types.js';
import type { EvmSweepContext } from './sweep-context.js';
import { feeCap, withFees, type EvmFeeFields, type EvmTxBody } from './token-sender.js';

// The drain of a retired gas station (docs/treasury.md, "Rotating the gas station"): one plain value transfer of its
// whole balance minus the transaction's highest fee to the new gas station. The fee cap sits just above the next
// block's highest possible base fee (+12.5%, as a sweep's reclaim), so the dust the old address keeps (the cap's unused
// part) stays small; a replacement bumps the fees and sends that much less.

export function createEvmNativeDrain(ctx: EvmSweepContext) {
  const fees = async (feeBumpPercent: number): Promise<EvmFeeFields> => {
    const q = await ctx.feeQuote(true);
    const bump = BigInt(100 + feeBumpPercent);
    if (q.baseFee === null) return { type: 0, gasPrice: (q.gasPrice * bump) / 100n };
    const tip = (q.tip * bump) / 100n;
    return { type: 2, maxPriorityFeePerGas: tip, maxFeePerGas: (((q.baseFee * 9n) / 8n) * bump) / 100n + tip };
  };
  return {
    async build(from: Wallet, to: string, nonce: bigint | null, feeBumpPercent: number): Promise<UnsignedTransfer<EvmTxBody> | null> {
      if (nonce === null) throw new TransferRejectedError('invalid', 'an EVM drain needs an explicit nonce');
      const f = await fees(feeBumpPercent);
      const balance = BigInt(await ctx.rpc.call<string>('eth_getBalance', [from.address, 'latest']));
      // Gas and the L1 part (chains/evm/fee-model.ts): Arbitrum adds L1 gas to the 21,000; an op-stack drain must
      // leave its L1 data fee (quoted on the drain's own bytes, with the margin), or the node refuses it.
      const { gas } = await ctx.fees.nativeTransferGas(from.address, to, balance);
      const chainId = (await ctx.chainId()).toString();
      const draft = { chainId, nonce: nonce.toString(), to, data: '0x', value: balance.toString(), gasLimit: gas.toString() };
      const l1 = await ctx.fees.l1Part(from.address, withFees(draft, f));
      const maxFee = gas * feeCap(f) + ctx.fees.l1Allowance(l1);
      const value = balance - maxFee;
      // Not worth a transaction: less would arrive than may burn.
      if (value <= maxFee) return null;
      return {
        network: ctx.network,
        // A native transfer: `token` only fills the request's shape (signTransfer reads the key, the body and `from`).
        request: { from, to, token: ctx.tokens[0]?.symbol ?? 'USDT', amount: value, nonce },
        body: withFees({ ...draft, value: value.toString() }, f),
      };
    },

    async read(hash: string, to: string): Promise<bigint | null> {
      const receipt = await ctx.rpc.call<RpcReceipt | null>('eth_getTransactionReceipt', [hash]);
      if (!receipt || BigInt(receipt.status) !== 1n) return null;
      const tx = await ctx.rpc.call<{ to: string | null; value: string } | null>('eth_getTransactionByHash', [hash]);
      if (!tx) return null;
      return tx.to && tx.to.toLowerCase() === to.toLowerCase() ? BigInt(tx.value) : 0n;
    },
  };
}
