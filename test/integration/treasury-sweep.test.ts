import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { Wallet } from 'ethers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listSweeps, sweepCosts } from '../../src/ledger/treasury/sweeps.js';
import { metrics } from '../../src/metrics/registry.js';
import { planSweeps } from '../../src/treasury/planner.js';
import { createSweeps, driveSweeps } from '../../src/treasury/runner.js';
import { backgroundMiner, transfersFrom } from '../support/chain-watch.js';
import { fund, payFrom, walletAt } from '../support/evm-tokens/scenario.js';
import { startFakeTicker, type FakeTicker } from '../support/fake-ticker.js';
import { startServiceHarness, type ServiceHarness } from '../support/service-harness.js';
import {
  ETH_PRICES,
  confirmedDeposits,
  depositAddressOf,
  gasStation,
  permissivePolicy,
  sweepDeps,
  tokenBalance,
  treasuryFor,
} from '../support/sweep-service.js';

// Sweeping end to end on Anvil (the Ethereum stand-in, test mode) with the `evm-gas-topup` method: sessions paid by
// real transfers and confirmed by the watcher, the planner reading final balances, sweeps persisted and driven
// through the outbound engine, the ledger compared with the chain.
let h: ServiceHarness;
let ticker: FakeTicker;
let miner: { stop(): void };
let deps: ReturnType<typeof sweepDeps>;

beforeAll(async () => {
  h = await startServiceHarness({
    // A chain without EIP-7702 (pre-Prague): the sweeps here take the gas top-up path.
    anvilArgs: ['--hardfork', 'cancun'],
    extraEnv: { ROLES: 'api,watcher' },
  });
  ticker = await startFakeTicker({ coinbaseRates: ETH_PRICES });
  deps = sweepDeps(h, ticker);
  await h.node.rpc('anvil_setBalance', [await gasStation(h), '0x56bc75e2d63100000']); // 100 ETH
  miner = backgroundMiner(h.node, 150);
}, 120_000);
afterAll(async () => {
  miner?.stop();
  await ticker?.close();
  await h?.close();
});

const USDT = (n: number) => BigInt(n) * 1_000_000n;

/** The value of a counter series of this process's registry (0 when absent). */
async function counter(name: string, labels: Record<string, string>): Promise<number> {
  const m = metrics.prom.getSingleMetric(name);
  if (!m) return 0;
  const { values } = await m.get();
  return values.find((v) => Object.entries(labels).every(([k, x]) => v.labels[k] === x))?.value ?? 0;
}

describe('sweep to the treasury', () => {
  it('tops the refunds hot wallet up to its float first, sends the rest to the treasury, and the ledger equals the chain', async () => {
    const shop = await h.newMerchant('Sweeper');
    const treasury = Wallet.createRandom().address.toLowerCase();
    await permissivePolicy(h);
    await treasuryFor(h, shop, treasury, 2500n); // float: 25.00 USDT on the refunds hot wallet
    const sessions = [];
    for (const amount of ['30.00', '20.00', '15.00']) sessions.push(await h.paidSession(shop, { amount }));
    for (const s of sessions) await confirmedDeposits(h, s.id);
    const deposits = await Promise.all(sessions.map((s) => depositAddressOf(h, s.id)));

    const plan = await planSweeps(deps.planner, { merchantId: shop.id });
    expect(plan.skipped).toEqual([]);
    const byKind = Object.fromEntries(plan.batches.map((b) => [b.destinationKind, b]));
    // Largest first until the float is covered: the 30 goes to the hot wallet, 20 and 15 to the treasury.
    expect(byKind.hot_wallet!.request.sources.map((s) => s.amount)).toEqual([USDT(30)]);
    expect(byKind.hot_wallet!.request.destination).toBe(shop.hotWallet.toLowerCase());
    expect(byKind.treasury!.request.sources.map((s) => s.amount).sort()).toEqual([USDT(15), USDT(20)]);
    expect(byKind.treasury!.request.destination).toBe(treasury);
    for (const b of plan.batches) {
      expect(b.plan.method).toBe('evm-gas-topup');
      expect(b.estimatedCost).toBeGreaterThan(0n);
      expect(b.feeShareBps).toBeLessThanOrEqual(5000);
    }

    const completedBefore = await counter('stablepay_sweeps_total', {
      network: 'ethereum',
      mode: 'test',
      token: 'USDT',
      status: 'completed',
    });
    const sweptBefore = await counter('stablepay_swept_base_units_total', { network: 'ethereum', mode: 'test', token: 'USDT' });
    const feesBefore = await counter('stablepay_sweep_fees_native_base_units_total', { network: 'ethereum', mode: 'test' });
    const created = await createSweeps(h.t.db, plan.batches);
    expect(created).toHaveLength(2);
    // Persisted before anything is sent: every step pending, every source planned.
    const before = await listSweeps(h.t.db, { merchantId: shop.id, limit: 10 });
    expect(before.flatMap((s) => s.steps.map((st) => st.status)).every((x) => x === 'pending')).toBe(true);

    expect(await driveSweeps(deps.engine, { timeoutMs: 90_000 })).toBe(0);
    const after = await listSweeps(h.t.db, { merchantId: shop.id, limit: 10 });
    expect(after.map((s) => s.status)).toEqual(['completed', 'completed']);

    expect(await tokenBalance(h, 'USDT', shop.hotWallet)).toBe(USDT(30));
    expect(await tokenBalance(h, 'USDT', treasury)).toBe(USDT(35));
    for (const d of deposits) {
      expect(await tokenBalance(h, 'USDT', d)).toBe(0n);
      const moved = await transfersFrom(h.node, h.tokens.USDT.address, d);
      expect(moved).toHaveLength(1); // exactly one movement per address
      const source = after.flatMap((s) => s.sources).find((x) => x.address === d)!;
      expect(source).toMatchObject({ state: 'swept', swept_base: moved[0]!.amount, tx_hash: moved[0]!.tx });
    }
    // Each transfer step has its tx hash; fees recorded and reported by the cost report.
    for (const s of after) {
      for (const st of s.steps.filter((x) => x.purpose === 'transfer')) expect(st.tx_hash).toMatch(/^0x[0-9a-f]{64}$/);
      expect(s.actual_fee).toBeGreaterThan(0n);
      expect(s.swept_base).toBe(s.planned_base);
    }
    const costs = await sweepCosts(h.t.db, {
      since: new Date(Date.now() - 3_600_000),
      until: new Date(Date.now() + 60_000),
      merchantId: shop.id,
    });
    expect(costs).toHaveLength(1);
    expect(costs[0]!.fee_base).toBe(after.reduce((t, s) => t + s.actual_fee, 0n));
    expect(costs[0]!.swept_base_by_token).toEqual({ USDT: String(USDT(65)) });

    // Metrics: two sweeps completed, 65 USDT swept, fees counted (bounded labels: network, mode, token, status).
    expect(await counter('stablepay_sweeps_total', { network: 'ethereum', mode: 'test', token: 'USDT', status: 'completed' })).toBe(
      completedBefore + 2,
    );
    expect(await counter('stablepay_swept_base_units_total', { network: 'ethereum', mode: 'test', token: 'USDT' })).toBe(
      sweptBefore + 65_000_000,
    );
    expect(await counter('stablepay_sweep_fees_native_base_units_total', { network: 'ethereum', mode: 'test' })).toBeGreaterThan(
      feesBefore,
    );

    // Nothing left: the next plan has nothing to move.
    expect((await planSweeps(deps.planner, { merchantId: shop.id })).batches).toEqual([]);
  }, 240_000);

  it('sweeps to the hot wallet when no treasury is set', async () => {
    const shop = await h.newMerchant('No treasury');
    await permissivePolicy(h);
    const s = await h.paidSession(shop, { amount: '12.00' });
    await confirmedDeposits(h, s.id);
    const plan = await planSweeps(deps.planner, { merchantId: shop.id });
    expect(plan.batches.map((b) => [b.destinationKind, b.request.destination])).toEqual([['hot_wallet', shop.hotWallet.toLowerCase()]]);
    await createSweeps(h.t.db, plan.batches);
    expect(await driveSweeps(deps.engine, { timeoutMs: 90_000 })).toBe(0);
    expect(await tokenBalance(h, 'USDT', shop.hotWallet)).toBe(USDT(12));
  }, 240_000);

  it('a deposit arriving between plan and sweep stays on the address and is swept next time, never double counted', async () => {
    const shop = await h.newMerchant('Late deposit');
    const treasury = Wallet.createRandom().address.toLowerCase();
    await permissivePolicy(h);
    await treasuryFor(h, shop, treasury);
    const s = await h.paidSession(shop, { amount: '12.00' });
    await confirmedDeposits(h, s.id);
    const address = await depositAddressOf(h, s.id);
    const plan = await planSweeps(deps.planner, { merchantId: shop.id });
    expect(plan.batches[0]!.request.sources.map((x) => x.amount)).toEqual([USDT(12)]);

    // Another 5 USDT lands on the address after planning (a customer paying twice).
    const payer = walletAt(90, h.node.provider);
    await h.node.rpc('anvil_setBalance', [payer.address, '0xde0b6b3a7640000']);
    await fund(h.tokens.USDT, payer.address, USDT(5));
    await payFrom(payer, h.tokens.USDT, address, USDT(5));

    await createSweeps(h.t.db, plan.batches);
    expect(await driveSweeps(deps.engine, { timeoutMs: 90_000 })).toBe(0);
    expect(await tokenBalance(h, 'USDT', treasury)).toBe(USDT(12));
    expect(await tokenBalance(h, 'USDT', address)).toBe(USDT(5)); // the late deposit waits on the address

    // Once the watcher has it final, the next sweep takes exactly it.
    await h.until(async () => {
      const rows = await h.t.db.selectFrom('deposits').select(['status', 'amount_base']).where('to_address', '=', address).execute();
      return rows.length === 2 && rows.every((r) => r.status === 'confirmed') ? true : undefined;
    }, 60_000);
    const next = await planSweeps(deps.planner, { merchantId: shop.id });
    expect(next.batches.map((b) => b.request.sources.map((x) => x.amount))).toEqual([[USDT(5)]]);
    await createSweeps(h.t.db, next.batches);
    expect(await driveSweeps(deps.engine, { timeoutMs: 90_000 })).toBe(0);
    expect(await tokenBalance(h, 'USDT', treasury)).toBe(USDT(17));
    expect(await tokenBalance(h, 'USDT', address)).toBe(0n);
    // The ledger: what left the address (per sweep source) equals what arrived on it, to the base unit.
    const swept = await h.t.db
      .selectFrom('sweep_sources')
      .select('swept_base')
      .where('address', '=', address)
      .where('state', '=', 'swept')
      .execute();
    expect(swept.map((r) => r.swept_base)).toEqual([USDT(12), USDT(5)]);
    const moved = await transfersFrom(h.node, h.tokens.USDT.address, address);
    expect(moved.map((m) => m.amount)).toEqual([USDT(12), USDT(5)]);
    expect((await planSweeps(deps.planner, { merchantId: shop.id })).batches).toEqual([]);
  }, 300_000);
});

describe('policy', () => {
  it('skips and reports an address below the minimum and a batch whose fee share is too high', async () => {
    const shop = await h.newMerchant('Small change');
    // Default policy for USDC: minimum 10 tokens, at most 100 bps on fees.
    const small = await h.paidSession(shop, { amount: '4.00', token: 'USDC' });
    const mid = await h.paidSession(shop, { amount: '11.00', token: 'USDC' });
    await confirmedDeposits(h, small.id);
    await confirmedDeposits(h, mid.id);
    // ETH at 3,000,000 USDC makes the top-up sweep of 11 USDC cost far more than 1 %.
    ticker.options = { coinbaseRates: { ETH: { USDT: '3000000', USDC: '3000000' } } };
    try {
      const plan = await planSweeps(deps.planner, { merchantId: shop.id, token: 'USDC' });
      expect(plan.batches).toEqual([]);
      const reasons = Object.fromEntries(plan.skipped.map((s) => [s.address, s.reason]));
      expect(reasons[await depositAddressOf(h, small.id)]).toMatch(/^below the minimum: 4000000 < 10000000/);
      expect(reasons[await depositAddressOf(h, mid.id)]).toMatch(/^fee share too high: \d+ bps of the batch > 100 bps allowed/);
      expect(await createSweeps(h.t.db, plan.batches)).toEqual([]);
    } finally {
      ticker.options = { coinbaseRates: ETH_PRICES };
    }
    // Whatever the price, the 4 USDC address stays below the minimum and is reported again.
    const again = await planSweeps(deps.planner, { merchantId: shop.id, token: 'USDC' });
    const smallAddress = await depositAddressOf(h, small.id);
    expect(again.skipped.find((s) => s.address === smallAddress)?.reason).toMatch(/^below the minimum/);
    expect(again.batches.flatMap((b) => b.request.sources.map((x) => x.address))).not.toContain(smallAddress);
  }, 240_000);

  it('without a native price nothing is planned: the batch is reported as not priceable', async () => {
    const shop = await h.newMerchant('No price');
    await permissivePolicy(h);
    const s = await h.paidSession(shop, { amount: '12.00' });
    await confirmedDeposits(h, s.id);
    ticker.options = { coinbaseRates: {} };
    try {
      const plan = await planSweeps(deps.planner, { merchantId: shop.id });
      expect(plan.batches).toEqual([]);
      expect(plan.skipped.map((x) => x.reason)).toEqual([expect.stringMatching(/^fees cannot be priced: no ETH price/)]);
    } finally {
      ticker.options = { coinbaseRates: ETH_PRICES };
    }
  }, 240_000);
});

describe('operator commands', () => {
  const run = promisify(execFile);
  async function cli(args: string[], extra: Record<string, string> = {}): Promise<{ code: number; out: string; err: string }> {
    try {
      const r = await run('node', ['--import', 'tsx', 'src/cli/index.ts', ...args], {
        env: {
          ...process.env,
          ...h.env,
          LOG_LEVEL: 'silent',
          NATIVE_PRICE_SOURCES: 'coinbase',
          RATE_COINBASE_BASE_URL: ticker.url,
          ...extra,
        },
      });
      return { code: 0, out: r.stdout, err: r.stderr };
    } catch (e) {
      const x = e as { code: number; stdout: string; stderr: string };
      return { code: x.code, out: x.stdout, err: x.stderr };
    }
  }

  it('sweep plan (JSON and table) writes nothing; sweep run exits 0 and sweep list shows the tx hashes', async () => {
    const shop = await h.newMerchant('CLI sweeps');
    await permissivePolicy(h);
    const s = await h.paidSession(shop, { amount: '9.00' });
    await confirmedDeposits(h, s.id);
    const address = await depositAddressOf(h, s.id);

    const json = await cli(['sweep', 'plan', '--merchant', shop.id, '--json']);
    expect(json.code, json.err).toBe(0);
    const plan = JSON.parse(json.out);
    expect(plan.batches).toHaveLength(1);
    expect(plan.batches[0]).toMatchObject({
      network: 'ethereum',
      mode: 'test',
      token: 'USDT',
      method: 'evm-gas-topup',
      destination_kind: 'hot_wallet',
      addresses: 1,
      amount: '9.00',
      transactions_by_purpose: { fund: 1, transfer: 1 },
    });
    expect(BigInt(plan.batches[0].estimated_fee_native_base)).toBeGreaterThan(0n);
    expect(plan.batches[0].fee_share_bps).toBeGreaterThanOrEqual(0);
    const table = await cli(['sweep', 'plan', '--merchant', shop.id]);
    expect(table.code, table.err).toBe(0);
    expect(table.out).toMatch(/ethereum\s+test\s+USDT\s+hot_wallet\s+evm-gas-topup\s+1\s+9\.00\s/);
    expect(await h.t.db.selectFrom('sweeps').select('id').where('merchant_id', '=', shop.id).execute()).toEqual([]);

    const ran = await cli(['sweep', 'run', '--merchant', shop.id, '--wait-seconds', '90', '--json']);
    expect(ran.code, ran.err).toBe(0);
    expect(JSON.parse(ran.out).created.map((x: { status: string }) => x.status)).toEqual(['completed']);
    const listed = await cli(['sweep', 'list', '--merchant', shop.id]);
    expect(listed.code).toBe(0);
    const [sweep] = JSON.parse(listed.out);
    const moved = await transfersFrom(h.node, h.tokens.USDT.address, address);
    expect(sweep.sources).toEqual([{ address, planned_base: '9000000', swept_base: '9000000', state: 'swept', tx_hash: moved[0]!.tx }]);
    expect(sweep.steps.find((x: { purpose: string }) => x.purpose === 'transfer').tx_hash).toBe(moved[0]!.tx);
  }, 240_000);

  it('sweep run exits 1 while a sweep cannot proceed (the gas station is empty); the next run resumes the same sweep', async () => {
    const shop = await h.newMerchant('No gas');
    await permissivePolicy(h);
    const s = await h.paidSession(shop, { amount: '8.00' });
    await confirmedDeposits(h, s.id);
    const station = await gasStation(h);
    const balance = await h.node.rpc<string>('eth_getBalance', [station, 'latest']);
    await h.node.rpc('anvil_setBalance', [station, '0x0']);
    let sweepId: string;
    try {
      const ran = await cli(['sweep', 'run', '--merchant', shop.id, '--wait-seconds', '5', '--json']);
      expect(ran.code).toBe(1);
      expect(ran.err).toMatch(/1 sweep\(s\) did not complete: swp_\w+ running/);
      // It stopped at once (not after --wait-seconds) and names the gas station with its balance and the need.
      expect(JSON.parse(ran.out).waiting_for_fee_money).toEqual([
        expect.objectContaining({ network: 'ethereum', mode: 'test', role: 'gas_station', balance: '0', token: 'ETH' }),
      ]);
      expect(JSON.parse(ran.out).waiting_for_fee_money[0].address.toLowerCase()).toBe(station.toLowerCase());
      const [sweep] = await listSweeps(h.t.db, { merchantId: shop.id, limit: 1 });
      sweepId = sweep!.id;
      // Nothing moved: the top-up waits for the operator to fund the gas station (as a charger out of gas does).
      expect(sweep!.sources.map((x) => x.state)).toEqual(['planned']);
      expect(await tokenBalance(h, 'USDT', shop.hotWallet)).toBe(0n);
    } finally {
      await h.node.rpc('anvil_setBalance', [station, balance]);
    }
    const again = await cli(['sweep', 'run', '--merchant', shop.id, '--wait-seconds', '90', '--json']);
    expect(again.code, again.err + again.out).toBe(0);
    const report = JSON.parse(again.out);
    expect(report.created).toEqual([]);
    expect(report.resumed.map((x: { id: string; status: string }) => [x.id, x.status])).toEqual([[sweepId, 'completed']]);
    expect(await tokenBalance(h, 'USDT', shop.hotWallet)).toBe(USDT(8));
    expect(await transfersFrom(h.node, h.tokens.USDT.address, await depositAddressOf(h, s.id))).toHaveLength(1);
    // Bytes refused and signed again identically (same nonce, same fees) are one attempt row, not a duplicate.
    const fund = (await listSweeps(h.t.db, { merchantId: shop.id, limit: 1 }))[0]!.steps.find((x) => x.purpose === 'fund')!;
    const rows = await h.t.db.selectFrom('sweep_step_attempts').select(['tx_hash', 'state']).where('tx_hash', '=', fund.tx_hash!).execute();
    expect(rows).toEqual([{ tx_hash: fund.tx_hash, state: 'confirmed' }]);
  }, 240_000);
});
