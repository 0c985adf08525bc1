import { Interface, Transaction } from 'ethers';
import type { EvmFeeModel } from '../networks/entry.js';
import type { RpcCaller } from './rpc-client.js';
import type { RpcReceipt } from './rpc-types.js';

// What an EVM transaction costs beyond gas x price, per the network registry's fee model (docs/chains.md, "Fees").
// Every place that prices, funds or records an EVM transaction goes through this file:
// - op-stack: an L1 data fee on top of L2 gas. Quoted by the GasPriceOracle predeploy's getL1Fee(bytes) on the unsigned
//   transaction's bytes (the oracle adds a signature's worth itself); held with L1_FEE_MARGIN_PERCENT on top (L1 prices
//   move between quote and inclusion); recorded exactly: the receipt's `l1Fee`, or, on a node whose receipts lack it,
//   getL1Fee(the signed raw transaction) at the receipt's block.
// - nitro (Arbitrum): the L1 cost is charged as extra L2 gas, inside receipts' gasUsed (recorded fee = gasUsed x price, exact).
//   NodeInterface.gasEstimateComponents splits an estimate into its L1 gas; a node whose eth_estimateGas already counts
//   that gas says so by a gasEstimate above gasEstimateForL1 (Arbitrum's nodes); otherwise the L1 gas is added.
// - none: gas x price. `minPriorityFeeWei` floors every tip (Polygon PoS), replacements included.
// Tips: `tips: 'ignored'` (Arbitrum One) offers 0, whatever the node suggests: the price expected is the base fee.

export const GAS_PRICE_ORACLE = '0x420000000000000000000000000000000000000F';
export const NODE_INTERFACE = '0x00000000000000000000000000000000000000C8';
/** A plain value transfer to an account without code, in L2 execution gas. */
export const NATIVE_TRANSFER_GAS = 21_000n;
/**
 * Share (percent) added to an op-stack L1 data fee quote wherever wei must be HELD for it (a top-up, a drain's
 * remainder, an affordability check): Ecotone's L1 base fee can rise 12.5% per L1 block, and a top-up's transfer is
 * sent a few L1 blocks after the quote. Never added to a recorded fee.
 */
export const L1_FEE_MARGIN_PERCENT = 25n;

const ORACLE = new Interface(['function getL1Fee(bytes) view returns (uint256)']);
const NODE = new Interface([
  'function gasEstimateComponents(address to, bool contractCreation, bytes data) payable returns (uint64 gasEstimate, uint64 gasEstimateForL1, uint256 baseFee, uint256 l1BaseFeeEstimate)',
]);

/** The fields of a transaction that size it (the string form of chains/evm/token-sender.ts's EvmTxBody). */
export interface SizedTx {
  chainId: string;
  nonce: string;
  to: string;
  data: string;
  gasLimit: string;
  type: number;
  maxFeePerGas?: string;
  maxPriorityFeePerGas?: string;
  gasPrice?: string;
  value?: string;
}

/** The L1 part of one transaction: `fee` in wei (op-stack quote), `gas` in L2 gas (arbitrum), both 0 elsewhere. */
export interface L1Part {
  fee: bigint;
  gas: bigint;
  /** arbitrum: the node's eth_estimateGas already counts `gas`. */
  inEstimate: boolean;
}

export const NO_L1: L1Part = { fee: 0n, gas: 0n, inEstimate: true };

export class EvmFees {
  readonly model: EvmFeeModel;
  readonly #minTip: bigint;

  constructor(
    private readonly rpc: RpcCaller,
    model: EvmFeeModel | undefined,
  ) {
    this.model = model ?? { l1: 'none' };
    this.#minTip = BigInt(this.model.minPriorityFeeWei ?? '0');
  }

  /** Whether the network charges a priority fee at all (registry `fees.tips`). */
  get collectsTips(): boolean {
    return this.model.tips !== 'ignored';
  }

  /** The tip to offer: the node's suggestion raised to the network's floor; 0 where the network charges none. */
  tip(suggested: bigint): bigint {
    if (!this.collectsTips) return 0n;
    return suggested > this.#minTip ? suggested : this.#minTip;
  }

  /**
   * The L1 part of sending `tx` from `from`: op-stack, getL1Fee of its unsigned bytes; arbitrum, NodeInterface's
   * gasEstimateForL1 (asked as `from`, with its value); nothing elsewhere.
   */
  async l1Part(from: string, tx: SizedTx, block = 'latest'): Promise<L1Part> {
    if (this.model.l1 === 'op-stack') {
      const bytes = Transaction.from(toEthers(tx)).unsignedSerialized;
      return { ...NO_L1, fee: await this.#oracleFee(bytes, block) };
    }
    if (this.model.l1 === 'nitro') {
      const data = NODE.encodeFunctionData('gasEstimateComponents', [tx.to, false, tx.data]);
      const value = BigInt(tx.value ?? '0');
      const call = { from, to: NODE_INTERFACE, data, ...(value > 0n ? { value: `0x${value.toString(16)}` } : {}) };
      const out = NODE.decodeFunctionResult('gasEstimateComponents', await this.rpc.call<string>('eth_call', [call, block]));
      const total = BigInt(out[0]);
      const l1 = BigInt(out[1]);
      return { fee: 0n, gas: l1, inEstimate: total > l1 };
    }
    return NO_L1;
  }

  /** Gas to plan for: the node's estimate, plus the L1 gas when the estimate does not count it (arbitrum). */
  gas(estimate: bigint, l1: L1Part): bigint {
    return l1.inEstimate ? estimate : estimate + l1.gas;
  }

  /** Wei to hold for the L1 data fee beyond gas x price: the quote plus L1_FEE_MARGIN_PERCENT (op-stack). */
  l1Allowance(l1: L1Part): bigint {
    return (l1.fee * (100n + L1_FEE_MARGIN_PERCENT) + 99n) / 100n;
  }

  /** A plain value transfer's gas: 21,000 of execution, plus its L1 gas on arbitrum (asked of the node). */
  async nativeTransferGas(from: string, to: string, value: bigint): Promise<{ gas: bigint; l1: L1Part }> {
    if (this.model.l1 !== 'nitro') return { gas: NATIVE_TRANSFER_GAS, l1: NO_L1 };
    const l1 = await this.l1Part(from, { chainId: '0', nonce: '0', to, data: '0x', gasLimit: '0', type: 2, value: value.toString() });
    return { gas: NATIVE_TRANSFER_GAS + l1.gas, l1: { ...l1, inEstimate: true } };
  }

  /**
   * What a landed transaction cost its sender, exactly: gasUsed x effectiveGasPrice, plus the L1 data fee on op-stack
   * (the receipt's l1Fee; when the node omits it, the oracle's quote of the signed bytes at the receipt's block).
   */
  async paidFee(receipt: RpcReceipt & { l1Fee?: string | null }): Promise<bigint> {
    const l2 = BigInt(receipt.gasUsed) * BigInt(receipt.effectiveGasPrice ?? '0');
    if (this.model.l1 !== 'op-stack') return l2;
    if (receipt.l1Fee !== undefined && receipt.l1Fee !== null) return l2 + BigInt(receipt.l1Fee);
    const raw = await this.rpc.call<string | null>('eth_getRawTransactionByHash', [receipt.transactionHash]);
    if (!raw) throw new Error(`no raw transaction for ${receipt.transactionHash}: its L1 fee cannot be read`);
    return l2 + (await this.#oracleFee(raw, receipt.blockNumber));
  }

  async #oracleFee(bytes: string, block: string): Promise<bigint> {
    const out = await this.rpc.call<string>('eth_call', [
      { to: GAS_PRICE_ORACLE, data: ORACLE.encodeFunctionData('getL1Fee', [bytes]) },
      block,
    ]);
    return BigInt(out);
  }
}

function toEthers(tx: SizedTx) {
  return {
    type: tx.type === 4 ? 2 : tx.type,
    chainId: BigInt(tx.chainId),
    nonce: Number(tx.nonce),
    to: tx.to,
    data: tx.data,
    value: BigInt(tx.value ?? '0'),
    gasLimit: BigInt(tx.gasLimit),
    ...(tx.type === 0
      ? { gasPrice: BigInt(tx.gasPrice ?? '0') }
      : { maxFeePerGas: BigInt(tx.maxFeePerGas ?? '0'), maxPriorityFeePerGas: BigInt(tx.maxPriorityFeePerGas ?? '0') }),
  };
}
