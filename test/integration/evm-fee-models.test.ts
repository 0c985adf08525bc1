import { Wallet, parseUnits } from 'ethers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EvmChainAdapter } from '../../chains/evm/adapter.js';
import { L1_FEE_MARGIN_PERCENT } from '../../chains/evm/fee-model.js';
import type { EvmTxBody } from '../../chains/evm/token-sender.js';
import { COIN_TYPE_EVM, CHANGE_DEPOSIT, CHANGE_HOT_WALLET, addressPath } from '../../chains/hd/bip44.js';
import type { EvmFeeModel } from '../../chains/networks/entry.js';
import { arbitrum } from '../../chains/networks/arbitrum.js';
import { optimism } from '../../chains/networks/optimism.js';
import { polygon } from '../../chains/networks/polygon.js';
import { OPERATOR_SLOT, TransferRejectedError, type SweepRequest, type SweepSource } from '../../chains/types.js';
import { type DeployedToken, deployTokens, fund, signer } from '../support/evm-tokens/scenario.js';
import { type NetworkAnvil, startNetworkAnvil } from '../support/network-anvil.js';
import { driveSweep } from '../support/sweep-driver.js';

// The registry's fee models in the EVM adapter (chains/evm/fee-model.ts, docs/chains.md "Fees"), on Anvil started per
// network (test/support/network-anvil.ts): op-stack charges an L1 data fee (Anvil's op mode), which a payout's
// affordability check, a top-up sweep and a drain must hold, and every recorded fee must include to the wei;
// Polygon's tip floor; Arbitrum's L1 gas in a top-up.

const MERCHANT_ACCOUNT = 5151;
let currentNode: NetworkAnvil | undefined;
const DUST = 10n ** 12n;
let nextIndex = 0;

function adapterFor(node: NetworkAnvil, network: 'optimism' | 'polygon' | 'arbitrum', fees: EvmFeeModel, tokens: DeployedToken[]) {
  return new EvmChainAdapter({
    network: network as never,
    mode: 'test',
    fees,
    rpcUrl: node.url,
    rpcTimeoutMs: 5000,
    tokens: tokens.map((t) => ({ symbol: t.symbol, address: t.address, decimals: t.decimals })),
    confirmation: { kind: 'depth', confirmations: 1 },
  });
}
const balance = async (node: NetworkAnvil, a: string) => BigInt(await node.rpc<string>('eth_getBalance', [a, 'latest']));
const setBalance = (node: NetworkAnvil, a: string, wei: bigint) => node.rpc('anvil_setBalance', [a, `0x${wei.toString(16)}`]);
async function depositOf(adapter: EvmChainAdapter, token: DeployedToken, amount: bigint): Promise<SweepSource> {
  const index = BigInt(nextIndex++);
  const address = await adapter.deriveDepositAddress(signer, MERCHANT_ACCOUNT, index);
  await fund(token, address, amount);
  // Anvil's op mode charges its L1 fee even inside eth_estimateGas, and its eth_call checks the caller's funds
  // for gas (NodeInterface asked as the deposit address): both fail from an address without ether, where a real node's
  // simulation does not. A little dust, as an earlier sweep's reclaim leaves.
  await setBalance(currentNode!, address, DUST);
  return { key: { curve: 'secp256k1', path: addressPath(COIN_TYPE_EVM, MERCHANT_ACCOUNT, CHANGE_DEPOSIT, index) }, address, amount };
}
async function waitOutcome(adapter: EvmChainAdapter, node: NetworkAnvil, hash: string) {
  for (let i = 0; i < 100; i++) {
    const o = await adapter.getTransactionOutcome(hash);
    if (o.status === 'succeeded' || o.status === 'failed') return o;
    await node.mine(1);
  }
  throw new Error(`no outcome for ${hash}`);
}

describe('op-stack (Anvil op mode, ecotone)', () => {
  let node: NetworkAnvil;
  let adapter: EvmChainAdapter;
  let usdc: DeployedToken;
  beforeAll(async () => {
    node = await startNetworkAnvil(optimism, { chainId: 31337 });
    currentNode = node;
    [usdc] = (await deployTokens(node, [{ symbol: 'USDC', shape: 'fiat', decimals: 6 }])) as [DeployedToken];
    adapter = adapterFor(node, 'optimism', node.feeModel, [usdc]);
  });
  afterAll(async () => node?.stop());

  it('a refund payout: refused with only the L2 gas on the wallet, then recorded with its L1 fee, equal to the balance delta', async () => {
    const hot = await adapter.deriveHotWallet(signer, 7, 0);
    await fund(usdc, hot.address, parseUnits('50', 6));
    const request = { from: hot, to: Wallet.createRandom().address, token: 'USDC' as const, amount: parseUnits('12.34', 6), nonce: 0n };
    // Size the L2-only need from a well-funded build, then leave exactly that on the wallet.
    await setBalance(node, hot.address, 10n ** 18n);
    const probe = (await adapter.buildTokenTransfer(request)).body as EvmTxBody;
    const l2Only = BigInt(probe.gasLimit) * BigInt(probe.maxFeePerGas!);
    await setBalance(node, hot.address, l2Only);
    const refused = await adapter.buildTokenTransfer(request).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(TransferRejectedError);
    expect((refused as TransferRejectedError).reason).toBe('insufficient_gas');
    expect((refused as Error).message).toMatch(/for the L1 data fee/);

    await setBalance(node, hot.address, l2Only * 3n);
    const before = await balance(node, hot.address);
    const signed = await adapter.signTransfer(await adapter.buildTokenTransfer(request), signer);
    expect((await adapter.broadcast(signed)).status).toBe('accepted');
    const outcome = await waitOutcome(adapter, node, signed.hash);
    expect(outcome.status).toBe('succeeded');
    const fee = (outcome as { fee: bigint }).fee;
    expect(fee).toBe(before - (await balance(node, hot.address)));
    const receipt = await node.provider.getTransactionReceipt(signed.hash);
    const l1 = fee - receipt!.gasUsed * receipt!.gasPrice;
    // The L1 part is real: the fee is more than gas x price.
    expect(l1).toBeGreaterThan(0n);
  });

  it('a top-up sweep: falls back from EIP-7702 (ecotone has none), tops up the L1 part too, and records fees equal to the balance deltas', async () => {
    const gasStation = await adapter.deriveOperatorWallet(signer, OPERATOR_SLOT.gasStation);
    expect(gasStation.key.path).toBe(addressPath(COIN_TYPE_EVM, 0, CHANGE_HOT_WALLET, OPERATOR_SLOT.gasStation));
    await setBalance(node, gasStation.address, 10n ** 18n);
    const [m7702, topUp] = adapter.sweepMethods();
    const unavailable = await m7702!.available();
    expect(unavailable.ok).toBe(false);
    expect((unavailable as { reason: string }).reason).toMatch(/deterministic deployer|EIP-7702/);

    const sources = [await depositOf(adapter, usdc, parseUnits('20', 6)), await depositOf(adapter, usdc, parseUnits('3', 6))];
    const request: SweepRequest = { token: 'USDC', sources, destination: Wallet.createRandom().address.toLowerCase(), gasStation };
    const stationBefore = await balance(node, gasStation.address);
    const { plan, steps } = await driveSweep(adapter, topUp!, signer, request, { tick: () => node.mine(1), pollMs: 10 });
    expect(plan.skipped).toEqual([]);
    const funds = steps.filter((s) => s.step.purpose === 'fund');
    for (const f of funds) {
      const l2Only = BigInt(f.step.params.transferGasLimit!) * BigInt(f.step.params.feeCap!);
      const l1Held = BigInt(f.step.params.transferL1Fee!);
      expect(l1Held).toBeGreaterThan(0n);
      // The top-up holds the transfer's L1 fee: an L2-only top-up would leave the address short.
      expect(f.step.value).toBe(l2Only + l1Held);
      expect(f.receipt!.nativeMoved).toBe(f.step.value - DUST); // only what was missing
    }
    for (const t of steps.filter((s) => s.step.purpose === 'transfer')) {
      expect(t.outcome).toMatchObject({ status: 'succeeded' });
      // The transfer paid more than an L2-only top-up would have left after its L2 part: the L1 part was needed.
      expect(BigInt(t.step.params.estimatedL1Fee!)).toBeGreaterThan(0n);
      const quote = (BigInt(t.step.params.l1Fee!) * 100n) / (100n + L1_FEE_MARGIN_PERCENT);
      const receipt = await node.provider.getTransactionReceipt(t.hash!);
      expect(t.receipt!.fee - receipt!.gasUsed * receipt!.gasPrice).toBeLessThanOrEqual(quote + 1n);
    }
    // Each sender's balance delta equals what it sent plus the fees recorded for it, to the wei.
    const feesOf = (address: string) =>
      steps.filter((s) => s.hash && s.step.from.address === address).reduce((a, s) => a + s.receipt!.fee, 0n);
    const moved = (purpose: string, address?: string) =>
      steps
        .filter((s) => s.hash && s.step.purpose === purpose && (!address || s.step.from.address === address || s.step.to === address))
        .reduce((a, s) => a + s.receipt!.nativeMoved, 0n);
    const stationAfter = await balance(node, gasStation.address);
    expect(stationBefore - stationAfter).toBe(moved('fund') + feesOf(gasStation.address) - moved('reclaim'));
    for (const s of sources) {
      const got = moved('fund', s.address);
      expect(await balance(node, s.address)).toBe(DUST + got - feesOf(s.address) - moved('reclaim', s.address));
    }
  });

  it('a native drain leaves its L1 fee: it lands, and the recorded fee equals the balance delta', async () => {
    const from = await adapter.deriveHotWallet(signer, 9, 1);
    const to = Wallet.createRandom().address.toLowerCase();
    await setBalance(node, from.address, 10n ** 15n);
    const unsigned = await adapter.buildNativeDrain(from, to, 0n, 0);
    expect(unsigned).not.toBeNull();
    const signed = await adapter.signTransfer(unsigned!, signer);
    expect((await adapter.broadcast(signed)).status).toBe('accepted');
    const outcome = (await waitOutcome(adapter, node, signed.hash)) as { status: string; fee: bigint };
    expect(outcome.status).toBe('succeeded');
    const sent = await adapter.readNativeDrain(signed.hash, to);
    expect(sent).toBe(unsigned!.request.amount);
    expect(10n ** 15n - (await balance(node, from.address))).toBe(sent! + outcome.fee);
  });
});

describe('polygon: the 25 gwei tip floor', () => {
  it('bodies carry a tip of at least 25 gwei although the node suggests less, replacements too', async () => {
    const node = await startNetworkAnvil(polygon, { chainId: 31337 });
    try {
      const [usdt] = (await deployTokens(node, [{ symbol: 'USDT', shape: 'tether', decimals: 6 }])) as [DeployedToken];
      const adapter = adapterFor(node, 'polygon', node.feeModel, [usdt]);
      const hot = await adapter.deriveHotWallet(signer, 7, 0);
      await fund(usdt, hot.address, parseUnits('5', 6));
      await setBalance(node, hot.address, 10n ** 18n);
      expect(BigInt(await node.rpc<string>('eth_maxPriorityFeePerGas'))).toBeLessThan(25_000_000_000n);
      const request = { from: hot, to: Wallet.createRandom().address, token: 'USDT' as const, amount: 1_000_000n, nonce: 0n };
      const first = (await adapter.buildTokenTransfer(request)).body as EvmTxBody;
      expect(BigInt(first.maxPriorityFeePerGas!)).toBe(25_000_000_000n);
      const bumped = (await adapter.buildTokenTransfer({ ...request, feeBumpPercent: 10 })).body as EvmTxBody;
      expect(BigInt(bumped.maxPriorityFeePerGas!)).toBe(27_500_000_000n);
      const signed = await adapter.signTransfer(await adapter.buildTokenTransfer(request), signer);
      await adapter.broadcast(signed);
      const outcome = await waitOutcome(adapter, node, signed.hash);
      expect(outcome.status).toBe('succeeded');
    } finally {
      await node.stop();
    }
  });
});

describe('arbitrum: the L1 gas in a top-up', () => {
  it('the fund step covers the transfer gas plus gasEstimateForL1 from NodeInterface', async () => {
    const node = await startNetworkAnvil(arbitrum, { chainId: 31337 });
    currentNode = node;
    try {
      const [usdc] = (await deployTokens(node, [{ symbol: 'USDC', shape: 'fiat', decimals: 6 }])) as [DeployedToken];
      const adapter = adapterFor(node, 'arbitrum', node.feeModel, [usdc]);
      const gasStation = await adapter.deriveOperatorWallet(signer, OPERATOR_SLOT.gasStation);
      await setBalance(node, gasStation.address, 10n ** 18n);
      const source = await depositOf(adapter, usdc, parseUnits('8', 6));
      const destination = Wallet.createRandom().address.toLowerCase();
      const request: SweepRequest = { token: 'USDC', sources: [source], destination, gasStation };
      const plan = await adapter.sweepMethods().at(-1)!.plan(request);
      const l2 = BigInt(
        await node.rpc<string>('eth_estimateGas', [
          {
            from: source.address,
            to: usdc.address,
            data: (await import('../../chains/evm/erc20-abi.js')).ERC20.encodeFunctionData('transfer', [destination, source.amount]),
          },
          'latest',
        ]),
      );
      const transfer = plan.steps.find((s) => s.purpose === 'transfer')!;
      const fundStep = plan.steps.find((s) => s.purpose === 'fund')!;
      const gasLimit = BigInt(transfer.params.gasLimit!);
      // The planned gas is the L2 estimate plus the L1 gas (Anvil's estimate omits it; the NodeInterface fake says so).
      expect(gasLimit).toBeGreaterThan((l2 * 110n) / 100n);
      expect(BigInt(transfer.params.estimatedL1Fee!)).toBeGreaterThan(0n);
      expect(fundStep.value).toBe(gasLimit * BigInt(transfer.params.feeCap!));
    } finally {
      await node.stop();
    }
  });

  it('offers no tip although the node suggests one: sweeps are priced at the base fee, a payout pays exactly that', async () => {
    const node = await startNetworkAnvil(arbitrum, { chainId: 31337 });
    currentNode = node;
    try {
      const [usdc] = (await deployTokens(node, [{ symbol: 'USDC', shape: 'fiat', decimals: 6 }])) as [DeployedToken];
      const adapter = adapterFor(node, 'arbitrum', node.feeModel, [usdc]);
      // Anvil suggests a 1 gwei tip, as a generic node does; Arbitrum's own nodes answer 0 and ArbOS charges none.
      expect(BigInt(await node.rpc<string>('eth_maxPriorityFeePerGas', []))).toBeGreaterThan(0n);
      const gasStation = await adapter.deriveOperatorWallet(signer, OPERATOR_SLOT.gasStation);
      await setBalance(node, gasStation.address, 10n ** 18n);
      const source = await depositOf(adapter, usdc, parseUnits('8', 6));
      const request: SweepRequest = {
        token: 'USDC',
        sources: [source],
        destination: Wallet.createRandom().address.toLowerCase(),
        gasStation,
      };
      const plan = await adapter.sweepMethods().at(-1)!.plan(request);
      const transfer = plan.steps.find((s) => s.purpose === 'transfer')!;
      expect(BigInt(transfer.params.tip!)).toBe(0n);
      // The plan's base fee (blocks come every 0.25 s, so read it off the plan): the cap is 2 x base fee + a tip of 0.
      const baseFee = BigInt(transfer.params.feeCap!) / 2n;
      // Priced at the base fee: the transfer's estimate is its gas (the limit less its margin) x base fee, no tip in it.
      const gasLimit = BigInt(transfer.params.gasLimit!);
      expect(transfer.estimatedFee % baseFee).toBe(0n);
      const gas = transfer.estimatedFee / baseFee;
      expect(gas).toBeLessThanOrEqual(gasLimit);
      expect(gas).toBeGreaterThan((gasLimit * 100n) / 115n);

      const hot = await adapter.deriveHotWallet(signer, 7, 0);
      await fund(usdc, hot.address, parseUnits('50', 6));
      await setBalance(node, hot.address, 10n ** 18n);
      const payout = await adapter.buildTokenTransfer({
        from: hot,
        to: Wallet.createRandom().address,
        token: 'USDC',
        amount: parseUnits('1.5', 6),
        nonce: 0n,
      });
      expect((payout.body as EvmTxBody).maxPriorityFeePerGas).toBe('0');
      const before = await balance(node, hot.address);
      const signed = await adapter.signTransfer(payout, signer);
      expect((await adapter.broadcast(signed)).status).toBe('accepted');
      const outcome = await waitOutcome(adapter, node, signed.hash);
      expect(outcome.status).toBe('succeeded');
      const receipt = await node.provider.getTransactionReceipt(signed.hash);
      const block = await node.provider.getBlock(receipt!.blockNumber);
      expect(receipt!.gasPrice).toBe(BigInt(block!.baseFeePerGas!));
      expect((outcome as { fee: bigint }).fee).toBe(before - (await balance(node, hot.address)));
    } finally {
      await node.stop();
    }
  });
});
