import { Contract, Interface, Transaction, Wallet, getAddress, keccak256, toUtf8Bytes } from 'ethers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { arbitrum } from '../../chains/networks/arbitrum.js';
import { optimism } from '../../chains/networks/optimism.js';
import { polygon } from '../../chains/networks/polygon.js';
import { deployToken, mintTo } from '../support/evm-tokens/deploy.js';
import { compileFeeStandIns } from '../support/fee-stand-ins/compile.js';
import { L1_FEE_MARGIN_PERCENT } from '../../chains/evm/fee-model.js';
import { DEFAULT_OP_L1, GAS_PRICE_ORACLE, NODE_INTERFACE, type NetworkAnvil, startNetworkAnvil } from '../support/network-anvil.js';

// startNetworkAnvil (test/support/network-anvil.ts): the op-stack node charges an L1 data fee (Fjord: from the FastLZ
// compressed size of the signed transaction) the GasPriceOracle stand-in quotes to the wei; the Arbitrum node answers gasEstimateComponents; Polygon's is plain Anvil.

const KEY = '0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80';
const TO = '0x000000000000000000000000000000000000dEaD';
const code = compileFeeStandIns();

describe('op-stack Anvil', () => {
  let node: NetworkAnvil;
  beforeAll(async () => {
    node = await startNetworkAnvil(optimism);
  });
  afterAll(async () => node?.stop());

  it('charges gasUsed x effectiveGasPrice plus the oracle stand-in quote of the signed bytes (Fjord, FastLZ), to the wei', async () => {
    const wallet = new Wallet(KEY, node.provider);
    const oracle = new Contract(GAS_PRICE_ORACLE, code.GasPriceOracleStandIn!.abi as never, node.provider);
    const token = await deployToken(wallet, 'fiat', 'USDC', 6);
    await mintTo(token, 'fiat', wallet.address, 10n ** 12n);
    await (await token.getFunction('approve')(wallet.address, 10n ** 12n)).wait();
    const tokenAddress = await token.getAddress();
    const erc20 = new Interface([
      'function transfer(address to, uint256 value)',
      'function transferFrom(address from, address to, uint256 value)',
    ]);
    // Deterministic "random" bytes and addresses (keccak chains): incompressible, as real addresses and signatures are.
    const randomBytes = (n: number, seed: string): string => {
      let out = '';
      for (let i = 0; out.length < 2 * n; i++) out += keccak256(toUtf8Bytes(`${seed}:${i}`)).slice(2);
      return `0x${out.slice(0, 2 * n)}`;
    };
    const randomAddress = (seed: string) => getAddress(randomBytes(20, seed));
    const cases: Array<{ name: string; to: string; value: bigint; data: string }> = [
      { name: 'value transfer', to: randomAddress('to'), value: 7n, data: '0x' },
      {
        name: 'erc20 transfer',
        to: tokenAddress,
        value: 0n,
        data: erc20.encodeFunctionData('transfer', [randomAddress('a'), 123_456_789n]),
      },
      {
        name: 'erc20 transferFrom',
        to: tokenAddress,
        value: 0n,
        data: erc20.encodeFunctionData('transferFrom', [wallet.address, randomAddress('b'), 987_654_321n]),
      },
      { name: '2,000 random bytes', to: randomAddress('c'), value: 1n, data: randomBytes(2000, 'calldata') },
      { name: '2,000 zero bytes', to: randomAddress('d'), value: 1n, data: `0x${'00'.repeat(2000)}` },
    ];
    const f = DEFAULT_OP_L1;
    const feeScaled = BigInt(f.baseFeeScalar) * 16n * f.l1BaseFee + BigInt(f.blobBaseFeeScalar) * f.blobBaseFee;
    const floorFee = (100_000_000n * feeScaled) / 10n ** 12n;
    const rows: Array<{ name: string; rawBytes: number; flzLen: bigint; charged: bigint; quoted: bigint; unsignedQuote: bigint }> = [];
    let nonce = await node.provider.getTransactionCount(wallet.address);
    for (const c of cases) {
      const tx = await wallet.sendTransaction({ to: c.to, value: c.value, data: c.data, gasLimit: 500_000, nonce: nonce++ });
      const receipt = (await tx.wait())!;
      expect(receipt.status).toBe(1);
      // Automine: the only transaction of its block, so the balance delta over the block is its whole cost.
      const block = await node.provider.getBlock(receipt.blockNumber);
      expect(block!.transactions).toEqual([tx.hash]);
      const before = await node.provider.getBalance(wallet.address, receipt.blockNumber - 1);
      const after = await node.provider.getBalance(wallet.address, receipt.blockNumber);
      const raw = await node.rpc<string>('eth_getRawTransactionByHash', [tx.hash]);
      const at = { blockTag: receipt.blockNumber };
      const quoted = (await oracle.getFunction('getL1Fee')(raw, at)) as bigint;
      const charged = before - after - c.value - receipt.gasUsed * receipt.gasPrice;
      expect(charged, c.name).toBe(quoted);
      const flzLen = (await oracle.getFunction('flzCompressLen')(raw, at)) as bigint;
      // The service's estimate quotes the UNSIGNED bytes (no signature yet) and holds it with L1_FEE_MARGIN_PERCENT:
      // the stand-in adds no signature padding, so the margin must cover the signature's compressed bytes.
      const unsignedQuote = (await oracle.getFunction('getL1Fee')(Transaction.from(raw).unsignedSerialized, at)) as bigint;
      expect(charged, c.name).toBeLessThanOrEqual((unsignedQuote * (100n + L1_FEE_MARGIN_PERCENT)) / 100n);
      rows.push({ name: c.name, rawBytes: (raw.length - 2) / 2, flzLen, charged, quoted, unsignedQuote });
      // The Fjord formula by hand, from the stand-in's compressed length and the L1Block figures.
      const estimated = -42_585_600n + 836_500n * flzLen;
      const size = estimated < 100_000_000n ? 100_000_000n : estimated;
      expect(quoted, c.name).toBe((size * feeScaled) / 10n ** 12n);
      expect((await oracle.getFunction('getL1GasUsed')(raw, at)) as bigint).toBe((size * 16n) / 1_000_000n);
    }
    console.log(
      rows
        .map(
          (r) =>
            `${r.name}: ${r.rawBytes} signed bytes, flzLen ${r.flzLen}, charged ${r.charged}, quoted ${r.quoted}, unsigned quote ${r.unsignedQuote}`,
        )
        .join('\n'),
    );
    const byName = Object.fromEntries(rows.map((r) => [r.name, r]));
    // Small or compressible transactions sit on the 100-byte floor (the old 1,600-unit constant) ...
    expect(byName['value transfer']!.quoted).toBe(floorFee);
    expect(byName['2,000 zero bytes']!.quoted).toBe(floorFee);
    // ... incompressible ones pay by their compressed size: the formula is really exercised.
    expect(byName['erc20 transferFrom']!.flzLen).toBeGreaterThan(170n);
    expect(byName['erc20 transferFrom']!.quoted).toBeGreaterThan(floorFee);
    expect(byName['2,000 random bytes']!.flzLen).toBeGreaterThan(2000n);
    expect(byName['2,000 random bytes']!.quoted).toBeGreaterThan(15n * floorFee);
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
