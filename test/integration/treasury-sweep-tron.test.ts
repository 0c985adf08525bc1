import { getBytes } from 'ethers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TRX } from '../../scripts/devnet/fake-java-tron/chain.js';
import { evmHexToTron } from '../../chains/tron/address.js';
import { OPERATOR_SLOT, isSweeper, type Wallet } from '../../chains/types.js';
import { claimSweepStep, listSweeps, sweepCosts } from '../../src/ledger/treasury/sweeps.js';
import { setSweepPolicy, setTreasuryDestination } from '../../src/ledger/treasury/destinations.js';
import { createNativePriceService } from '../../src/rates/native-prices.js';
import { planSweeps } from '../../src/treasury/planner.js';
import { createSweeps, driveSweeps } from '../../src/treasury/runner.js';
import { advanceSweepStep, sweepStepKind } from '../../src/treasury/step-kind.js';
import type { ChainHarnessMerchant } from '../support/chain-service-harness.js';
import { signer } from '../support/evm-tokens/scenario.js';
import { sweepRunCli } from '../support/sweep-cli.js';
import { startFakeTicker, type FakeTicker } from '../support/fake-ticker.js';
import { startTronServiceHarness, type TronServiceHarness } from '../support/tron-service-harness.js';

// TRON sweeps driven by the service: `sweep run` (the CLI, a child process) against the fake java-tron (the one allowed
// fake, scripts/devnet/fake-java-tron: Stake 2.0 delegation, activation, energy and bandwidth from TRON's documentation;
// token transfers executed on Anvil). The runner derives the resources account before asking the energy method whether
// it is available, delegates the estimated energy, transfers with it and takes it back; the energy is taken back even
// when the transfer fails (OUT_OF_ENERGY); the sources the stake cannot cover are swept with the TRX top-up instead.
let h: TronServiceHarness;
let ticker: FakeTicker;
let gasStation: Wallet;
let resources: Wallet;
let destSeq = 0;
const u6 = (n: number) => BigInt(Math.round(n * 1_000_000));
const newTreasury = () => evmHexToTron(`0x${(0xd00000 + ++destSeq).toString(16).padStart(40, '0')}`);

/** Stake 2.0 through the wallet API, as an operator would: freezebalancev2 for ENERGY, signed by the account. */
async function stakeForEnergy(wallet: Wallet, sun: bigint): Promise<void> {
  const post = async (path: string, body: unknown) =>
    (await (await fetch(`${h.fake.url}/${path}`, { method: 'POST', body: JSON.stringify(body) })).json()) as Record<string, unknown>;
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

beforeAll(async () => {
  h = await startTronServiceHarness({ extraEnv: { ROLES: 'api,watcher' } });
  ticker = await startFakeTicker({ coinbaseRates: { TRX: { USDT: '0.25', USDC: '0.25' } } });
  if (!isSweeper(h.adapter)) throw new Error('the TRON adapter is not a Sweeper');
  // Derived on a separate adapter object than the CLI's: the child process must derive the resources account itself.
  gasStation = await h.adapter.deriveOperatorWallet(signer, OPERATOR_SLOT.gasStation);
  resources = await h.adapter.deriveOperatorWallet(signer, OPERATOR_SLOT.resources);
  h.fake.chain.setTrx(gasStation.address, 10_000n * TRX);
  h.fake.chain.setTrx(resources.address, 200_000n * TRX);
  await stakeForEnergy(resources, 100_000n * TRX);
  await setSweepPolicy(h.t.db, { network: 'tron', mode: 'test', token: 'USDT', minAmountBase: 1_000_000n, maxFeeBps: 5000, actor: 'test' });
}, 180_000);
afterAll(async () => {
  await ticker?.close();
  await h?.close();
});

const sweepRun = (merchantId: string) => sweepRunCli(h.env, ticker.url, merchantId, { PAYOUT_POLL_MS: '100' });

/** A merchant with a treasury and one paid session per amount, every deposit final (credited and confirmed). */
async function fundedMerchant(
  name: string,
  amounts: string[],
): Promise<{ shop: ChainHarnessMerchant; deposits: string[]; treasury: string }> {
  const shop = await h.newMerchant(name);
  const treasury = newTreasury();
  await setTreasuryDestination(h.t.db, { merchantId: shop.id, network: 'tron', mode: 'test', treasuryAddress: treasury, actor: 'test' });
  const deposits: string[] = [];
  for (const amount of amounts) {
    const s = await h.paidSession(shop, { amount });
    await h.until(async () => {
      const rows = await h.t.db.selectFrom('deposits').select('status').where('session_id', '=', s.id).execute();
      return rows.length > 0 && rows.every((r) => r.status === 'confirmed') ? true : undefined;
    }, 60_000);
    const row = await h.t.db
      .selectFrom('payment_sessions')
      .select(['deposit_address', 'token'])
      .where('id', '=', s.id)
      .executeTakeFirstOrThrow();
    // The planner reads balances at the solidified height (wallet API), which may trail the JSON-RPC confirmations the
    // deposit was credited at: wait until the payment is final there too, as an operator's next sweep would.
    const tron = h.service.adapters.require('tron', 'test');
    if (!isSweeper(tron)) throw new Error('the TRON adapter is not a Sweeper');
    await h.until(async () => {
      const [balance] = await tron.finalTokenBalances(row.token as 'USDT' | 'USDC', [row.deposit_address!]);
      return balance! > 0n ? true : undefined;
    }, 60_000);
    deposits.push(row.deposit_address!);
  }
  return { shop, deposits, treasury };
}

const planner = () => ({
  db: h.t.db,
  adapters: h.service.adapters,
  keys: signer,
  prices: createNativePriceService({ sources: ['coinbase'], coinbaseBaseUrl: ticker.url, timeoutMs: 2000, cacheTtlMs: 0 }),
});

describe('sweep run on TRON', () => {
  it('tron-energy-delegation: activates, delegates, transfers with the energy, takes it back; the ledger equals the chain', async () => {
    const { shop, deposits, treasury } = await fundedMerchant('Energy', ['30.00', '12.50']);
    const trx = (w: Wallet) => h.fake.chain.account(w.address)!.balanceSun;
    const [gasBefore, resBefore] = [trx(gasStation), trx(resources)];
    const r = await sweepRun(shop.id);
    expect(r.code, r.err).toBe(0);
    const [sweep] = await listSweeps(h.t.db, { merchantId: shop.id, limit: 5 });
    expect(sweep).toMatchObject({ status: 'completed', method: 'tron-energy-delegation', swept_base: u6(42.5), planned_base: u6(42.5) });
    // Per address: activate (group 0), delegate (1), transfer (2), undelegate (3), every one landed.
    expect(sweep!.steps.map((s) => `${s.group_no}:${s.purpose}:${s.status}`).sort()).toEqual(
      ['0:activate', '0:activate', '1:delegate', '1:delegate', '2:transfer', '2:transfer', '3:undelegate', '3:undelegate'].map(
        (x) => `${x}:succeeded`,
      ),
    );
    for (const [i, d] of deposits.entries()) {
      const moved = await h.transfers('USDT', d, treasury);
      expect(moved.map((m) => m.amount)).toEqual([i === 0 ? u6(30) : u6(12.5)]); // one movement per address
      expect(sweep!.sources.find((s) => s.address === d)).toMatchObject({ state: 'swept', swept_base: moved[0]!.amount });
      // The energy is back with the resources account; the deposit burnt no TRX for it (it holds the 1 sun activation).
      expect(h.fake.chain.account(d)!.acquiredEnergySun).toBe(0n);
      expect(h.fake.chain.account(d)!.balanceSun).toBe(1n);
    }
    expect(h.fake.chain.resources.delegations.size).toBe(0);
    // The fees the ledger recorded are the TRX the operator's accounts burnt: the gas station's (activation fees; the
    // 1 sun it sent to each address is value, not fee) and the resources account's (bandwidth of delegate/undelegate).
    const burnt = gasBefore - trx(gasStation) - 2n + (resBefore - trx(resources));
    expect(burnt).toBeGreaterThan(0n);
    expect(sweep!.actual_fee).toBe(burnt);
    const costs = await sweepCosts(h.t.db, {
      since: new Date(Date.now() - 3_600_000),
      until: new Date(Date.now() + 60_000),
      merchantId: shop.id,
    });
    expect(costs[0]!.swept_base_by_token).toEqual({ USDT: String(u6(42.5)) });
  }, 300_000);

  it('a transfer that runs OUT_OF_ENERGY: the energy is still taken back, the sweep fails, the address is swept next time', async () => {
    const { shop, deposits, treasury } = await fundedMerchant('Out of energy', ['9.00']);
    h.fake.forceNextResult('OUT_OF_ENERGY'); // the next TriggerSmartContract (the transfer) runs out of energy
    const r = await sweepRun(shop.id);
    expect(r.code).not.toBe(0);
    const [failed] = await listSweeps(h.t.db, { merchantId: shop.id, limit: 5 });
    expect(failed!.status).toBe('failed');
    expect(Object.fromEntries(failed!.steps.map((s) => [s.purpose, s.status]))).toEqual({
      activate: 'succeeded',
      delegate: 'succeeded',
      transfer: 'failed',
      undelegate: 'succeeded',
    });
    expect(failed!.steps.find((s) => s.purpose === 'transfer')!.failure_reason).toMatch(/out_of_energy/);
    expect(h.fake.chain.account(deposits[0]!)!.acquiredEnergySun).toBe(0n);
    expect(h.fake.chain.resources.delegations.size).toBe(0);
    expect(failed!.sources[0]).toMatchObject({ state: 'failed', swept_base: null });
    expect(await h.transfers('USDT', deposits[0]!, treasury)).toEqual([]);

    // Still sweepable: the next run sweeps it (no activation now), once.
    const again = await sweepRun(shop.id);
    expect(again.code, again.err).toBe(0);
    const [done] = await listSweeps(h.t.db, { merchantId: shop.id, limit: 1 });
    expect(done!.id).not.toBe(failed!.id);
    expect(done).toMatchObject({ status: 'completed', swept_base: u6(9) });
    expect(done!.steps.map((s) => s.purpose)).not.toContain('activate');
    expect((await h.transfers('USDT', deposits[0]!, treasury)).map((m) => m.amount)).toEqual([u6(9)]);
  }, 300_000);

  it('sources the stake cannot cover are planned with tron-trx-topup instead, and swept', async () => {
    const { shop, deposits, treasury } = await fundedMerchant('Fallback', ['40.00']);
    h.fake.chain.resources.outsideEnergyWeightTrx *= 1000n; // the rest of the network staked far more: energy per TRX collapses
    try {
      const plan = await planSweeps(planner(), { merchantId: shop.id });
      expect(plan.skipped).toEqual([]);
      expect(plan.batches.map((b) => [b.plan.method, b.request.sources.map((s) => s.address)])).toEqual([['tron-trx-topup', deposits]]);
      const r = await sweepRun(shop.id);
      expect(r.code, r.err).toBe(0);
      const [sweep] = await listSweeps(h.t.db, { merchantId: shop.id, limit: 5 });
      expect(sweep).toMatchObject({ status: 'completed', method: 'tron-trx-topup', swept_base: u6(40) });
      expect(sweep!.steps.map((s) => s.purpose)).toEqual(['fund', 'transfer']);
      expect((await h.transfers('USDT', deposits[0]!, treasury)).map((m) => m.amount)).toEqual([u6(40)]);
      expect(sweep!.actual_fee).toBeGreaterThan(0n);
    } finally {
      h.fake.chain.resources.outsideEnergyWeightTrx /= 1000n;
    }
  }, 300_000);

  it('a run that looked before another run sent the top-up does not skip it (now not needed): it is followed, confirmed and journaled', async () => {
    const { shop, deposits } = await fundedMerchant('Twin runs', ['30.00']);
    h.fake.chain.resources.outsideEnergyWeightTrx *= 1000n; // no energy to delegate: the TRX top-up
    try {
      const plan = await planSweeps(planner(), { merchantId: shop.id });
      expect(plan.batches.map((b) => b.plan.method)).toEqual(['tron-trx-topup']);
      const [sweep] = await createSweeps(h.t.db, plan.batches);
      const fundStep = await h.t.db
        .selectFrom('sweep_steps')
        .select('id')
        .where('sweep_id', '=', sweep!.id)
        .where('purpose', '=', 'fund')
        .executeTakeFirstOrThrow();
      const deps = { db: h.t.db, adapters: h.service.adapters, signer, pollMs: 100, stuckAfterMs: 600_000, feeBumpPercent: 25 };
      // Run B (the worker's pass) claims the step and has seen no attempt yet; run A (the CLI's drive) signs and sends the
      // top-up, which lands.
      const staleJob = (await claimSweepStep(h.t.db, fundStep.id))!;
      expect((await advanceSweepStep(deps, fundStep.id)).kind).toBe('wait');
      await h.until(async () => ((h.fake.chain.account(deposits[0]!)?.balanceSun ?? 0n) > 0n ? true : undefined), 60_000);
      // Run B now builds: the address holds the TRX, so the step is not needed any more. It must not be skipped.
      const tron = h.service.adapters.require('tron', 'test');
      if (!isSweeper(tron)) throw new Error('the TRON adapter is not a Sweeper');
      const b = await sweepStepKind(deps).prepare(tron, staleJob, null);
      expect(b.kind).toBe('wait');
      const mid = await h.t.db.selectFrom('sweep_steps').select('status').where('id', '=', fundStep.id).executeTakeFirstOrThrow();
      expect(mid.status).toBe('processing');
      expect(await driveSweeps(deps, { timeoutMs: 120_000 })).toBe(0);
      const [done] = await listSweeps(h.t.db, { merchantId: shop.id, limit: 5 });
      expect(done).toMatchObject({ status: 'completed', swept_base: u6(30) });
      const attempts = await h.t.db
        .selectFrom('sweep_step_attempts')
        .select(['state', 'tx_hash'])
        .where('step_id', '=', fundStep.id)
        .execute();
      expect(attempts.map((a) => a.state)).toEqual(['confirmed']);
      // The top-up's TRX is journaled: what left the gas station reached the deposit address in the books.
      const legs = await h.t.db
        .selectFrom('journal_entries as e')
        .innerJoin('journal_legs as l', 'l.entry_id', 'e.id')
        .select(['l.account', 'l.amount'])
        .where('e.tx_hash', '=', attempts[0]!.tx_hash)
        .execute();
      expect(
        legs.some((l) => l.account.endsWith(`:${h.adapter.normalizeAddress(deposits[0]!) ?? deposits[0]!}`) && BigInt(l.amount) > 0n),
      ).toBe(true);
    } finally {
      h.fake.chain.resources.outsideEnergyWeightTrx /= 1000n;
    }
  }, 300_000);

  it('with the fee policy too strict for the TRX top-up, those sources wait, reported with both methods’ reasons', async () => {
    const { shop, deposits } = await fundedMerchant('Fallback too dear', ['2.00']);
    h.fake.chain.resources.outsideEnergyWeightTrx *= 1000n;
    try {
      await setSweepPolicy(h.t.db, {
        network: 'tron',
        mode: 'test',
        token: 'USDT',
        minAmountBase: 1_000_000n,
        maxFeeBps: 100,
        actor: 'test',
      });
      const plan = await planSweeps(planner(), { merchantId: shop.id });
      expect(plan.batches).toEqual([]);
      expect(plan.skipped.map((s) => [s.address, s.reason])).toEqual([
        [
          deposits[0],
          expect.stringMatching(
            // Whichever method got furthest (energy may or may not cover it, depending on what earlier sweeps left of
            // the stake), the batch is refused by the fee policy and the address waits.
            /fee share too high: \d+ bps of the batch > 100 bps allowed/,
          ),
        ],
      ]);
    } finally {
      h.fake.chain.resources.outsideEnergyWeightTrx /= 1000n;
      await setSweepPolicy(h.t.db, {
        network: 'tron',
        mode: 'test',
        token: 'USDT',
        minAmountBase: 1_000_000n,
        maxFeeBps: 5000,
        actor: 'test',
      });
    }
  }, 300_000);
});
