import { Keypair, LAMPORTS_PER_SOL, PublicKey } from '@solana/web3.js';
import { solanaSweepSetup } from '../support/sweep-setup.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listSweeps } from '../../src/ledger/treasury/sweeps.js';
import { setTreasuryDestination } from '../../src/ledger/treasury/destinations.js';
import { expectBurntFeeOnce, journalBalance, landFailedOnSolana, openingBalances } from '../support/failed-fee.js';
import type { FakeTicker } from '../support/fake-ticker.js';
import { reconcileOnceCovering } from '../support/reconcile-covering.js';
import { sweepRunCli } from '../support/sweep-cli.js';
import { startSolanaServiceHarness, type SolanaServiceHarness } from '../support/solana-service-harness.js';

// The fee of a failed Solana sweep step is burnt and journaled (docs/journal.md "Failed transactions", "Sweeps"): the
// fee-payer batch (the gas station pays, the deposit owner signs its transfer and close) passes the node's preflight
// and is held; before it lands the issuer freezes the deposit's token account, so it lands with its error (SPL Token
// AccountFrozen), the gas station paying the fee. `sweep run` (the CLI, a child process) journals that fee and is
// killed there (SIGKILL at outbound:after_burnt_fee); the next run resumes the sweep, fails it, and the fee stays
// journaled once, on the sweep. Reconcile then reads the gas station's SOL and the deposit's USDC exactly as the
// journal says.
let h: SolanaServiceHarness;
let ticker: FakeTicker;
let station: string;
const funded = 10n * BigInt(LAMPORTS_PER_SOL);

beforeAll(async () => {
  h = await startSolanaServiceHarness({ extraEnv: { ROLES: 'api,watcher' } });
  ({ ticker, station } = await solanaSweepSetup(h, { token: 'USDC', lamports: funded }));
}, 180_000);
afterAll(async () => {
  await ticker?.close();
  await h?.close();
});

const sweepRun = (merchantId: string, env: Record<string, string> = {}) => sweepRunCli(h.env, ticker.url, merchantId, env);

describe('fees of failed Solana sweep steps', () => {
  it('a batch that lands failed (deposit token account frozen): the fee is journaled once on the sweep across a SIGKILL, the sweep fails, SOL reconciles', async () => {
    const shop = await h.newMerchant('Sweep burnt fee');
    const treasury = Keypair.generate().publicKey.toBase58();
    await setTreasuryDestination(h.t.db, {
      merchantId: shop.id,
      network: 'solana',
      mode: 'test',
      treasuryAddress: treasury,
      actor: 'test',
    });
    const paid = 9_000_000n;
    const s = await h.paidSession(shop, { amount: '9.00' });
    const deposit = s.depositOwner;
    await h.until(async () => {
      const rows = await h.t.db.selectFrom('deposits').select('status').where('session_id', '=', s.id).execute();
      return rows.length > 0 && rows.every((r) => r.status === 'confirmed') ? true : undefined;
    }, 60_000);
    expect(await h.tokenBalance(h.mints.USDC, deposit)).toBe(paid);

    let doomed: ReturnType<typeof sweepRun> | undefined;
    const txHash = await landFailedOnSolana(
      h.rpc.validator,
      async () => {
        doomed = sweepRun(shop.id, { SP_FAILPOINTS: 'outbound:after_burnt_fee' });
        return h.until(async () => {
          const a = await h.t.db
            .selectFrom('sweep_step_attempts as a')
            .innerJoin('sweep_steps as st', 'st.id', 'a.step_id')
            .innerJoin('sweeps as w', 'w.id', 'st.sweep_id')
            .select(['a.state', 'a.tx_hash'])
            .where('w.merchant_id', '=', shop.id)
            .execute();
          return a.find((x) => x.state === 'broadcast')?.tx_hash;
        }, 90_000);
      },
      () => h.rpc.validator.setTokenAccount({ mint: h.mints.USDC, owner: deposit, amount: paid, frozen: true }),
    );
    const killed = await doomed!;
    expect(killed.signal, killed.err).toBe('SIGKILL');

    // Killed after journaling the fee, before failing the step.
    const [sweep] = await listSweeps(h.t.db, { merchantId: shop.id, limit: 5 });
    expect(sweep).toMatchObject({ status: 'running', method: 'solana-fee-payer' });
    expect(sweep!.steps.map((x) => [x.purpose, x.status])).toEqual([
      ['batch', 'processing'],
      ['close', 'pending'],
    ]);
    const tx = (await h.conn.getTransaction(txHash, { commitment: 'finalized', maxSupportedTransactionVersion: 0 }))!;
    expect(tx.meta?.err).toMatchObject({ InstructionError: [expect.any(Number), { Custom: 17 }] }); // AccountFrozen
    const fee = BigInt(tx.meta!.fee);
    expect(fee).toBeGreaterThan(0n);
    expect(tx.transaction.message.staticAccountKeys[0]!.toBase58()).toBe(station);
    expect(BigInt(tx.meta!.preBalances[0]!) - BigInt(tx.meta!.postBalances[0]!)).toBe(fee);
    const burnt = {
      kind: 'sweep',
      object: { type: 'sweep', id: sweep!.id },
      network: 'solana',
      txHash,
      merchantId: shop.id,
      blockHeight: BigInt(tx.slot),
      sender: station,
      fee,
    } as const;
    await expectBurntFeeOnce(h.t.db, burnt);

    // The next run resumes the sweep and fails it; nothing moved, the fee journaled once.
    const again = await sweepRun(shop.id);
    expect(again.code, again.err).not.toBe(0);
    expect(again.signal).toBeNull();
    const [failed] = await listSweeps(h.t.db, { merchantId: shop.id, limit: 5 });
    expect(failed!.id).toBe(sweep!.id);
    expect(failed!.status).toBe('failed');
    expect(failed!.steps[0]).toMatchObject({ purpose: 'batch', status: 'failed' });
    expect(failed!.steps[1]).toMatchObject({ purpose: 'close', status: 'skipped' });
    expect(failed!.sources[0]).toMatchObject({ state: 'failed', swept_base: null });
    expect(await h.tokenBalance(h.mints.USDC, deposit)).toBe(paid);
    expect(await h.tokenBalance(h.mints.USDC, treasury)).toBe(0n);
    await expectBurntFeeOnce(h.t.db, burnt);

    // Reconcile: nothing differs, nothing unexplained; the gas station's SOL (its opening balance, the airdrop, minus
    // the fee) and the deposit's USDC are the journal's to the base unit.
    const report = await reconcileOnceCovering(h.t.db, h.adapter, BigInt(tx.slot), h.until);
    expect(report.differences).toEqual([]);
    expect(report.unexplainedNative).toEqual([]);
    const account = (a: string) => `address:solana:test:${a}`;
    const lamports = BigInt(await h.conn.getBalance(new PublicKey(station), 'finalized'));
    expect(lamports).toBe(funded - fee);
    expect(await openingBalances(h.t.db, account(station))).toEqual([{ asset: 'solana:test:native', amount: funded }]);
    expect(await journalBalance(h.t.db, account(station), 'solana:test:native')).toBe(lamports);
    expect(await journalBalance(h.t.db, account(deposit), 'solana:test:USDC')).toBe(paid);
  }, 360_000);
});
