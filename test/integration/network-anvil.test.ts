import { Contract, Interface, Wallet } from 'ethers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { arbitrum } from '../../chains/networks/arbitrum.js';
import { optimism } from '../../chains/networks/optimism.js';
import { polygon } from '../../chains/networks/polygon.js';
import { compileFeeStandIns } from '../support/fee-stand-ins/compile.js';
import { DEFAULT_OP_L1, GAS_PRICE_ORACLE, NODE_INTERFACE, type NetworkAnvil, startNetworkAnvil } from '../support/network-anvil.js';

// startNetworkAnvil (test/support/network-anvil.ts): the op-stack node charges an L1 data fee the GasPriceOracle
// stand-in quotes to the wei; the Arbitrum node answers gasEstimateComponents; Polygon's is plain Anvil.

const KEY = '0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80';
const TO = '0x000000000000000000000000000000000000dEaD';
const code = compileFeeStandIns();

describe('op-stack Anvil', () => {
  let node: NetworkAnvil;
  beforeAll(async () => {
    node = await startNetworkAnvil(optimism);
  });
  afterAll(async () => node?.stop());

  it('charges gasUsed x effectiveGasPrice plus the oracle stand-in quote, whatever the calldata', async () => {
    const wallet = new Wallet(KEY, node.provider);
    const oracle = new Contract(GAS_PRICE_ORACLE, code.GasPriceOracleStandIn!.abi as never, node.provider);
    let nonce = await node.provider.getTransactionCount(wallet.address);
    const l1Fees: bigint[] = [];
    for (const data of ['0x', `0x${'00ff'.repeat(100)}`, `0x${'ab'.repeat(1500)}`]) {
      const before = await node.provider.getBalance(wallet.address);
      const tx = await wallet.sendTransaction({ to: TO, value: 7n, data, gasLimit: 200_000, nonce: nonce++ });
      const receipt = (await tx.wait())!;
      const after = await node.provider.getBalance(wallet.address);
      const raw = await node.rpc<string>('eth_getRawTransactionByHash', [tx.hash]);
      const quoted = (await oracle.getFunction('getL1Fee')(raw, { blockTag: receipt.blockNumber })) as bigint;
      const l2 = receipt.gasUsed * receipt.gasPrice;
      expect(before - after - 7n - l2).toBe(quoted);
      l1Fees.push(quoted);
    }
    // The formula, by hand, from the L1Block figures: 1,600 units of L1 data gas (Anvil's op mode).
    const f = DEFAULT_OP_L1;
    const expected = (1600n * (BigInt(f.baseFeeScalar) * 16n * f.l1BaseFee + BigInt(f.blobBaseFeeScalar) * f.blobBaseFee)) / 16_000_000n;
    expect(l1Fees).toEqual([expected, expected, expected]);
    expect(expected).toBeGreaterThan(0n);
  });

  it('follows the L1Block figures the test sets', async () => {
    const oracle = new Contract(GAS_PRICE_ORACLE, code.GasPriceOracleStandIn!.abi as never, node.provider);
    const before = (await oracle.getFunction('getL1Fee')('0x')) as bigint;
    await node.setOpL1({ ...DEFAULT_OP_L1, l1BaseFee: DEFAULT_OP_L1.l1BaseFee * 2n });
    const after = (await oracle.getFunction('getL1Fee')('0x')) as bigint;
    expect(after).toBeGreaterThan(before);
    expect(await oracle.getFunction('l1BaseFee')()).toBe(DEFAULT_OP_L1.l1BaseFee * 2n);
    await node.setOpL1(DEFAULT_OP_L1);
  });
});

describe('arbitrum Anvil', () => {
  let node: NetworkAnvil;
  beforeAll(async () => {
    node = await startNetworkAnvil(arbitrum);
  });
  afterAll(async () => node?.stop());

  it('answers gasEstimateComponents with an L1 part that grows with the calldata', async () => {
    const ni = new Interface(code.NodeInterfaceStandIn!.abi as never);
    const ask = async (data: string) => {
      const out = await node.rpc<string>('eth_call', [
        { to: NODE_INTERFACE, data: ni.encodeFunctionData('gasEstimateComponents', [TO, false, data]) },
        'latest',
      ]);
      return ni.decodeFunctionResult('gasEstimateComponents', out);
    };
    const small = await ask('0x');
    const big = await ask(`0x${'ff'.repeat(500)}`);
    expect(small[1]).toBeGreaterThan(0n);
    expect(big[1]).toBeGreaterThan(small[1]);
    expect(small[2]).toBeGreaterThan(0n);
    expect(small[3]).toBe(30_000_000_000n);
    // Fast blocks: the chain moves on its own.
    const h0 = await node.provider.getBlockNumber();
    await new Promise((r) => setTimeout(r, 800));
    expect(await node.provider.getBlockNumber()).toBeGreaterThan(h0);
  });
});

describe('polygon Anvil', () => {
  it('is plain Anvil at the test chain id, suggesting a tip under the 25 gwei floor', async () => {
    const node = await startNetworkAnvil(polygon);
    try {
      expect(BigInt(await node.rpc<string>('eth_chainId'))).toBe(80002n);
      expect(BigInt(await node.rpc<string>('eth_maxPriorityFeePerGas'))).toBeLessThan(25_000_000_000n);
      expect(node.feeModel.minPriorityFeeWei).toBe('25000000000');
    } finally {
      await node.stop();
    }
  });
});
