import { execFile } from 'node:child_process';
import { HDNodeWallet, Wallet, parseEther } from 'ethers';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COIN_TYPE_EVM, CHANGE_DEPOSIT, addressPath } from '../../chains/hd/bip44.js';
import { holdsUnsettledBalance } from '../../src/ledger/payments/address-holdings.js';
import { streamExport } from '../../src/ledger/exports/exports.js';
import { listUnexplained } from '../../src/ledger/journal/unexplained.js';
import { unbalancedEntries } from '../../src/ledger/journal/balances.js';
import { listSweeps } from '../../src/ledger/treasury/sweeps.js';
import { reconcileChain } from '../../src/reconcile/reconcile.js';
import { planSweeps } from '../../src/treasury/planner.js';
import { createSweeps, driveSweeps } from '../../src/treasury/runner.js';
import { AddressWatchSet } from '../../src/watcher/watch-set.js';
import { backgroundMiner } from '../support/chain-watch.js';
import { TEST_MNEMONIC, payFrom } from '../support/evm-tokens/scenario.js';
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

// Sweeps in the journal (docs/journal.md "Sweeps"), one scenario run by journal-sweep.test.ts on a pre-Prague Anvil
// (the `evm-gas-topup` path: the gas station funds each deposit address, which transfers its token and returns
// leftover gas) and by journal-sweep-7702.test.ts on a default Anvil (the `evm-7702-batch` path: the gas station sweeps
// every address in one type-4 transaction): sessions paid, swept to the hot wallet float and the treasury, then
// reconcile at zero token difference for every address, the deposit addresses' native coin exact too, the gas
// station's native off by exactly its outside funding; no unexplained entry. Then a transfer made with a deposit
// address's key outside the service: unexplained, and reconcile exits 3 naming it.

let h: ServiceHarness;
let ticker: FakeTicker;
let miner: { stop(): void };
let deps: ReturnType<typeof sweepDeps>;
const GAS_STATION_FUNDING = parseEther('100');
const USDT = (n: number) => BigInt(n) * 1_000_000n;

export function journalSweepScenario(o: { anvilArgs?: string[]; method: 'evm-gas-topup' | 'evm-7702-batch' }): void {
  beforeAll(async () => {
    h = await startServiceHarness({ ...(o.anvilArgs ? { anvilArgs: o.anvilArgs } : {}), extraEnv: { ROLES: 'api,watcher' } });
    ticker = await startFakeTicker({ coinbaseRates: ETH_PRICES });
    deps = sweepDeps(h, ticker);
    await h.node.rpc('anvil_setBalance', [await gasStation(h), `0x${GAS_STATION_FUNDING.toString(16)}`]);
    miner = backgroundMiner(h.node, 150);
  }, 120_000);
  afterAll(async () => {
    miner?.stop();
    await ticker?.close();
    await h?.close();
  });

  function cli(args: string[]): Promise<{ code: number | null; out: string; err: string }> {
    return new Promise((resolve) => {
      execFile(
        'node',
        ['--import', 'tsx', 'src/cli/index.ts', ...args],
        { env: { ...process.env, ...h.env, LOG_LEVEL: 'silent' }, timeout: 90_000 },
        (error, stdout, stderr) => {
          const e = error as (Error & { code?: number }) | null;
          resolve({ code: e ? (typeof e.code === 'number' ? e.code : null) : 0, out: stdout, err: stderr });
        },
      );
    });
  }

  /** Waits until the watcher's committed final height covers `height`. */
  async function finalAtLeast(height: bigint): Promise<void> {
    await h.until(async () => {
      const rows = await h.t.db.selectFrom('chain_cursors').select('final_height').execute();
      return rows.length > 0 && rows.every((c) => c.final_height >= height) ? true : undefined;
    }, 60_000);
  }

  async function watched(addresses: string[]): Promise<string[]> {
    const r = await sql<{ address: string }>`
    select da.address from deposit_addresses da
    where da.network = 'ethereum' and da.mode = 'test' and da.address = any(${addresses}::text[]) and ${holdsUnsettledBalance('da')}
    order by da.address`.execute(h.t.db);
    return r.rows.map((x) => x.address);
  }

  describe(`sweeps in the journal (${o.method})`, () => {
    it('journals every sweep step; reconcile is exact; an outside transfer is unexplained and named; exports list sweeps and fees', async () => {
      const shop = await h.newMerchant('Journaled sweeps');
      const treasury = Wallet.createRandom().address.toLowerCase();
      await permissivePolicy(h);
      await treasuryFor(h, shop, treasury, 2500n); // 25.00 USDT float on the hot wallet, the rest to the treasury
      const sessions = [];
      for (const amount of ['30.00', '20.00', '15.00']) sessions.push(await h.paidSession(shop, { amount }));
      // A USDC session the policy does not sweep (below the default minimum of 10): its address keeps its balance.
      const kept = await h.paidSession(shop, { amount: '5.00', token: 'USDC' });
      for (const s of [...sessions, kept]) await confirmedDeposits(h, s.id);
      const deposits = await Promise.all(sessions.map((s) => depositAddressOf(h, s.id)));
      const keptAddress = await depositAddressOf(h, kept.id);
      expect(await watched([...deposits, keptAddress])).toEqual([...deposits, keptAddress].sort());

      const plan = await planSweeps(deps.planner, { merchantId: shop.id });
      expect(plan.batches.map((b) => b.plan.method)).toEqual([o.method, o.method]);
      await createSweeps(h.t.db, plan.batches);
      expect(await driveSweeps(deps.engine, { timeoutMs: 120_000 })).toBe(0);
      const sweeps = await listSweeps(h.t.db, { merchantId: shop.id, limit: 10 });
      expect(sweeps.map((s) => s.status)).toEqual(['completed', 'completed']);

      // One `sweep` entry per succeeded step, each balanced, with its sweep, block and legs.
      const steps = sweeps.flatMap((s) => s.steps.filter((st) => st.status === 'succeeded').map((st) => ({ sweep: s, st })));
      // Top-up: fund + transfer per address (reclaims when worth it); 7702: one batch per sweep (and the delegate's deploy).
      expect(steps.length).toBeGreaterThanOrEqual(o.method === 'evm-gas-topup' ? 6 : 2);
      const entries = await h.t.db.selectFrom('journal_entries').selectAll().where('kind', '=', 'sweep').execute();
      expect(entries.map((e) => e.tx_hash).sort()).toEqual(steps.map((x) => x.st.tx_hash!).sort());
      expect(entries.every((e) => e.object_type === 'sweep' && e.merchant_id === shop.id)).toBe(true);
      expect(await unbalancedEntries(h.t.db)).toEqual([]);
      const legsOf = async (tx: string) => {
        const e = entries.find((x) => x.tx_hash === tx)!;
        return h.t.db.selectFrom('journal_legs').select(['account', 'asset', 'amount']).where('entry_id', '=', e.id).execute();
      };
      const gas = (await gasStation(h)).toLowerCase();
      for (const { sweep, st } of steps) {
        const legs = await legsOf(st.tx_hash!);
        // The fee burnt by the step's sender, exactly the step's recorded fee.
        expect(legs).toContainEqual({ account: 'fees:ethereum', asset: 'ethereum:test:native', amount: st.fee! });
        if (st.purpose === 'transfer') {
          const src = sweep.sources.find((x) => x.tx_hash === st.tx_hash)!;
          const to =
            sweep.destination_kind === 'treasury'
              ? `treasury:ethereum:test:${treasury}`
              : `address:ethereum:test:${shop.hotWallet.toLowerCase()}`;
          expect(legs).toEqual(
            expect.arrayContaining([
              { account: `address:ethereum:test:${src.address}`, asset: 'ethereum:test:USDT', amount: -src.swept_base! },
              { account: to, asset: 'ethereum:test:USDT', amount: src.swept_base! },
            ]),
          );
        }
        if (st.purpose === 'fund')
          expect(legs).toContainEqual({
            account: `address:ethereum:test:${gas}`,
            asset: 'ethereum:test:native',
            amount: -(st.fee! + st.native_moved!),
          });
      }
      // The gas station is a watched wallet like the hot wallets.
      const wallets = await h.t.db.selectFrom('journal_wallets').select(['address', 'role']).execute();
      expect(wallets).toEqual(
        expect.arrayContaining([
          { address: gas, role: 'gas_station' },
          { address: shop.hotWallet.toLowerCase(), role: 'refunds' },
        ]),
      );

      // Late-payment watch: a swept address holds nothing unsettled any more; the unswept USDC address still does.
      expect(await watched([...deposits, keptAddress])).toEqual([keptAddress]);

      // Reconcile at a final height above every sweep: zero token difference for every address, the deposit
      // addresses' native coin exact (funded, fees, reclaimed), the gas station's too (its opening balance).
      await finalAtLeast(entries.reduce((m, e) => (e.block_height > m ? e.block_height : m), 0n) + 1n);
      const clean = await reconcileChain(h.t.db, h.service.adapters.get('ethereum', 'test')!);
      expect(clean.skipped).toBeUndefined();
      expect(clean.differences.filter((d) => d.failing)).toEqual([]);
      // The gas station was funded before the sweep registered it: its opening balance, so its native coin is exact.
      expect(clean.differences).toEqual([]);
      expect(
        await h.t.db
          .selectFrom('journal_entries')
          .select('kind')
          .where('kind', '=', 'opening_balance')
          .where('object_id', '=', gas)
          .execute(),
      ).toHaveLength(1);
      const usdt = clean.summary.find((s) => s.merchantId === shop.id && s.asset === 'USDT')!;
      expect(usdt.difference).toBe(0n);
      expect(clean.differences.some((d) => d.address === shop.hotWallet.toLowerCase())).toBe(false);
      expect(await tokenBalance(h, 'USDT', shop.hotWallet)).toBe(USDT(30));
      expect(await tokenBalance(h, 'USDT', treasury)).toBe(USDT(35));
      expect(await listUnexplained(h.t.db, { network: 'ethereum', mode: 'test', all: true })).toEqual([]);

      // Someone holding the mnemonic moves 1.25 USDC out of the unswept deposit address.
      const row = await h.t.db.selectFrom('payment_sessions').select('address_index').where('id', '=', kept.id).executeTakeFirstOrThrow();
      const key = HDNodeWallet.fromPhrase(
        TEST_MNEMONIC,
        undefined,
        addressPath(COIN_TYPE_EVM, shop.account, CHANGE_DEPOSIT, row.address_index),
      ).connect(h.node.provider);
      expect(key.address.toLowerCase()).toBe(keptAddress);
      await h.node.rpc('anvil_setBalance', [key.address, '0x2386f26fc10000']); // 0.01 ETH for its gas
      const outsider = Wallet.createRandom().address;
      const tx = await payFrom(key as never, h.tokens.USDC, outsider, 1_250_000n);
      const unexplained = await h.until(async () => {
        const u = await listUnexplained(h.t.db, { network: 'ethereum', mode: 'test' });
        return u.length > 0 ? u : undefined;
      }, 60_000);
      expect(unexplained).toHaveLength(1);
      expect(unexplained[0]!.txHash).toBe(tx.toLowerCase());
      const receipt = await h.node.provider.getTransactionReceipt(tx);
      await finalAtLeast(BigInt(receipt!.blockNumber) + 1n);
      const run = await cli(['reconcile', '--network', 'ethereum', '--mode', 'test']);
      expect(run.code).toBe(3);
      expect(run.err).toContain(`difference: ethereum/test ${keptAddress} USDC: ledger - chain = 1250000 base units`);

      // Exports: the sweeps of the period, and the fees the journal holds (one row per succeeded sweep step).
      const period = { since: new Date(Date.now() - 3_600_000), until: new Date(Date.now() + 60_000) };
      const ctx = { tokenDecimals: () => 6 };
      const sweepRows: unknown[][] = [];
      await streamExport(h.t.db, 'sweeps', { ...period, merchant: { id: shop.id, mode: 'test' } }, ctx, async (p) => {
        sweepRows.push(...p);
      });
      expect(sweepRows.map((r) => r[0]).sort()).toEqual(sweeps.map((s) => s.id).sort());
      expect(sweepRows.map((r) => r[12]).sort()).toEqual([String(USDT(30)), String(USDT(35))]);
      const feeRows: unknown[][] = [];
      await streamExport(h.t.db, 'fees', { ...period, merchant: { id: shop.id, mode: 'test' } }, ctx, async (p) => {
        feeRows.push(...p);
      });
      expect(feeRows.map((r) => r[7]).sort()).toEqual(steps.map((x) => x.st.tx_hash).sort());
      const feeTotal = feeRows.reduce((t, r) => t + BigInt(r[10] as string), 0n);
      expect(feeTotal).toBe(sweeps.reduce((t, s) => t + s.actual_fee, 0n));

      // The late-payment watch window: every session closed 40 days ago (past the 30-day window). The watch set keeps
      // the unswept address (it still holds money) and drops the ones a sweep emptied.
      await h.t.db
        .updateTable('payment_sessions')
        .set({ paid_at: sql`now() - interval '40 days'`, expires_at: sql`now() - interval '40 days'` })
        .where(
          'id',
          'in',
          [...sessions, kept].map((x) => x.id),
        )
        .execute();
      const w = new AddressWatchSet(h.t.db, { network: 'ethereum', mode: 'test' }, 30);
      await w.sync();
      const set = new Set([...w.addresses()].map((a) => a.toLowerCase()));
      expect(set.has(keptAddress)).toBe(true);
      for (const d of deposits) expect(set.has(d)).toBe(false);
    }, 400_000);
  });
}
