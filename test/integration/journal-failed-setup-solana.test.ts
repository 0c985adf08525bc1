import { getAssociatedTokenAddressSync } from '@solana/spl-token';
import { Keypair, LAMPORTS_PER_SOL, PublicKey } from '@solana/web3.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listUnexplained } from '../../src/ledger/journal/unexplained.js';
import { reconcileChain } from '../../src/reconcile/reconcile.js';
import type { ChainHarnessMerchant } from '../support/chain-service-harness.js';
import { expectBurntFeeOnce, journalBalance, landFailedOnSolana, openingBalances } from '../support/failed-fee.js';
import { startSolanaServiceHarness, type SolanaServiceHarness } from '../support/solana-service-harness.js';

// The fee of a failed Solana deposit setup is burnt and journaled (docs/journal.md "Failed transactions"): the refunds
// hot wallet's CreateIdempotent of the deposit owner's token account passes the node's preflight and is held; before it
// lands, another account takes the address (a token account of the same mint owned by someone else), so the
// associated-token program refuses it and the transaction lands with its error, the hot wallet paying the fee. The
// worker that reads the failed outcome journals the fee and is killed (SIGKILL at outbound:after_burnt_fee) before it
// fails the setup; the next worker fails it and the fee stays journaled once, on the session. Reconcile then reads
// the hot wallet's SOL exactly as the journal says.

let h: SolanaServiceHarness;
let shop: ChainHarnessMerchant;
const funded = 3n * BigInt(LAMPORTS_PER_SOL);
beforeAll(async () => {
  // In-process: API and watcher; the setup is sent by child worker processes.
  h = await startSolanaServiceHarness({ extraEnv: { ROLES: 'api,watcher', PAYOUT_LOCK_MS: '1500' } });
  shop = await h.newMerchant('Failed setup');
  // SOL only: the hot wallet holds no tokens, so only its native balance is read.
  h.rpc.validator.airdrop(shop.hotWallet, funded);
}, 120_000);
afterAll(async () => {
  await h?.close();
});

describe('fees of failed Solana deposit setups', () => {
  it('a setup that lands failed: the fee is journaled once on the session across a worker crash, the setup fails, SOL reconciles', async () => {
    const hot = shop.hotWallet;
    const ours = `address:solana:test:${hot}`;
    const sel = await h.selectSession(shop, { amount: '1.00', token: 'USDC' });
    const ata = getAssociatedTokenAddressSync(new PublicKey(h.mints.USDC), new PublicKey(sel.deposit_address), true).toBase58();
    const squatter = Keypair.generate().publicKey.toBase58();

    let doomed: ReturnType<SolanaServiceHarness['runWorker']> | undefined;
    const txHash = await landFailedOnSolana(
      h.rpc.validator,
      async () => {
        doomed = h.runWorker('outbound:after_burnt_fee');
        return h.until(async () => {
          const a = await h.t.db
            .selectFrom('deposit_setup_attempts as a')
            .innerJoin('deposit_setups as s', 's.id', 'a.setup_id')
            .select(['a.state', 'a.tx_hash'])
            .where('s.session_id', '=', sel.id)
            .execute();
          return a.find((x) => x.state === 'broadcast')?.tx_hash;
        }, 90_000);
      },
      // The address the setup creates now holds a token account of the mint that is not the deposit owner's.
      () => h.rpc.validator.setTokenAccount({ mint: h.mints.USDC, owner: squatter, amount: 0n, address: ata }),
    );
    expect((await doomed!.exited).signal).toBe('SIGKILL');

    // On chain: landed with its error, the fee paid by the hot wallet, nothing else moved.
    const tx = (await h.conn.getTransaction(txHash, { commitment: 'finalized', maxSupportedTransactionVersion: 0 }))!;
    expect(tx.meta?.err).toMatchObject({ InstructionError: [expect.any(Number), expect.anything()] });
    const fee = BigInt(tx.meta!.fee);
    expect(fee).toBeGreaterThan(0n);
    expect(tx.transaction.message.staticAccountKeys[0]!.toBase58()).toBe(hot);
    expect(BigInt(tx.meta!.preBalances[0]!) - BigInt(tx.meta!.postBalances[0]!)).toBe(fee);

    // Killed after journaling the fee, before failing the setup.
    const setupRow = () => h.t.db.selectFrom('deposit_setups').selectAll().where('session_id', '=', sel.id).executeTakeFirstOrThrow();
    expect((await setupRow()).status).toBe('processing');
    const burnt = {
      kind: 'deposit_setup',
      object: { type: 'session', id: sel.id },
      network: 'solana',
      txHash,
      merchantId: shop.id,
      blockHeight: BigInt(tx.slot),
      sender: hot,
      fee,
    } as const;
    await expectBurntFeeOnce(h.t.db, burnt);

    const survivor = h.runWorker();
    try {
      const done = await h.until(async () => {
        const r = await setupRow();
        return r.status === 'processing' ? undefined : r;
      }, 90_000);
      expect(done.status).toBe('failed');
      expect(done.failure_reason).toContain(`failed on chain`);
      expect(done.failure_reason).toContain(txHash);
      const attempts = await h.t.db
        .selectFrom('deposit_setup_attempts')
        .select(['state', 'tx_hash'])
        .where('setup_id', '=', done.id)
        .execute();
      expect(attempts).toHaveLength(1); // signed once, never again after the failure
    } finally {
      survivor.kill();
      await survivor.exited;
    }
    await expectBurntFeeOnce(h.t.db, burnt); // still once

    // Reconcile: the hot wallet's opening balance is what it was funded with (the fee is not absorbed into it), its
    // journal balance is the chain's to the lamport, nothing differs, nothing unexplained.
    const report = await h.until(async () => {
      const r = await reconcileChain(h.t.db, h.adapter);
      return r.height !== null && r.height >= BigInt(tx.slot) ? r : undefined;
    }, 60_000);
    expect(report.differences).toEqual([]);
    expect(report.unexplainedNative).toEqual([]);
    expect(await openingBalances(h.t.db, ours)).toEqual([{ asset: 'solana:test:native', amount: funded }]);
    const lamports = BigInt(await h.conn.getBalance(new PublicKey(hot), 'finalized'));
    expect(lamports).toBe(funded - fee);
    expect(await journalBalance(h.t.db, ours, 'solana:test:native')).toBe(lamports);
    expect(await listUnexplained(h.t.db, { network: 'solana', mode: 'test' })).toEqual([]);
  }, 300_000);
});
