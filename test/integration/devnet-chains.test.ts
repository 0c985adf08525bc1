import { Contract, HDNodeWallet, Interface, Wallet } from 'ethers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { networkEntry } from '../../chains/registry.js';
import { DEVNET_MNEMONIC, DEVNET_PAYER_PATH } from '../../src/cli/devnet.js';
import { loadChainSettings } from '../../src/watcher/config.js';
import { chainEnv, startDevEvmChain, type DevEvmChain } from '../../scripts/devnet/evm.js';
import { ARBITRUM_L2_BASE_FEE, NODE_INTERFACE } from '../support/network-anvil.js';

// The fast part of the demo's chains (the whole demo runs in the slow tier, test/e2e/checkout-dev.test.ts): the local
// Base chain `npm run dev` starts charges a real OP-stack L1 data fee on the demo payer's token transfer (the fee code
// path is live, not skipped), carries both test tokens at Base's decimals, and its CHAIN_BASE_TEST_* settings load with
// the registry's fee model; the local Arbitrum chain's NodeInterface stand-in estimates at Arbitrum's base-fee floor.
let base: DevEvmChain;
let arbitrum: DevEvmChain;

beforeAll(async () => {
  [base, arbitrum] = await Promise.all([startDevEvmChain(networkEntry('base')!), startDevEvmChain(networkEntry('arbitrum')!)]);
}, 120_000);

afterAll(async () => {
  await Promise.all([base?.node.stop(), arbitrum?.node.stop()]);
});

describe("npm run dev's rollup chains", () => {
  it('Base: chain 84532, both tokens at 6 decimals held by the payer, and a transfer pays gas plus an L1 data fee', async () => {
    expect(BigInt(await base.node.rpc<string>('eth_chainId'))).toBe(84532n);
    const payer = new Wallet(HDNodeWallet.fromPhrase(DEVNET_MNEMONIC, undefined, DEVNET_PAYER_PATH).privateKey, base.node.provider);
    for (const symbol of ['USDT', 'USDC'] as const) {
      expect(base.tokens[symbol].decimals).toBe(6);
      const token = new Contract(base.tokens[symbol].address, ['function balanceOf(address) view returns (uint256)'], base.node.provider);
      expect(await token.getFunction('balanceOf')(payer.address)).toBe(1_000_000n * 10n ** 6n);
    }
    const before = await base.node.provider.getBalance(payer.address);
    const usdc = new Contract(base.tokens.USDC.address, ['function transfer(address to, uint256 value)'], payer);
    const tx = (await usdc.getFunction('transfer')(`0x${'ab'.repeat(20)}`, 1_000_000n)) as { wait(): Promise<unknown> };
    const receipt = (await tx.wait()) as { gasUsed: bigint; gasPrice: bigint; blockNumber: number };
    const spent = before - (await base.node.provider.getBalance(payer.address, receipt.blockNumber));
    const l2 = receipt.gasUsed * receipt.gasPrice;
    // The L1 data fee is charged on top of L2 execution (a plain chain charges exactly gasUsed x price).
    expect(spent).toBeGreaterThan(l2);

    const settings = loadChainSettings(chainEnv(base), 'base', 'test')!;
    expect(settings).toMatchObject({ chainId: 84532n, fees: { l1: 'op-stack' }, confirmation: { kind: 'depth', confirmations: 2 } });
    expect(settings.tokens.map((t) => [t.symbol, t.address, t.decimals]).sort()).toEqual(
      [
        ['USDC', base.tokens.USDC.address, 6],
        ['USDT', base.tokens.USDT.address, 6],
      ].sort(),
    );
  });

  it("Arbitrum: 0.25 s blocks, and NodeInterface estimates L1 gas at Arbitrum's 0.01 gwei base-fee floor", async () => {
    expect(arbitrum.blockTimeSec).toBe(0.25);
    const first = await arbitrum.node.provider.getBlockNumber();
    await new Promise((r) => setTimeout(r, 1500));
    expect((await arbitrum.node.provider.getBlockNumber()) - first).toBeGreaterThanOrEqual(3);
    const node = new Interface([
      'function gasEstimateComponents(address to, bool contractCreation, bytes data) payable returns (uint64 gasEstimate, uint64 gasEstimateForL1, uint256 baseFee, uint256 l1BaseFeeEstimate)',
    ]);
    const out = node.decodeFunctionResult(
      'gasEstimateComponents',
      await arbitrum.node.rpc<string>('eth_call', [
        { to: NODE_INTERFACE, data: node.encodeFunctionData('gasEstimateComponents', [arbitrum.tokens.USDC.address, false, '0x']) },
        'latest',
      ]),
    );
    expect(out[2]).toBe(ARBITRUM_L2_BASE_FEE);
    expect(loadChainSettings(chainEnv(arbitrum), 'arbitrum', 'test')!.fees).toEqual({ l1: 'nitro' });
  });
});
