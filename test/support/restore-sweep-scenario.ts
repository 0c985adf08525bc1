import { parseDecimalToMinor } from '../../src/domain/money.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';
import { hasOutgoingHistory, isSweeper, type ChainAdapter, type TokenSymbol } from '../../chains/types.js';
import type { Db } from '../../src/db/database.js';
import { setTreasuryDestination } from '../../src/ledger/treasury/destinations.js';
import { listSweeps } from '../../src/ledger/treasury/sweeps.js';
import { createNativePriceService } from '../../src/rates/native-prices.js';
import { planSweeps } from '../../src/treasury/planner.js';
import { createSweeps, driveSweeps } from '../../src/treasury/runner.js';
import type { SweepEngineDeps } from '../../src/treasury/step-kind.js';
import { testSigner, type ChainHarnessMerchant, type ChainServiceHarness } from './chain-service-harness.js';
import { scrape } from './metrics-scrape.js';
import { dumpDatabase, startRestored, type RestoredService } from './restored-service.js';

// Issue 36, "Restores never pay twice", for sweeps on a family without account nonces (TRON, Solana). Before the
// backup a sweep A of two deposit addresses is created (persisted, nothing sent) and a third deposit is credited; after
// the backup A runs to its end and a sweep B, which the dump does not know, sweeps the third. The dump is restored and
// a new service starts on it: A is running again there, over addresses the chain shows empty. Driving it holds every
// sender of A (the gas station, and on TRON the deposit addresses that sent their transfers) on the transactions the
// restored ledger does not know, nothing moves, and `payouts wallet-unknown` lists exactly those transactions. Once the
// operator accepts them, A's steps find their sources' tokens gone and fail unsent (before that rule a TRON or EVM
// top-up was sent a second time), the planner finds nothing to sweep (it reads balances), and a payment that reaches
// an address later is swept once.

/** A row of `payouts wallet-unknown`, as printed. */
type Listed = { tx_hash: string; status: string; address: string };

export interface RestoreSweepFamily {
  h: ChainServiceHarness;
  network: 'tron' | 'solana';
  token: TokenSymbol;
  /** A native-price ticker's base URL (the planner prices fees with it). */
  tickerUrl: string;
  /** The gas station (canonical), given the native coin by the test's setup. */
  gasStation: string;
  /** A new treasury address (canonical) nobody sends from. */
  newTreasury(): string;
  /** A session of `amount` paid to the merchant: its id and deposit address (canonical). */
  paidDeposit(m: ChainHarnessMerchant, amount: string): Promise<{ sessionId: string; address: string }>;
  /** Tokens sent straight to `address` (a later payment reaching a deposit address). */
  sendTokens(address: string, amount: bigint): Promise<void>;
  tokenBalance(address: string): Promise<bigint>;
  nativeBalance(address: string): Promise<bigint>;
}

const u6 = (n: number) => BigInt(n) * 1_000_000n;

export async function runRestoreSweepScenario(f: RestoreSweepFamily): Promise<void> {
  const { h } = f;
  const dir = mkdtempSync(join(tmpdir(), 'sp-restore-sweep-'));
  let restored: RestoredService | null = null;
  try {
    const shop = await h.newMerchant('Restored sweeps');
    const treasury = f.newTreasury();
    await setTreasuryDestination(h.t.db, {
      merchantId: shop.id,
      network: f.network,
      mode: 'test',
      treasuryAddress: treasury,
      actor: 'test',
    });
    const prices = createNativePriceService({ sources: ['coinbase'], coinbaseBaseUrl: f.tickerUrl, timeoutMs: 2000, cacheTtlMs: 0 });
    const planner = (db: Db, adapters: ChainServiceHarness['service']['adapters']) => ({ db, adapters, keys: testSigner, prices });
    const engine = (db: Db, adapters: SweepEngineDeps['adapters']): SweepEngineDeps => ({
      db,
      adapters,
      signer: testSigner,
      pollMs: 100,
      stuckAfterMs: 600_000,
      feeBumpPercent: 25,
    });
    const final = async (address: string, atLeast: bigint) => {
      const adapter = h.service.adapters.require(f.network, 'test');
      if (!isSweeper(adapter)) throw new Error('not a Sweeper');
      await h.until(async () => ((await adapter.finalTokenBalances(f.token, [address]))[0]! >= atLeast ? true : undefined), 60_000);
    };
    const deposit = async (amount: string) => {
      const { sessionId, address } = await f.paidDeposit(shop, amount);
      await h.until(async () => {
        const rows = await h.t.db.selectFrom('deposits').select('status').where('session_id', '=', sessionId).execute();
        return rows.length > 0 && rows.every((r) => r.status === 'confirmed') ? true : undefined;
      }, 60_000);
      await final(address, parseDecimalToMinor(amount, 6));
      return address;
    };

    // Before the backup: sweep A of two addresses persisted, nothing sent; a third address credited.
    const [d1, d2] = [await deposit('10.00'), await deposit('12.00')];
    const planA = await planSweeps(planner(h.t.db, h.service.adapters), { merchantId: shop.id });
    expect(
      planA.batches.map((b) => b.request.sources.map((s) => s.address).sort()),
      JSON.stringify(planA.skipped),
    ).toEqual([[d1, d2].sort()]);
    const [sweepA] = await createSweeps(h.t.db, planA.batches);
    const d3 = await deposit('7.00');
    const dump = await dumpDatabase(h, dir);

    // After it: A runs to its end, then B (unknown to the dump) sweeps the third address.
    const first = engine(h.t.db, h.service.adapters);
    expect(await driveSweeps(first, { timeoutMs: 90_000 })).toBe(0);
    const [sweepB] = await createSweeps(h.t.db, (await planSweeps(planner(h.t.db, h.service.adapters), { merchantId: shop.id })).batches);
    expect(sweepB?.id).toBeDefined();
    expect(await driveSweeps(first, { timeoutMs: 90_000 })).toBe(0);
    const ran = await listSweeps(h.t.db, { merchantId: shop.id, limit: 5 });
    expect(ran.map((s) => [s.id, s.status, s.swept_base]).sort()).toEqual(
      [
        [sweepA!.id, 'completed', u6(22)],
        [sweepB!.id, 'completed', u6(7)],
      ].sort(),
    );
    expect(await f.tokenBalance(treasury)).toBe(u6(29));
    const sent = ran.flatMap((s) =>
      s.steps.filter((st) => st.status === 'succeeded').map((st) => ({ from: st.from_address, tx: st.tx_hash! })),
    );
    const sendersOfA = new Set(ran.find((s) => s.id === sweepA!.id)!.steps.map((st) => st.from_address));
    expect(sendersOfA.has(f.gasStation)).toBe(true);
    // What moved on chain, counted from each wallet's own outgoing transactions (the chain's listing, all of them).
    const adapter0 = h.service.adapters.require(f.network, 'test');
    const outgoing = async (a: ChainAdapter, address: string) => {
      if (!hasOutgoingHistory(a)) throw new Error('no outgoing history');
      return (await a.unknownOutgoing(address, 0, async () => new Set())).found.map((t) => t.hash).sort();
    };
    const wallets = [f.gasStation, d1, d2, d3];
    const snapshot = async (a: ChainAdapter) => ({
      outgoing: await Promise.all(wallets.map((w) => outgoing(a, w))),
      native: await Promise.all(wallets.map((w) => f.nativeBalance(w))),
      tokens: await Promise.all([treasury, d1, d2, d3].map((w) => f.tokenBalance(w))),
    });
    const before = await snapshot(adapter0);
    expect(before.tokens).toEqual([u6(29), 0n, 0n, 0n]);

    // The dump restored, a new service on it: A is running again; driving it moves nothing and holds A's senders.
    // The restored service runs the worker role (its sweep tick drives A too, as in production; the ledger gauges).
    restored = await startRestored(h, dump, { ROLES: 'api,watcher,worker' });
    const { db, service, metricsPort } = restored;
    const adapter = service.adapters.require(f.network, 'test');
    expect((await listSweeps(db, { merchantId: shop.id, limit: 5 })).map((s) => [s.id, s.status])).toEqual([[sweepA!.id, 'running']]);
    const second = engine(db, service.adapters);
    expect(await driveSweeps(second, { timeoutMs: 6_000 })).toBe(1);
    const expected = sent.filter((s) => sendersOfA.has(s.from));
    expect(expected.length).toBeGreaterThanOrEqual(4);
    const noted = await db.selectFrom('hot_wallet_unknown_transactions').selectAll().orderBy('id').execute();
    expect(noted.map((r) => `${r.address} ${r.tx_hash}`).sort()).toEqual(expected.map((s) => `${s.from} ${s.tx}`).sort());
    expect(noted.every((r) => r.accepted_at === null && r.failed === false)).toBe(true);
    expect(await db.selectFrom('sweep_step_attempts').select('id').execute()).toEqual([]);
    expect(await snapshot(adapter)).toEqual(before);
    const gauge = { network: f.network, mode: 'test' };
    const heldWallets = new Set(expected.map((s) => s.from)).size;
    await h.until(async () =>
      (await scrape(metricsPort)).get('stablepay_outbound_wallet_unknown_transactions', gauge) === heldWallets ? true : undefined,
    );

    // The operator sees exactly those transactions, each held, under the wallet that sent it.
    const listed = await restored.cli<Listed[]>('wallet-unknown', '--network', f.network);
    expect(listed.map((r) => `${r.address} ${r.tx_hash} ${r.status}`).sort()).toEqual(
      expected.map((s) => `${adapter.displayAddress(s.from)} ${s.tx} held`).sort(),
    );

    // Accepted (audited), wallet by wallet: A's steps now find their sources empty and fail unsent; nothing moves.
    for (const w of new Set(expected.map((s) => s.from)))
      await restored.cli(
        'wallet-accept-transactions',
        '--network',
        f.network,
        '--mode',
        'test',
        '--address',
        adapter.displayAddress(w),
        ...expected.filter((s) => s.from === w).flatMap((s) => ['--tx', s.tx]),
        '--actor',
        'ops@example',
        '--note',
        'restore: the sweeps ran after the backup',
      );
    expect(await restored.cli<Listed[]>('wallet-unknown')).toEqual([]);
    expect(await driveSweeps(second, { timeoutMs: 30_000 })).toBe(0);
    const [restoredA] = await listSweeps(db, { merchantId: shop.id, limit: 5 });
    expect(restoredA).toMatchObject({ id: sweepA!.id, status: 'failed', swept_base: 0n });
    expect(restoredA!.failure_reason).toMatch(/already left/);
    expect(restoredA!.steps.every((st) => st.tx_hash === null && ['failed', 'skipped'].includes(st.status))).toBe(true);
    expect(await snapshot(adapter)).toEqual(before);
    // The planner reads the chain: nothing left to sweep at the three addresses.
    const replanned = await planSweeps(planner(db, service.adapters), { merchantId: shop.id });
    expect(replanned.batches).toEqual([]);

    // A payment that reaches an address later is swept once, by the wallets the operator accepted.
    await f.sendTokens(d1, u6(5));
    const adapterNow = service.adapters.require(f.network, 'test');
    if (!isSweeper(adapterNow)) throw new Error('not a Sweeper');
    await h.until(async () => ((await adapterNow.finalTokenBalances(f.token, [d1]))[0]! >= u6(5) ? true : undefined), 60_000);
    const later = await planSweeps(planner(db, service.adapters), { merchantId: shop.id });
    expect(later.batches.map((b) => b.request.sources.map((s) => [s.address, s.amount]))).toEqual([[[d1, u6(5)]]]);
    const [sweepC] = await createSweeps(db, later.batches);
    expect(await driveSweeps(second, { timeoutMs: 60_000 })).toBe(0);
    expect((await listSweeps(db, { merchantId: shop.id, limit: 1 }))[0]).toMatchObject({
      id: sweepC!.id,
      status: 'completed',
      swept_base: u6(5),
    });
    expect(await f.tokenBalance(treasury)).toBe(u6(34));
    expect(await f.tokenBalance(d1)).toBe(0n);
  } finally {
    await restored?.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
