import { getAssociatedTokenAddressSync } from '@solana/spl-token';
import { LAMPORTS_PER_SOL, PublicKey } from '@solana/web3.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listUnexplained } from '../../src/ledger/journal/unexplained.js';
import type { ChainHarnessMerchant } from '../support/chain-service-harness.js';
import { reconcileOnceCovering } from '../support/reconcile-covering.js';
import { startSolanaServiceHarness, type SolanaServiceHarness } from '../support/solana-service-harness.js';

// Solana deposit setup through the outbound engine (issue 34 item 3b): a setup transaction the leader loses is
// re-offered as the same bytes until its blockhash is proven expired, and only then signed afresh; one transaction
// lands, its fee and rent journaled once, and reconcile reads the hot wallet's SOL exactly. (Stored before broadcast
// and one transaction across a crash after signing: journal-deposit-setup.test.ts.)

describe('Solana deposit setup: re-signed only when proven dead', () => {
  let h: SolanaServiceHarness;
  let shop: ChainHarnessMerchant;
  beforeAll(async () => {
    // Short-lived blockhashes (120 slots of 25 ms), so the lost transaction is proven expired within seconds.
    h = await startSolanaServiceHarness({ extraEnv: { ROLES: 'api,watcher', PAYOUT_LOCK_MS: '1500' }, blockhashValidity: 120 });
    shop = await h.newMerchant('Setup resign');
    h.rpc.validator.airdrop(shop.hotWallet, 3n * BigInt(LAMPORTS_PER_SOL));
  }, 180_000);
  afterAll(async () => {
    await h?.close();
  });

  it('a lost setup transaction is dropped once expired and signed afresh; one lands, journaled once, reconcile exact', async () => {
    // The leader loses everything sent (the first signing and every re-offer of its bytes) until the engine has proven
    // that attempt expired and dropped it; then transactions land again.
    h.rpc.validator.pauseLanding('drop');
    const sel = await h.selectSession(shop, { amount: '1.00', token: 'USDC' });
    const worker = h.runWorker();
    const states = () =>
      h.t.db
        .selectFrom('deposit_setup_attempts as a')
        .innerJoin('deposit_setups as s', 's.id', 'a.setup_id')
        .select(['a.state', 'a.tx_hash'])
        .where('s.session_id', '=', sel.id)
        .orderBy('a.id')
        .execute();
    try {
      try {
        await h.until(async () => ((await states()).some((a) => a.state === 'dropped') ? true : undefined), 120_000);
      } finally {
        h.rpc.validator.resumeLanding();
      }
      const setup = await h.until(async () => {
        const r = await h.t.db.selectFrom('deposit_setups').selectAll().where('session_id', '=', sel.id).executeTakeFirst();
        return r && r.status !== 'processing' ? r : undefined;
      }, 120_000);
      expect(setup.status).toBe('succeeded');
      const attempts = await h.t.db
        .selectFrom('deposit_setup_attempts')
        .select(['state', 'tx_hash'])
        .where('setup_id', '=', setup.id)
        .orderBy('id')
        .execute();
      // The lost bytes were never signed again while they could land: each attempt dropped only once expired (a fresh
      // one may expire too while the leader still drops), the last one landed.
      expect(attempts.length).toBeGreaterThanOrEqual(2);
      expect(attempts.map((a) => a.state)).toEqual([...attempts.slice(1).map(() => 'dropped'), 'confirmed']);
      expect(attempts.at(-1)!.tx_hash).toBe(setup.tx_hash);
      expect(new Set(attempts.map((a) => a.tx_hash)).size).toBe(attempts.length);
      for (const a of attempts.slice(0, -1))
        expect((await h.conn.getSignatureStatuses([a.tx_hash], { searchTransactionHistory: true })).value[0]).toBeNull();
      const ata = getAssociatedTokenAddressSync(new PublicKey(h.mints.USDC), new PublicKey(sel.deposit_address), true);
      const sigs = await h.conn.getSignaturesForAddress(ata, { limit: 10 }, 'confirmed');
      expect(sigs.map((s) => s.signature)).toEqual([setup.tx_hash]);

      // Journaled once (kind deposit_setup, the landed hash only); reconcile: no difference, nothing unexplained.
      const entries = await h.t.db.selectFrom('journal_entries').select(['tx_hash']).where('kind', '=', 'deposit_setup').execute();
      expect(entries.map((e) => e.tx_hash)).toEqual([setup.tx_hash]);
      const tx = (await h.conn.getTransaction(setup.tx_hash!, { commitment: 'confirmed', maxSupportedTransactionVersion: 0 }))!;
      expect(setup.fee).toBe(BigInt(tx.meta!.fee));
      const report = await reconcileOnceCovering(h.t.db, h.adapter, BigInt(tx.slot), h.until);
      expect(report.differences).toEqual([]);
      expect(await listUnexplained(h.t.db, { network: 'solana', mode: 'test' })).toEqual([]);
    } finally {
      worker.kill();
      await worker.exited;
    }
  }, 300_000);
});
