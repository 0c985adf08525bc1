import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TRX } from '../../scripts/devnet/fake-java-tron/chain.js';
import { evmHexToTron, tronBase58 } from '../../chains/tron/address.js';
import { isSweeper } from '../../chains/types.js';
import { listSweeps } from '../../src/ledger/treasury/sweeps.js';
import { setTreasuryDestination } from '../../src/ledger/treasury/destinations.js';
import { createNativePriceService } from '../../src/rates/native-prices.js';
import { listOperatorWallets } from '../../src/treasury/operator-wallets.js';
import { planSweeps } from '../../src/treasury/planner.js';
import { advanceRunningSweeps, createSweeps } from '../../src/treasury/runner.js';
import { signer } from '../support/evm-tokens/scenario.js';
import type { FakeTicker } from '../support/fake-ticker.js';
import { sweepRunCli } from '../support/sweep-cli.js';
import { tronSweepSetup } from '../support/sweep-setup.js';
import type { ChainHarnessMerchant } from '../support/chain-service-harness.js';
import { startTronServiceHarness, type TronServiceHarness } from '../support/tron-service-harness.js';

// A TRON gas station without TRX (docs/treasury.md, "Fee money"): the planner skips what it cannot fund and names the
// gas station with its address and shortfall; a sweep already running waits for the TRX, paced like a refusal (it used
// to rebuild its activation on every pass: about 600 wallet-API calls in 8 s); `sweep run` exits at once with one line
// per wallet short of fee money; and the worker role, with no sweep schedule, finishes the sweep once the TRX arrives.

let h: TronServiceHarness;
let ticker: FakeTicker;
let station: string;
let sweepId: string;
let shop: ChainHarnessMerchant;

beforeAll(async () => {
  h = await startTronServiceHarness({ extraEnv: { ROLES: 'api,watcher', SWEEP_TICK_MS: '300' } });
  ({ ticker, station } = await tronSweepSetup(h, { stationSun: 1_000n * TRX }));
}, 180_000);
afterAll(async () => {
  await ticker?.close();
  await h?.close();
});

const prices = () => createNativePriceService({ sources: ['coinbase'], coinbaseBaseUrl: ticker.url, timeoutMs: 2000, cacheTtlMs: 0 });
const planner = () => ({ db: h.t.db, adapters: h.service.adapters, keys: signer, prices: prices() });

/** A merchant with a treasury and one paid session whose deposit is final on the wallet API. */
async function paidMerchant(name: string, treasury: string): Promise<ChainHarnessMerchant> {
  const m = await h.newMerchant(name);
  await setTreasuryDestination(h.t.db, {
    merchantId: m.id,
    network: 'tron',
    mode: 'test',
    treasuryAddress: evmHexToTron(treasury),
    actor: 'test',
  });
  const s = await h.paidSession(m, { amount: '6.00' });
  const tron = h.service.adapters.require('tron', 'test');
  if (!isSweeper(tron)) throw new Error('not a Sweeper');
  await h.until(async () => ((await tron.finalTokenBalances('USDT', [s.depositAddress]))[0]! > 0n ? true : undefined), 60_000);
  return m;
}

describe('a TRON gas station without TRX', () => {
  it('the planner names the gas station and its shortfall; a running sweep waits for the TRX, paced', async () => {
    shop = await paidMerchant('Empty station', '0x00000000000000000000000000000000000fee01');
    const other = await paidMerchant('Planned while empty', '0x00000000000000000000000000000000000fee02');
    // Planned while the gas station had TRX: the sweep's first step activates the deposit address from it.
    const plan = await planSweeps(planner(), { merchantId: shop.id });
    const [sweep] = await createSweeps(h.t.db, plan.batches);
    expect(sweep).toBeDefined();
    sweepId = sweep!.id;
    h.fake.chain.setTrx(station, 0n);

    // 4 s of passes 100 ms apart: the activation is built once, then waits (5 s) like a refused broadcast.
    const deps = { db: h.t.db, adapters: h.service.adapters, signer, pollMs: 100, stuckAfterMs: 600_000, feeBumpPercent: 25 };
    const before = h.fake.calls.length;
    const until = Date.now() + 4_000;
    while (Date.now() < until) {
      expect(await advanceRunningSweeps(deps)).toBe(1);
      await new Promise((r) => setTimeout(r, 100));
    }
    const calls = h.fake.calls.slice(before);
    expect(calls.filter((p) => p === 'wallet/createtransaction').length).toBeLessThanOrEqual(2);
    expect(calls.filter((p) => p.startsWith('wallet')).length).toBeLessThan(40);
    const [still] = await listSweeps(h.t.db, { merchantId: shop.id, limit: 1 });
    expect(still).toMatchObject({ id: sweepId, status: 'running' });

    // Planned now: the address waits, with the gas station's address in the reason; the report names the wallet.
    const empty = await planSweeps(planner(), { merchantId: other.id });
    expect(empty.batches).toEqual([]);
    expect(empty.skipped).toHaveLength(1);
    expect(empty.skipped[0]!.reason).toContain(tronBase58(station));
    const wallet = empty.operatorWallets.find((w) => w.role === 'gas_station' && w.network === 'tron');
    expect(wallet).toMatchObject({ address: station, balance: 0n });
    expect(wallet!.shortfall).toBeGreaterThan(0n);

    // Every operator wallet in one list: the gas station (with what the next plan needs and lacks), the resources
    // account, each merchant's refunds hot wallet; balances in base units with the registry's decimals.
    const wallets = await listOperatorWallets(planner(), { network: 'tron', mode: 'test' });
    const gas = wallets.find((w) => w.role === 'gas_station');
    expect(gas).toMatchObject({ address: tronBase58(station), native: { symbol: 'TRX', decimals: 6 }, balances: { native: 0n } });
    expect(gas!.nextPlan!.shortfall).toBeGreaterThan(0n);
    expect(wallets.filter((w) => w.role === 'resources')).toHaveLength(1);
    const refunds = wallets.filter((w) => w.role === 'refunds').map((w) => w.merchantId);
    expect(refunds).toEqual(expect.arrayContaining([shop.id, other.id]));
    expect(gas!.tokens).toEqual(expect.arrayContaining([{ symbol: 'USDT', decimals: 6 }]));
  }, 240_000);

  it('sweep run exits at once with one line per wallet short of fee money (text, and --json)', async () => {
    const t0 = Date.now();
    const r = await sweepRunCli(
      h.env,
      ticker.url,
      shop.id,
      { PAYOUT_POLL_MS: '100', LOG_LEVEL: 'info' },
      { json: false, waitSeconds: 3600 },
    );
    expect(r.code, r.err).toBe(1);
    expect(Date.now() - t0).toBeLessThan(200_000); // not the hour --wait-seconds allows (a CLI start takes 5-40 s here)
    const line = r.out.split('\n').find((l) => l.includes(tronBase58(station)));
    expect(line, r.out).toMatch(/tron/);
    expect(line).toMatch(/\btest\b/);
    expect(line).toMatch(/holds 0 TRX/);
    expect(line).toMatch(/needs \d+(\.\d+)? TRX/);
    // The log stays on stderr: the command's own output carries no JSON log line.
    expect(r.out).not.toMatch(/"level"/);
    expect(r.err).toMatch(/"level"/);

    const j = await sweepRunCli(h.env, ticker.url, shop.id, { PAYOUT_POLL_MS: '100' });
    expect(j.code, j.err).toBe(1);
    const report = JSON.parse(j.out);
    expect(report.resumed.map((s: { id: string; status: string }) => [s.id, s.status])).toEqual([[sweepId, 'running']]);
    expect(report.waiting_for_fee_money).toEqual([
      expect.objectContaining({ network: 'tron', mode: 'test', address: tronBase58(station), balance: '0', token: 'TRX' }),
    ]);
    expect(Number(report.waiting_for_fee_money[0].needed)).toBeGreaterThan(0);
  }, 240_000);

  it('the worker role, with no sweep schedule, finishes the sweep once the gas station has TRX', async () => {
    const worker = h.runWorker();
    try {
      await new Promise((r) => setTimeout(r, 3_000));
      expect((await listSweeps(h.t.db, { merchantId: shop.id, limit: 1 }))[0]).toMatchObject({ id: sweepId, status: 'running' });
      h.fake.chain.setTrx(station, 1_000n * TRX);
      const done = await h.until(async () => {
        const [s] = await listSweeps(h.t.db, { merchantId: shop.id, limit: 1 });
        return s?.status === 'running' ? undefined : s;
      }, 120_000);
      expect(done).toMatchObject({ id: sweepId, status: 'completed', swept_base: 6_000_000n });
    } finally {
      worker.kill();
      await worker.exited;
    }
  }, 240_000);
});
