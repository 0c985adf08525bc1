import type { EvmFeeModel, NetworkEntry } from '../../chains/networks/entry.js';
import { type AnvilNode, startAnvil } from './anvil.js';
import { compileFeeStandIns } from './fee-stand-ins/compile.js';

// Anvil for one registry entry, charging (or quoting) fees the way that network does (docs/chains.md, "Fees"):
// - op-stack: `--network optimism --hardfork ecotone` (op-revm charges a real L1 data fee from the L1Block predeploy's
//   storage), L1Block storage set to the figures below, and STAND-INS (fakes written for this repository; the real
//   predeploys' bytecode is not available offline) at the L1Block and GasPriceOracle addresses (test/support/fee-stand-ins/).
//   Anvil 1.7.1 (op-revm) charges the FJORD L1 fee although the flag says ecotone: from the FastLZ-compressed length of
//   the signed transaction, floored at 100 bytes (1,600 units of L1 data gas, which small transactions hit); the oracle
//   stand-in computes the same on the bytes it is given, so getL1Fee(signed raw tx) equals the charge to the wei.
//   The L2 base fee is low and the tip suggestion 0, so the L1 part is most of a token transfer's fee, as on OP Mainnet.
// - arbitrum: fast blocks (0.25 s) and a NodeInterface FAKE at 0x…C8 answering gasEstimateComponents. Anvil does not
//   charge the L1 part (Arbitrum charges it as extra L2 gas, inside receipts' gasUsed); only the estimate side is faked.
// - anything else (Polygon PoS, Ethereum, BSC): plain Anvil. Polygon's 25 gwei tip floor is the adapter's to apply:
//   Anvil suggests 1 gwei (eth_maxPriorityFeePerGas) and accepts any tip.

export const GAS_PRICE_ORACLE = '0x420000000000000000000000000000000000000F';
export const L1_BLOCK = '0x4200000000000000000000000000000000000015';
export const NODE_INTERFACE = '0x00000000000000000000000000000000000000C8';

/** What the L1Block stand-in holds (op-stack): OP Mainnet's Ecotone scalars, L1 prices of a busy day. */
export interface OpL1Figures {
  l1BaseFee: bigint;
  blobBaseFee: bigint;
  baseFeeScalar: number;
  blobBaseFeeScalar: number;
}
export const DEFAULT_OP_L1: OpL1Figures = {
  l1BaseFee: 20_000_000_000n,
  blobBaseFee: 1_000_000_000n,
  baseFeeScalar: 1368,
  blobBaseFeeScalar: 810_949,
};
/** The op-stack L2 base fee at start (wei): 0.001 gwei, OP Mainnet's order of magnitude. */
export const OP_L2_BASE_FEE = 1_000_000n;
/** Arbitrum: the L1 base fee the NodeInterface fake estimates with (wei). */
export const DEFAULT_ARBITRUM_L1_BASE_FEE = 30_000_000_000n;
/** Arbitrum's L2 base fee at start: 0.01 gwei, Arbitrum One's floor. */
export const ARBITRUM_L2_BASE_FEE = 10_000_000n;

export interface NetworkAnvil extends AnvilNode {
  feeModel: EvmFeeModel;
  /** op-stack: rewrites the L1Block figures (the L1 fee of the next transactions). */
  setOpL1(figures: OpL1Figures): Promise<void>;
  /** arbitrum: the L1 base fee the NodeInterface fake estimates with. */
  setArbitrumL1BaseFee(wei: bigint): Promise<void>;
}

const word = (v: bigint): string => `0x${v.toString(16).padStart(64, '0')}`;

/** Starts Anvil for `entry` (an EVM entry). chainId defaults to the entry's test chain id; blockTimeSec to automine (arbitrum: 0.25). */
export async function startNetworkAnvil(
  entry: NetworkEntry,
  options: { chainId?: number; blockTimeSec?: number } = {},
): Promise<NetworkAnvil> {
  if (entry.family !== 'evm') throw new Error(`${entry.id} is not an EVM network`);
  const feeModel: EvmFeeModel = entry.fees ?? { l1: 'none' };
  const chainId = options.chainId ?? Number(entry.test.chainId ?? '31337');
  const extraArgs: string[] = [];
  let blockTime = options.blockTimeSec;
  if (feeModel.l1 === 'op-stack')
    extraArgs.push('--network', 'optimism', '--hardfork', 'ecotone', '--base-fee', OP_L2_BASE_FEE.toString(), '--disable-min-priority-fee');
  if (feeModel.l1 === 'nitro') {
    extraArgs.push('--base-fee', ARBITRUM_L2_BASE_FEE.toString());
    blockTime ??= 0.25;
  }
  const node = await startAnvil({ chainId, ...(blockTime ? { blockTime } : {}), extraArgs });
  const code = compileFeeStandIns();
  const setOpL1 = async (f: OpL1Figures): Promise<void> => {
    const packed = (BigInt(f.baseFeeScalar) << 96n) | (BigInt(f.blobBaseFeeScalar) << 64n);
    await node.rpc('anvil_setStorageAt', [L1_BLOCK, word(1n), word(f.l1BaseFee)]);
    await node.rpc('anvil_setStorageAt', [L1_BLOCK, word(3n), word(packed)]);
    await node.rpc('anvil_setStorageAt', [L1_BLOCK, word(7n), word(f.blobBaseFee)]);
  };
  const setArbitrumL1BaseFee = async (wei: bigint): Promise<void> => {
    await node.rpc('anvil_setStorageAt', [NODE_INTERFACE, word(0n), word(wei)]);
  };
  try {
    if (feeModel.l1 === 'op-stack') {
      await node.rpc('anvil_setCode', [L1_BLOCK, code.L1BlockStandIn!.runtime]);
      await node.rpc('anvil_setCode', [GAS_PRICE_ORACLE, code.GasPriceOracleStandIn!.runtime]);
      await setOpL1(DEFAULT_OP_L1);
    }
    if (feeModel.l1 === 'nitro') {
      await node.rpc('anvil_setCode', [NODE_INTERFACE, code.NodeInterfaceStandIn!.runtime]);
      await setArbitrumL1BaseFee(DEFAULT_ARBITRUM_L1_BASE_FEE);
      // The L2 base fee the stand-in prices L1 gas at (slot 1): Anvil's own decays towards 0 over empty fast blocks,
      // which would blow its L1 gas estimate up (Arbitrum's base fee has a floor; this is it).
      await node.rpc('anvil_setStorageAt', [NODE_INTERFACE, word(1n), word(ARBITRUM_L2_BASE_FEE)]);
    }
  } catch (e) {
    await node.stop();
    throw e;
  }
  return {
    ...node,
    feeModel,
    setOpL1: async (f) => {
      if (feeModel.l1 !== 'op-stack') throw new Error(`${entry.id} has no L1Block`);
      await setOpL1(f);
    },
    setArbitrumL1BaseFee: async (wei) => {
      if (feeModel.l1 !== 'nitro') throw new Error(`${entry.id} has no NodeInterface`);
      await setArbitrumL1BaseFee(wei);
    },
  };
}
