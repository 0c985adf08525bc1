import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Contract, getBytes, parseUnits } from 'ethers';
import { startAnvil, type AnvilNode } from '../support/anvil.js';
import { deployTokens, fund, type DeployedToken } from '../support/evm-tokens/scenario.js';
import { driveSweep } from '../support/sweep-driver.js';
import { startFakeJavaTron, type FakeJavaTron } from '../../scripts/devnet/fake-java-tron/server.js';
import { TRX } from '../../scripts/devnet/fake-java-tron/chain.js';
import { FREE_NET_LIMIT } from '../../scripts/devnet/fake-java-tron/resources.js';
import { TronChainAdapter } from '../../chains/tron/adapter.js';
import type { TronTxBody } from '../../chains/tron/token-sender.js';
import { evmHexToTron, normalizeTronAddress, tronBase58, tronToEvmHex } from '../../chains/tron/address.js';
import { tronDepositKeyPath } from '../../chains/tron/keys.js';
import { OPERATOR_SLOT, isSweeper, type SweepMethodImpl, type SweepRequest, type Wallet } from '../../chains/types.js';
import { MnemonicSigner } from '../../src/signer/mnemonic-signer.js';

// TRON sweeps against the fake java-tron (scripts/devnet/fake-java-tron: a documented FAKE of the wallet API whose
// resource model follows TRON's documentation: Stake 2.0 delegation, activation fees, fee_limit-bounded energy), token
// transfers executed on Anvil. Driven by the non-persistent sweep driver (plan → per group build/sign/broadcast/wait
// final → read); the service drives the same steps through the outbound engine.
const signer = new MnemonicSigner('test test test test test test test test test test test junk');
const u6 = (s: string) => parseUnits(s, 6);
const ACCOUNT = 9;

let node: AnvilNode;
let fake: FakeJavaTron;
let usdt: DeployedToken;
let adapter: TronChainAdapter;
let gasStation: Wallet;
let resources: Wallet;
let nextIndex = 0;
let destSeq = 0;

const tick = () => node.mine(1);
const newDestination = () => evmHexToTron(`0x${(0xe00000 + ++destSeq).toString(16).padStart(40, '0')}`);

function makeAdapter() {
  return new TronChainAdapter({
    mode: 'test',
    jsonRpcUrl: node.url,
    fullHost: fake.url,
    tokens: [{ symbol: 'USDT', address: tronBase58(evmHexToTron(usdt.address)), decimals: 6 }],
    confirmation: { kind: 'depth', confirmations: 2 },
  });
}

async function tokenBalance(address: string): Promise<bigint> {
  const c = new Contract(usdt.address, ['function balanceOf(address) view returns (uint256)'], node.provider);
  return (c.getFunction('balanceOf') as (a: string) => Promise<bigint>)(tronToEvmHex(address));
}

/** A fresh deposit address holding `amount` USDT (tokens only: the account does not exist on TRON until it gets TRX). */
async function deposit(amount: bigint): Promise<Wallet & { amount: bigint }> {
  const index = BigInt(++nextIndex);
  const address = await adapter.deriveDepositAddress(signer, ACCOUNT, index);
  await fund(usdt, tronToEvmHex(address), amount);
  return { key: tronDepositKeyPath(ACCOUNT, index), address, amount };
}

/** Stake 2.0 through the wallet API, as an operator would: freezebalancev2 for ENERGY, signed by the account. */
async function stakeForEnergy(wallet: Wallet, sun: bigint): Promise<void> {
  const post = async (path: string, body: unknown) =>
    (await (await fetch(`${fake.url}/${path}`, { method: 'POST', body: JSON.stringify(body) })).json()) as Record<string, unknown>;
  const tx = (await post('wallet/freezebalancev2', { owner_address: wallet.address, frozen_balance: Number(sun), resource: 'ENERGY' })) as {
    txID: string;
  };
  const sig = await signer.signSecp256k1Digest(wallet.key, getBytes(`0x${tx.txID}`));
  const r = await post('wallet/broadcasttransaction', {
    ...tx,
    signature: [`${sig.r.slice(2)}${sig.s.slice(2)}${(27 + sig.yParity).toString(16)}`],
  });
  expect(r.result).toBe(true);
}

const request = (sources: Array<Wallet & { amount: bigint }>, destination: string): SweepRequest => ({
  token: 'USDT',
  sources: sources.map((s) => ({ key: s.key, address: s.address, amount: s.amount })),
  destination,
  gasStation,
  resources,
});

const methodOf = (name: string): SweepMethodImpl<TronTxBody> => adapter.sweepMethods().find((m) => m.method === name)!;

beforeAll(async () => {
  node = await startAnvil({ chainId: 0x2b6653dc });
  [usdt] = (await deployTokens(node, [{ symbol: 'USDT', shape: 'tether', decimals: 6 }])) as [DeployedToken];
  fake = await startFakeJavaTron(node, { solidifyDepth: 1 });
  adapter = makeAdapter();
  gasStation = await adapter.deriveOperatorWallet(signer, OPERATOR_SLOT.gasStation);
  resources = await adapter.deriveOperatorWallet(signer, OPERATOR_SLOT.resources);
  fake.chain.setTrx(gasStation.address, 10_000n * TRX);
  fake.chain.setTrx(resources.address, 200_000n * TRX);
});

afterAll(async () => {
  await fake?.close();
  await node?.stop();
});

describe('TRON adapter as a Sweeper', () => {
  it('offers energy delegation first, then the TRX top-up; reads final balances; derives the operator wallets under account 0', async () => {
    expect(isSweeper(adapter)).toBe(true);
    expect(adapter.sweepMethods().map((m) => m.method)).toEqual(['tron-energy-delegation', 'tron-trx-topup']);
    const a = await deposit(u6('3'));
    const b = await deposit(u6('4.5'));
    // b's tokens arrived in the head block: not solidified yet, so not part of the final balance.
    expect(await adapter.finalTokenBalances('USDT', [b.address])).toEqual([0n]);
    await node.mine(2);
    expect(await adapter.finalTokenBalances('USDT', [a.address, b.address, newDestination()])).toEqual([u6('3'), u6('4.5'), 0n]);
    expect(gasStation.key.path).toBe("m/44'/195'/0'/1/0");
    expect(resources.key.path).toBe("m/44'/195'/0'/1/1");
  });

  it('energy delegation is unavailable, with the reason, while the resources account has no staked energy', async () => {
    const fresh = makeAdapter();
    const before = await fresh.sweepMethods()[0]!.available();
    expect(before).toMatchObject({ ok: false, reason: expect.stringMatching(/not derived/) });
    await fresh.deriveOperatorWallet(signer, OPERATOR_SLOT.resources);
    const r = await fresh.sweepMethods()[0]!.available();
    expect(r).toMatchObject({ ok: false, reason: expect.stringMatching(/has no staked energy to delegate/) });
    expect((await fresh.sweepMethods()[1]!.available()).ok).toBe(true);
  });
});

describe('tron-energy-delegation', () => {
  it('activates the new account, delegates the estimated energy, transfers with it (no TRX burnt for energy), takes it back', async () => {
    await stakeForEnergy(resources, 100_000n * TRX);
    const method = methodOf('tron-energy-delegation');
    expect(await method.available()).toEqual({ ok: true });
    const fresh = await deposit(u6('125.5'));
    const existing = await deposit(u6('40'));
    fake.chain.setTrx(existing.address, 0n); // received TRX once: the account exists, no activation needed
    const destination = newDestination();
    const gasBefore = fake.chain.account(gasStation.address)!.balanceSun;
    const req = request([fresh, existing], destination);

    const { plan, steps } = await driveSweep(adapter, method, signer, req, { tick });
    expect(plan.skipped).toEqual([]);
    expect(plan.steps.map((s) => `${s.group}:${s.purpose}`)).toEqual([
      '0:activate',
      '1:delegate',
      '2:transfer',
      '3:undelegate',
      '1:delegate',
      '2:transfer',
      '3:undelegate',
    ]);
    expect(steps.every((s) => s.outcome?.status === 'succeeded')).toBe(true);

    const activation = steps.find((s) => s.step.purpose === 'activate')!;
    expect(activation.step.to).toBe(fresh.address);
    expect(activation.receipt).toMatchObject({ nativeMoved: 1n, fee: 1_100_000n }); // 1 TRX creation + 0.1 TRX instead of bandwidth
    expect(fake.chain.account(fresh.address)).toBeDefined();
    expect(fake.chain.account(gasStation.address)!.balanceSun).toBe(gasBefore - 1n - 1_100_000n);

    for (const s of [fresh, existing]) {
      const [delegate, transfer, undelegate] = ['delegate', 'transfer', 'undelegate'].map(
        (p) => steps.find((x) => x.step.purpose === p && (x.step.to === s.address || x.step.sources[0] === s.address))!,
      ) as [(typeof steps)[0], (typeof steps)[0], (typeof steps)[0]];
      // Delegated at least the estimate, the same energy released.
      expect(delegate.receipt!.energy).toBeGreaterThanOrEqual(BigInt(transfer.step.params.energy!));
      expect(undelegate.receipt!.energy).toBe(delegate.receipt!.energy);
      // The transfer burnt nothing: energy from the delegation, bandwidth from the free daily allowance.
      expect(transfer.receipt).toEqual({
        swept: [{ source: s.address, amount: s.amount }],
        elsewhere: 0n,
        nativeMoved: 0n,
        fee: 0n,
        energy: 0n,
      });
      expect(await tokenBalance(s.address)).toBe(0n);
      expect(fake.chain.account(s.address)!.acquiredEnergySun).toBe(0n);
    }
    expect(await tokenBalance(destination)).toBe(fresh.amount + existing.amount);
    expect(fake.chain.resources.delegations.size).toBe(0);
    // What the policy priced covers what was burnt (activation, bandwidth), and not wildly more.
    const burnt = steps.reduce((sum, s) => sum + (s.receipt?.fee ?? 0n), 0n) + 1n;
    expect(plan.estimatedCost).toBeGreaterThanOrEqual(burnt);
    expect(plan.estimatedCost).toBeLessThanOrEqual(burnt + 400_000n);
  });

  it('skips, with the reason, a source the resources account cannot cover', async () => {
    const method = methodOf('tron-energy-delegation');
    const big = await deposit(u6('1'));
    fake.chain.resources.outsideEnergyWeightTrx *= 1000n; // the rest of the network staked far more: energy per TRX collapses
    try {
      const plan = await method.plan(request([big], newDestination()));
      expect(plan.steps).toEqual([]);
      expect(plan.skipped).toEqual([
        { address: big.address, reason: expect.stringMatching(/resources account T\w+ lacks delegatable energy/) },
      ]);
    } finally {
      fake.chain.resources.outsideEnergyWeightTrx /= 1000n;
    }
  });

  it('skips, with the reason, a source whose delegation and undelegation the resources account could not pay bandwidth for', async () => {
    // Found by the simulator: with its free bandwidth used up and no liquid TRX, the resources account could delegate
    // (free bandwidth left for one transaction) but not take the energy back: the undelegate was refused for
    // BANDWITH_ERROR after the tokens moved, and the sweep stayed running. Now the planner leaves such a source to the
    // TRX top-up.
    const method = methodOf('tron-energy-delegation');
    const src = await deposit(u6('2'));
    const acct = fake.chain.account(normalizeTronAddress(resources.address)!)!;
    const saved = { balanceSun: acct.balanceSun, freeNetUsed: acct.freeNetUsed };
    acct.balanceSun = 0n; // everything staked, nothing liquid
    acct.freeNetUsed = FREE_NET_LIMIT - 400n; // bandwidth left today for one system transaction, not two
    try {
      const plan = await method.plan(request([src], newDestination()));
      expect(plan.steps).toEqual([]);
      expect(plan.skipped).toEqual([
        {
          address: src.address,
          reason: expect.stringMatching(/resources account T\w+ lacks TRX for the bandwidth of delegating and taking back/),
          waitsFor: { wallet: normalizeTronAddress(resources.address), amount: expect.any(BigInt) },
        },
      ]);
      // With the TRX its bandwidth burns, the same source is delegated and taken back.
      acct.balanceSun = 1_000_000n;
      const funded = await method.plan(request([src], newDestination()));
      expect(funded.skipped).toEqual([]);
      expect(funded.steps.map((x) => x.purpose)).toEqual(['activate', 'delegate', 'transfer', 'undelegate']);
      expect(funded.steps.find((x) => x.purpose === 'undelegate')!.estimatedFee).toBeGreaterThan(0n);
    } finally {
      Object.assign(acct, saved);
    }
  });

  it('an OUT_OF_ENERGY receipt fails the transfer step with reason out_of_energy; no token moves; the delegation is still taken back', async () => {
    fake.chain.recoverAll();
    const method = methodOf('tron-energy-delegation');
    const src = await deposit(u6('9'));
    const destination = newDestination();
    fake.forceNextResult('OUT_OF_ENERGY'); // the next TriggerSmartContract (the transfer) runs out of energy
    const req = request([src], destination);
    const { plan, steps } = await driveSweep(adapter, method, signer, req, { tick });
    const failed = steps.at(-1)!;
    expect(failed.step.purpose).toBe('transfer');
    expect(failed.outcome).toMatchObject({ status: 'failed', reason: 'out_of_energy', final: true });
    expect(failed.receipt).toBeNull();
    expect(await tokenBalance(src.address)).toBe(src.amount);
    expect(await tokenBalance(destination)).toBe(0n);

    // The service still runs the undelegate step of a failed sweep: it builds and lands.
    const undelegate = plan.steps.find((s) => s.purpose === 'undelegate')!;
    const unsigned = (await method.build(req, undelegate, null, 0))!;
    const signed = await adapter.signTransfer(unsigned, signer);
    expect((await adapter.broadcast(signed)).status).toBe('accepted');
    await node.mine(2);
    expect((await adapter.getTransactionOutcome(signed.hash)).status).toBe('succeeded');
    expect(fake.chain.account(src.address)!.acquiredEnergySun).toBe(0n);
    // Replayed after it landed: nothing left to take back.
    expect(await method.build(req, undelegate, null, 0)).toBeNull();
  });

  it('refuses to sign a built delegation that differs from the step', async () => {
    const method = methodOf('tron-energy-delegation');
    const src = await deposit(u6('2'));
    const req = request([src], newDestination());
    const plan = await method.plan(req);
    const activate = plan.steps.find((s) => s.purpose === 'activate')!;
    const unsigned = (await method.build(req, activate, null, 0))!;
    await expect(adapter.signTransfer({ ...unsigned, request: { ...unsigned.request, amount: 1_000_000n } }, signer)).rejects.toThrow(
      /does not match the sweep step/,
    );
  });
});

describe('fake java-tron: fee_limit bounds the whole call', () => {
  it('a transfer whose fee_limit covers less energy than it needs ends OUT_OF_ENERGY even with staked energy to spare', async () => {
    const src = await deposit(u6('3'));
    fake.chain.setTrx(src.address, 0n);
    fake.chain.setStaked(src.address, { energy: 1_000_000n });
    const destination = newDestination();
    const built = (await (
      await fetch(`${fake.url}/wallet/triggersmartcontract`, {
        method: 'POST',
        body: JSON.stringify({
          owner_address: src.address,
          contract_address: evmHexToTron(usdt.address),
          function_selector: 'transfer(address,uint256)',
          parameter: `${tronToEvmHex(destination).slice(2).padStart(64, '0')}${src.amount.toString(16).padStart(64, '0')}`,
          fee_limit: 1_000_000, // 10,000 energy at 100 sun: a token transfer needs several times that
        }),
      })
    ).json()) as { transaction: { txID: string } };
    const sig = await signer.signSecp256k1Digest(src.key, getBytes(`0x${built.transaction.txID}`));
    const sent = (await (
      await fetch(`${fake.url}/wallet/broadcasttransaction`, {
        method: 'POST',
        body: JSON.stringify({ ...built.transaction, signature: [`${sig.r.slice(2)}${sig.s.slice(2)}${(27 + sig.yParity).toString(16)}`] }),
      })
    ).json()) as { result?: boolean };
    expect(sent.result).toBe(true);
    await node.mine(2);
    expect(await adapter.getTransactionOutcome(built.transaction.txID)).toMatchObject({ status: 'failed', reason: 'out_of_energy' });
    expect(await tokenBalance(src.address)).toBe(src.amount);
    expect(fake.chain.account(src.address)!.energyUsed).toBe(10_000n); // all the energy fee_limit allowed, from the stake
    expect(fake.chain.account(src.address)!.balanceSun).toBe(0n);
  });
});

describe('energy estimates', () => {
  it('come from estimateenergy where the node enables it, else from triggerconstantcontract: the same figure', async () => {
    const method = methodOf('tron-trx-topup');
    const src = await deposit(u6('5'));
    const req = request([src], newDestination());
    const calls = fake.calls.length;
    const withEstimate = await method.plan(req);
    expect(fake.calls.slice(calls)).toContain('wallet/estimateenergy');
    expect(fake.calls.slice(calls)).not.toContain('wallet/triggerconstantcontract');
    fake.chain.estimateEnergyEnabled = false;
    try {
      const fallback = await method.plan(req);
      expect(fake.calls.slice(calls)).toContain('wallet/triggerconstantcontract');
      expect(fallback.steps.map((s) => s.params.energy)).toEqual(withEstimate.steps.map((s) => s.params.energy));
      expect(BigInt(fallback.steps[0]!.params.energy!)).toBeGreaterThan(10_000n);
    } finally {
      fake.chain.estimateEnergyEnabled = true;
    }
  });
});

describe('tron-trx-topup', () => {
  it('funds each deposit with the estimated TRX (activating it), then transfers; the TRX burnt is close to the estimate', async () => {
    const method = methodOf('tron-trx-topup');
    const a = await deposit(u6('77'));
    const b = await deposit(u6('12.25'));
    // A treasury that already holds USDT (the usual case): every transfer's estimate is taken against the same state. (To
    // an empty destination only the first transfer pays for the new balance slot; the later estimates are then high.)
    const destination = newDestination();
    await fund(usdt, tronToEvmHex(destination), 1n);
    const { plan, steps } = await driveSweep(adapter, method, signer, request([a, b], destination), { tick });
    expect(plan.steps.map((s) => `${s.group}:${s.purpose}`)).toEqual(['0:fund', '1:transfer', '0:fund', '1:transfer']);
    expect(steps.every((s) => s.outcome?.status === 'succeeded')).toBe(true);
    for (const s of [a, b]) {
      const fundStep = steps.find((x) => x.step.purpose === 'fund' && x.step.to === s.address)!;
      const transfer = steps.find((x) => x.step.purpose === 'transfer' && x.step.sources[0] === s.address)!;
      expect(fundStep.receipt!.nativeMoved).toBe(fundStep.step.value);
      expect(fundStep.receipt!.fee).toBe(1_100_000n); // the fund created the account
      expect(transfer.receipt!.swept).toEqual([{ source: s.address, amount: s.amount }]);
      // Energy burnt at getEnergyFee (no stake): at most the estimate the policy priced, and close to it. The estimate is
      // what execution needs before refunds (emptying the source's balance slot refunds storage), so it is the higher.
      const estimate = transfer.step.estimatedFee;
      expect(estimate).toBeGreaterThan(0n);
      expect(transfer.receipt!.fee).toBeLessThanOrEqual(estimate);
      expect(transfer.receipt!.fee * 100n).toBeGreaterThanOrEqual(estimate * 75n);
      // The margin stays behind; the fund covered what the transfer burnt.
      expect(fake.chain.account(s.address)!.balanceSun).toBe(fundStep.step.value - transfer.receipt!.fee);
    }
    expect(await tokenBalance(destination)).toBe(a.amount + b.amount + 1n);
  });
});
