import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Wallet, parseUnits } from 'ethers';
import { startAnvil, type AnvilNode } from '../support/anvil.js';
import { deployTokens, fund, makeAdapter, signer, type DeployedToken } from '../support/evm-tokens/scenario.js';
import { driveSweep, type DrivenStep } from '../support/sweep-driver.js';
import { COIN_TYPE_EVM, CHANGE_DEPOSIT, CHANGE_HOT_WALLET, addressPath } from '../../chains/hd/bip44.js';
import { BALANCE_BATCH_SIZE, type EvmChainAdapter } from '../../chains/evm/adapter.js';
import { ERC20 } from '../../chains/evm/erc20-abi.js';
import { FailoverJsonRpc } from '../../chains/evm/failover-rpc.js';
import { startFaultProxy } from '../support/rpc-fault-proxy.js';
import { NATIVE_TRANSFER_GAS } from '../../chains/evm/sweep-topup.js';
import type { EvmTxBody } from '../../chains/evm/token-sender.js';
import {
  OPERATOR_ACCOUNT,
  OPERATOR_SLOT,
  isSweeper,
  type SweepMethodImpl,
  type SweepRequest,
  type SweepSource,
  type TokenSymbol,
  type Wallet as SweepWallet,
} from '../../chains/types.js';

// The EVM gas top-up sweep ('evm-gas-topup', chains/evm/sweep-topup.ts) on a pre-Prague Anvil (--hardfork cancun: no
// EIP-7702), driven by the non-persistent test driver: fund exactly the transfer's gas, transfer, reclaim the rest.
// Ethereum stand-in (3 confirmations) with Tether-style and FiatToken-style 6-decimal tokens, and a BSC stand-in on
// the same node with 18-decimal tokens of both shapes.

let node: AnvilNode;
let eth: EvmChainAdapter;
let bsc: EvmChainAdapter;
let tokens: Record<'USDT' | 'USDC' | 'BSC_USDT' | 'BSC_USDC', DeployedToken>;
let gasStation: SweepWallet;
const MERCHANT_ACCOUNT = 4242;
let nextIndex = 0;

const wei = (hex: string) => BigInt(hex);
const nativeBalance = async (address: string) => wei(await node.rpc<string>('eth_getBalance', [address, 'latest']));
const tokenBalance = async (t: DeployedToken, owner: string) =>
  BigInt(await (t.contract.getFunction('balanceOf') as (a: string) => Promise<bigint>)(owner));
const send = async (t: DeployedToken, fn: string, ...args: unknown[]) => {
  const tx = await (t.contract.getFunction(fn) as (...a: unknown[]) => Promise<{ wait(): Promise<unknown> }>)(...args);
  await tx.wait();
};

/** A fresh deposit address of the test merchant holding `amount` of `token`. */
async function deposit(adapter: EvmChainAdapter, token: DeployedToken, amount: bigint): Promise<SweepSource> {
  const index = BigInt(nextIndex++);
  const address = await adapter.deriveDepositAddress(signer, MERCHANT_ACCOUNT, index);
  if (amount > 0n) await fund(token, address, amount);
  return { key: { curve: 'secp256k1', path: addressPath(COIN_TYPE_EVM, MERCHANT_ACCOUNT, CHANGE_DEPOSIT, index) }, address, amount };
}

function request(token: TokenSymbol, sources: SweepSource[], destination = Wallet.createRandom().address.toLowerCase()): SweepRequest {
  return { token, sources, destination, gasStation };
}

function topUp(adapter: EvmChainAdapter): SweepMethodImpl<EvmTxBody> {
  const m = adapter.sweepMethods().find((x) => x.method === 'evm-gas-topup');
  if (!m) throw new Error('no evm-gas-topup method');
  return m;
}

const drive = (adapter: EvmChainAdapter, req: SweepRequest) =>
  driveSweep(adapter, topUp(adapter), signer, req, { tick: () => node.mine(1), pollMs: 10 });

/**
 * Anvil's near-empty blocks drive the base fee towards zero, leaving only the tip, where the margins a top-up carries
 * are too small to be worth reclaiming; a mainnet-like base fee (50 gwei against a 1 gwei tip) exercises the reclaim.
 */
async function mainnetLikeFees() {
  await node.rpc('anvil_setNextBlockBaseFeePerGas', [`0x${(50n * 10n ** 9n).toString(16)}`]);
  await node.mine(1);
}

const of = (steps: DrivenStep[], purpose: string) => steps.filter((s) => s.step.purpose === purpose);
const sum = (xs: bigint[]) => xs.reduce((a, b) => a + b, 0n);

beforeAll(async () => {
  node = await startAnvil({ chainId: 1, extraArgs: ['--hardfork', 'cancun'] });
  const [usdt, usdc, bscUsdt, bscUsdc] = await deployTokens(node, [
    { symbol: 'USDT', shape: 'tether', decimals: 6 },
    { symbol: 'USDC', shape: 'fiat', decimals: 6 },
    { symbol: 'USDT', shape: 'tether', decimals: 18 },
    { symbol: 'USDC', shape: 'fiat', decimals: 18 },
  ]);
  tokens = { USDT: usdt!, USDC: usdc!, BSC_USDT: bscUsdt!, BSC_USDC: bscUsdc! };
  eth = makeAdapter(node, [usdt!, usdc!]);
  bsc = makeAdapter(node, [bscUsdt!, bscUsdc!], { network: 'bsc' });
  await eth.verifyTokens();
  await bsc.verifyTokens();
  gasStation = await eth.deriveOperatorWallet(signer, OPERATOR_SLOT.gasStation);
  await node.rpc('anvil_setBalance', [gasStation.address, `0x${(10n ** 20n).toString(16)}`]);
});

afterAll(async () => {
  await node?.stop();
});

describe('EVM Sweeper plumbing', () => {
  it('is a Sweeper; the operator wallet is account 0, hot-wallet branch, the slot; the top-up method is offered and available', async () => {
    expect(isSweeper(eth)).toBe(true);
    expect(gasStation.key.path).toBe(addressPath(COIN_TYPE_EVM, OPERATOR_ACCOUNT, CHANGE_HOT_WALLET, OPERATOR_SLOT.gasStation));
    expect(gasStation).toEqual(await eth.deriveHotWallet(signer, OPERATOR_ACCOUNT, OPERATOR_SLOT.gasStation));
    const resources = await eth.deriveOperatorWallet(signer, OPERATOR_SLOT.resources);
    expect(resources.address).not.toBe(gasStation.address);
    expect(eth.sweepMethods().map((m) => m.method)).toContain('evm-gas-topup');
    expect(eth.sweepMethods().at(-1)?.method).toBe('evm-gas-topup'); // the fallback is last
    expect(await topUp(eth).available()).toEqual({ ok: true });
  });

  it('finalTokenBalances: balanceOf at the final height, one JSON-RPC batch per chunk, ignoring a non-final transfer', async () => {
    const funded = [await deposit(eth, tokens.USDC, parseUnits('3', 6)), await deposit(eth, tokens.USDC, parseUnits('0.5', 6))];
    await node.mine(3); // the mints are final
    const empty = Array.from({ length: BALANCE_BATCH_SIZE + 20 }, () => Wallet.createRandom().address.toLowerCase());
    const addresses = [funded[0]!.address, ...empty, funded[1]!.address];
    const before = new Map(eth.rpc.calls);
    const balances = await eth.finalTokenBalances('USDC', addresses);
    const after = eth.rpc.calls;
    expect(balances).toHaveLength(addresses.length);
    expect(balances).toEqual(await Promise.all(addresses.map((a) => tokenBalance(tokens.USDC, a))));
    expect(balances[0]).toBe(parseUnits('3', 6));
    expect(balances.at(-1)).toBe(parseUnits('0.5', 6));
    // 222 addresses: two batches, no eth_call one by one.
    expect((after.get('batch') ?? 0) - (before.get('batch') ?? 0)).toBe(2);
    expect(after.get('eth_call') ?? 0).toBe(before.get('eth_call') ?? 0);

    // A transfer in the latest (non-final) block is not counted until it is final.
    await fund(tokens.USDC, funded[1]!.address, parseUnits('7', 6));
    expect(await tokenBalance(tokens.USDC, funded[1]!.address)).toBe(parseUnits('7.5', 6));
    expect(await eth.finalTokenBalances('USDC', [funded[1]!.address])).toEqual([parseUnits('0.5', 6)]);
    await node.mine(2);
    expect(await eth.finalTokenBalances('USDC', [funded[1]!.address])).toEqual([parseUnits('7.5', 6)]);
    expect(await eth.finalTokenBalances('USDC', [])).toEqual([]);
  });

  it('a JSON-RPC batch refused by a failing endpoint (HTTP 503, a JSON-RPC error) moves whole to the next one', async () => {
    const held = await deposit(eth, tokens.USDT, parseUnits('42', 6));
    const other = Wallet.createRandom().address.toLowerCase();
    const balanceOf = (a: string) => ({
      method: 'eth_call',
      params: [{ to: tokens.USDT.address, data: ERC20.encodeFunctionData('balanceOf', [a]) }, 'latest'],
    });
    const proxy = await startFaultProxy({ upstream: node.url, http5xxRate: 1 });
    try {
      for (const fault of [
        { http5xxRate: 1, errorRate: 0 },
        { http5xxRate: 0, errorRate: 1 },
      ]) {
        proxy.setFaults(fault);
        const before = proxy.counts.http5xx + proxy.counts.error;
        // A fresh pool: the failing endpoint is first in line, and this batch is the only request it sees.
        const rpc = new FailoverJsonRpc({ network: 'ethereum', mode: 'test', urls: [proxy.url, node.url] });
        const answers = await rpc.batch<string>([balanceOf(held.address), balanceOf(other)]);
        expect(answers.map((a) => (a.ok ? BigInt(a.result) : a.error))).toEqual([parseUnits('42', 6), 0n]);
        expect(proxy.counts.http5xx + proxy.counts.error).toBe(before + 1);
      }
      // A revert is the request's own answer, in its slot: no failover, the other items still answer.
      const rpc = new FailoverJsonRpc({ network: 'ethereum', mode: 'test', urls: [node.url] });
      const [bad, good] = await rpc.batch<string>([
        { method: 'eth_call', params: [{ to: tokens.USDT.address, data: '0xdeadbeef' }, 'latest'] },
        balanceOf(held.address),
      ]);
      expect(bad).toMatchObject({ ok: false, error: { kind: 'rpc_error' } });
      expect(good).toEqual({ ok: true, result: expect.stringMatching(/^0x/) });
    } finally {
      await proxy.close();
    }
  });
});

describe('evm-gas-topup on a pre-Prague chain', () => {
  for (const [label, adapterOf, token, symbol, unit] of [
    ['Tether-style USDT, 6 decimals (ethereum)', () => eth, () => tokens.USDT, 'USDT', 6],
    ['FiatToken-style USDC, 6 decimals (ethereum)', () => eth, () => tokens.USDC, 'USDC', 6],
    ['Tether-style USDT, 18 decimals (bsc)', () => bsc, () => tokens.BSC_USDT, 'USDT', 18],
    ['FiatToken-style USDC, 18 decimals (bsc)', () => bsc, () => tokens.BSC_USDC, 'USDC', 18],
  ] as const) {
    it(`sweeps several deposit addresses: ${label}`, async () => {
      const adapter = adapterOf();
      const t = token();
      const sources = [
        await deposit(adapter, t, parseUnits('12.5', unit)),
        await deposit(adapter, t, parseUnits('0.01', unit)),
        await deposit(adapter, t, parseUnits('1000', unit)),
      ];
      const req = request(symbol, sources);
      await mainnetLikeFees();
      const stationBefore = await nativeBalance(gasStation.address);
      const { plan, steps } = await drive(adapter, req);

      expect(plan.skipped).toEqual([]);
      expect(plan.steps.map((s) => [s.group, s.purpose]).sort()).toEqual([
        ...sources.map(() => [0, 'fund']),
        ...sources.map(() => [1, 'transfer']),
        ...sources.map(() => [2, 'reclaim']),
      ]);
      expect(plan.estimatedCost).toBeGreaterThan(sum(plan.steps.map((s) => s.estimatedFee))); // fees, and dust
      for (const s of steps) if (s.hash) expect(s.outcome).toMatchObject({ status: 'succeeded', final: true });
      expect(steps.filter((s) => s.hash !== null)).toHaveLength(3 * sources.length); // every reclaim was worth it

      // Funds: exactly the transfer's gas limit times its fee cap, from the gas station.
      for (const f of of(steps, 'fund')) {
        expect(f.receipt!.nativeMoved).toBe(f.step.value);
        expect(f.step.value).toBe(BigInt(f.step.params.transferGasLimit!) * BigInt(f.step.params.feeCap!));
        expect(f.step.from.address).toBe(gasStation.address);
      }
      // Transfers: the planned amount, from each source to the destination, paid by the address's own top-up.
      for (const [i, tr] of of(steps, 'transfer').entries()) {
        expect(tr.receipt!.swept).toEqual([{ source: sources[i]!.address, amount: sources[i]!.amount }]);
        expect(tr.receipt!.elsewhere).toBe(0n);
        expect(tr.receipt!.fee).toBeLessThanOrEqual(of(steps, 'fund')[i]!.step.value);
      }
      expect(await tokenBalance(t, req.destination)).toBe(sum(sources.map((s) => s.amount)));
      for (const s of sources) {
        expect(await tokenBalance(t, s.address)).toBe(0n);
        // Near-zero native: at most the unused part of the reclaim's own fee cap.
        const reclaim = of(steps, 'reclaim').find((r) => r.step.from.address === s.address)!;
        const left = await nativeBalance(s.address);
        expect(left).toBeLessThan(NATIVE_TRANSFER_GAS * (await sentFeeCap(reclaim.hash!)));
      }
      // The gas station paid exactly what it funded plus its own fees, less what came back.
      const funded = sum(of(steps, 'fund').map((f) => f.receipt!.nativeMoved + f.receipt!.fee));
      const back = sum(of(steps, 'reclaim').map((r) => r.receipt!.nativeMoved));
      expect(back).toBeGreaterThan(0n);
      expect(stationBefore - (await nativeBalance(gasStation.address))).toBe(funded - back);
      // What the sweep really cost: every fee, plus the dust left on the deposit addresses; within the plan's estimate.
      const fees = sum(steps.map((s) => s.receipt?.fee ?? 0n));
      const dust = sum(await Promise.all(sources.map((s) => nativeBalance(s.address))));
      expect(funded - back).toBe(fees + dust);
      expect(funded - back).toBeLessThanOrEqual(plan.estimatedCost);
    });
  }

  it('a reclaim not worth its fee is skipped: the dust stays on the address and is priced in the plan', async () => {
    // A near-zero base fee (BSC-like): the tip is all the price, and what a top-up leaves is less than a reclaim burns.
    await node.rpc('anvil_setNextBlockBaseFeePerGas', ['0x7']);
    await node.mine(1);
    const sources = [await deposit(eth, tokens.USDC, parseUnits('5', 6)), await deposit(eth, tokens.USDC, parseUnits('6', 6))];
    const req = request('USDC', sources);
    const stationBefore = await nativeBalance(gasStation.address);
    const { plan, steps } = await drive(eth, req);
    for (const r of of(steps, 'reclaim')) {
      expect(r.hash).toBeNull();
      expect(r.step.estimatedFee).toBe(0n);
    }
    expect(await tokenBalance(tokens.USDC, req.destination)).toBe(parseUnits('11', 6));
    const funds = of(steps, 'fund');
    const spent = stationBefore - (await nativeBalance(gasStation.address));
    expect(spent).toBe(sum(funds.map((f) => f.receipt!.nativeMoved + f.receipt!.fee)));
    // Every wei of a top-up is either burnt by its transfer or left on the address.
    for (const s of sources) {
      const transfer = of(steps, 'transfer').find((t) => t.step.sources[0] === s.address)!;
      const fund = funds.find((f) => f.step.to === s.address)!;
      expect(await nativeBalance(s.address)).toBe(fund.receipt!.nativeMoved - transfer.receipt!.fee);
      expect(await nativeBalance(s.address)).toBeGreaterThan(0n);
    }
    expect(spent).toBeLessThanOrEqual(plan.estimatedCost);
  });

  it('a Tether fee: the destination gets the net, the fee is reported as elsewhere', async () => {
    const t = tokens.USDT;
    await send(t, 'setParams', 10n, parseUnits('1', 6));
    try {
      const src = await deposit(eth, t, parseUnits('100', 6));
      const req = request('USDT', [src]);
      const { steps } = await drive(eth, req);
      const tr = of(steps, 'transfer')[0]!;
      expect(tr.receipt!.swept).toEqual([{ source: src.address, amount: parseUnits('99.9', 6) }]);
      expect(tr.receipt!.elsewhere).toBe(parseUnits('0.1', 6));
      expect(await tokenBalance(t, req.destination)).toBe(parseUnits('99.9', 6));
      expect(await tokenBalance(t, src.address)).toBe(0n);
    } finally {
      await send(t, 'setParams', 0n, 0n);
    }
  });

  it('plans nothing for addresses it cannot sweep: blacklisted, short of tokens, amount 0', async () => {
    const blocked = await deposit(eth, tokens.USDT, parseUnits('5', 6));
    const short = await deposit(eth, tokens.USDT, parseUnits('1', 6));
    const zero = await deposit(eth, tokens.USDT, 0n);
    const ok = await deposit(eth, tokens.USDT, parseUnits('2', 6));
    await send(tokens.USDT, 'addBlackList', blocked.address);
    try {
      const plan = await topUp(eth).plan(request('USDT', [blocked, { ...short, amount: parseUnits('2', 6) }, zero, ok]));
      expect(plan.skipped).toEqual([
        { address: zero.address, reason: expect.stringContaining('nothing to sweep') },
        { address: blocked.address, reason: expect.stringContaining('sender_blacklisted') },
        { address: short.address, reason: expect.stringContaining('below the planned amount') },
      ]);
      expect(plan.steps.map((s) => s.to)).toEqual([ok.address, expect.any(String), gasStation.address]);
      expect(plan.steps[1]!.sources).toEqual([ok.address]);
      expect(plan.estimatedCost).toBeGreaterThan(0n);
    } finally {
      await send(tokens.USDT, 'removeBlackList', blocked.address);
    }
  });

  it('a top-up only sends what is missing; a reclaim not worth its fee is not built', async () => {
    const src = await deposit(eth, tokens.USDC, parseUnits('4', 6));
    const req = request('USDC', [src]);
    const method = topUp(eth);
    const plan = await method.plan(req);
    const fundStep = plan.steps.find((s) => s.purpose === 'fund')!;
    const reclaimStep = plan.steps.find((s) => s.purpose === 'reclaim')!;
    const nonce = await eth.getAccountNonce(gasStation.address);
    // Part of the gas is already there (an earlier top-up whose transfer never ran): only the rest is sent.
    await node.rpc('anvil_setBalance', [src.address, `0x${(fundStep.value / 3n).toString(16)}`]);
    const partial = await method.build(req, fundStep, nonce, 0);
    expect(BigInt(partial!.body.value!)).toBe(fundStep.value - fundStep.value / 3n);
    await node.rpc('anvil_setBalance', [src.address, `0x${fundStep.value.toString(16)}`]);
    expect(await method.build(req, fundStep, nonce, 0)).toBeNull();
    // A few wei left: returning them would burn more than comes back.
    await node.rpc('anvil_setBalance', [src.address, '0x3e8']);
    expect(await method.build(req, reclaimStep, 0n, 0)).toBeNull();
    await node.rpc('anvil_setBalance', [src.address, '0x0']);
  });

  it('a stuck fund is replaced at the same nonce with a higher fee, and only the replacement lands', async () => {
    const src = await deposit(eth, tokens.USDC, parseUnits('9', 6));
    const req = request('USDC', [src]);
    const method = topUp(eth);
    const plan = await method.plan(req);
    const fundStep = plan.steps.find((s) => s.purpose === 'fund')!;
    await node.rpc('evm_setAutomine', [false]);
    try {
      const nonce = await eth.getAccountNonce(gasStation.address);
      const first = await method.build(req, fundStep, nonce, 0);
      const firstSigned = await eth.signTransfer(first!, signer);
      expect(await eth.broadcast(firstSigned)).toEqual({ status: 'accepted' });
      const bumped = await method.build(req, fundStep, nonce, 20);
      expect(bumped!.body.nonce).toBe(first!.body.nonce);
      expect(bumped!.body.value).toBe(first!.body.value);
      expect(BigInt(bumped!.body.maxFeePerGas!)).toBeGreaterThan(BigInt(first!.body.maxFeePerGas!));
      expect(BigInt(bumped!.body.maxPriorityFeePerGas!)).toBeGreaterThan(BigInt(first!.body.maxPriorityFeePerGas!));
      const bumpedSigned = await eth.signTransfer(bumped!, signer);
      expect(bumpedSigned.hash).not.toBe(firstSigned.hash);
      expect(await eth.broadcast(bumpedSigned)).toEqual({ status: 'accepted' });
      await node.mine(4);
      expect(await eth.getTransactionOutcome(bumpedSigned.hash)).toMatchObject({ status: 'succeeded', final: true });
      expect(await eth.getTransactionOutcome(firstSigned.hash)).toEqual({ status: 'unknown' });
      const receipt = await method.read(bumpedSigned.hash, req, fundStep);
      expect(receipt!.nativeMoved).toBe(fundStep.value);
      expect(await nativeBalance(src.address)).toBe(fundStep.value);
    } finally {
      await node.rpc('evm_setAutomine', [true]);
    }
    // The sweep then goes on from the funded address: the driver's fund step finds nothing missing.
    const { steps } = await drive(eth, req);
    expect(of(steps, 'fund')[0]!.hash).toBeNull();
    expect(of(steps, 'transfer')[0]!.receipt!.swept).toEqual([{ source: src.address, amount: parseUnits('9', 6) }]);
  });

  it('a transfer is sent at the planned cap; a replacement outbids it only when the address holds the gas for it', async () => {
    const src = await deposit(eth, tokens.USDC, parseUnits('3', 6));
    const req = request('USDC', [src]);
    const method = topUp(eth);
    const plan = await method.plan(req);
    const fundStep = plan.steps.find((s) => s.purpose === 'fund')!;
    const transferStep = plan.steps.find((s) => s.purpose === 'transfer')!;
    const maxCost = (b: EvmTxBody) => BigInt(b.gasLimit) * BigInt(b.maxFeePerGas!);
    const setGas = (wei: bigint) => node.rpc('anvil_setBalance', [src.address, `0x${wei.toString(16)}`]);
    try {
      // No top-up yet: refused before signing.
      await expect(method.build(req, transferStep, 0n, 0)).rejects.toMatchObject({ reason: 'insufficient_gas' });
      await setGas(fundStep.value);
      const first = await method.build(req, transferStep, 0n, 0);
      expect(maxCost(first!.body)).toBe(fundStep.value); // exactly what the top-up gave
      // Exactly the top-up on the address: no higher cap is affordable, the original stays in flight.
      await expect(method.build(req, transferStep, 0n, 50)).rejects.toMatchObject({ reason: 'underpriced' });
      await setGas(fundStep.value * 2n);
      const bumped = await method.build(req, transferStep, 0n, 50);
      expect(bumped!.body.nonce).toBe(first!.body.nonce);
      expect(BigInt(bumped!.body.maxFeePerGas!)).toBe((BigInt(first!.body.maxFeePerGas!) * 150n) / 100n);
      expect(BigInt(bumped!.body.maxPriorityFeePerGas!)).toBe((BigInt(first!.body.maxPriorityFeePerGas!) * 150n) / 100n);
      expect(bumped!.body.data).toBe(first!.body.data);
    } finally {
      await setGas(0n);
    }
  });
});

/** The fee cap a landed step was sent with (its receipt's effective price is below it). */
async function sentFeeCap(hash: string): Promise<bigint> {
  const tx = await node.rpc<{ maxFeePerGas?: string; gasPrice: string }>('eth_getTransactionByHash', [hash]);
  return BigInt(tx.maxFeePerGas ?? tx.gasPrice);
}
