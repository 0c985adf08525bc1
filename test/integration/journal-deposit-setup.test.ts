import { getAssociatedTokenAddressSync } from '@solana/spl-token';
import { LAMPORTS_PER_SOL, PublicKey } from '@solana/web3.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChainHarnessMerchant } from '../support/chain-service-harness.js';
import { startSolanaServiceHarness, type SolanaServiceHarness } from '../support/solana-service-harness.js';
import { reconcileChain } from '../../src/reconcile/reconcile.js';
import { listUnexplained } from '../../src/ledger/journal/unexplained.js';

// Solana deposit setup as an outbound kind (docs/outbound.md, docs/journal.md): the refunds hot wallet creates the
// deposit owner's token account; the signed bytes are stored before broadcast, so a worker killed between storing and
// broadcasting (SP_FAILPOINTS) leaves bytes that the next worker sends: one transaction on chain. The landed fee and
// the rent locked in the account are journaled against the hot wallet, and reconcile reads its SOL exactly.

describe('Solana deposit setup through the outbound engine', () => {
  let h: SolanaServiceHarness;
  let shop: ChainHarnessMerchant;
  const funded = 3n * BigInt(LAMPORTS_PER_SOL);
  beforeAll(async () => {
    // In-process: API and watcher; the setups are sent by child worker processes.
    h = await startSolanaServiceHarness({ extraEnv: { ROLES: 'api,watcher', PAYOUT_LOCK_MS: '1500' } });
    shop = await h.newMerchant('Setup');
    // SOL only: the hot wallet holds no tokens, so only its native balance is read.
    h.rpc.validator.airdrop(shop.hotWallet, funded);
  });
  afterAll(async () => {
    await h?.close();
  });

  it('a worker killed after signing leaves one setup transaction on chain, journaled and reconciled', async () => {
    const sel = await h.selectSession(shop, { amount: '1.00', token: 'USDC' });
    const doomed = h.runWorker('outbound:after_sign');
    expect((await doomed.exited).signal).toBe('SIGKILL');
    const setup = await h.t.db.selectFrom('deposit_setups').selectAll().where('session_id', '=', sel.id).executeTakeFirstOrThrow();
    expect(setup.status).toBe('processing');
    const atDeath = await h.t.db.selectFrom('deposit_setup_attempts').selectAll().where('setup_id', '=', setup.id).execute();
    expect(atDeath.map((a) => a.state)).toEqual(['signed']);
    // Stored, never broadcast.
    expect((await h.conn.getSignatureStatuses([atDeath[0]!.tx_hash])).value[0]).toBeNull();

    const survivor = h.runWorker();
    try {
      const done = await h.until(async () => {
        const r = await h.t.db.selectFrom('deposit_setups').selectAll().where('id', '=', setup.id).executeTakeFirstOrThrow();
        return r.status === 'processing' ? undefined : r;
      }, 60_000);
      expect(done.status).toBe('succeeded');
      expect(done.tx_hash).toBe(atDeath[0]!.tx_hash); // the same bytes: never signed twice
      const attempts = await h.t.db.selectFrom('deposit_setup_attempts').select('state').where('setup_id', '=', setup.id).execute();
      expect(attempts.map((a) => a.state)).toEqual(['confirmed']);
      const ata = getAssociatedTokenAddressSync(new PublicKey(h.mints.USDC), new PublicKey(sel.deposit_address), true);
      const sigs = await h.conn.getSignaturesForAddress(ata, { limit: 10 }, 'confirmed');
      expect(sigs.map((s) => s.signature)).toEqual([done.tx_hash]);

      const rent = BigInt(await h.conn.getMinimumBalanceForRentExemption(165));
      const tx = await h.conn.getTransaction(done.tx_hash!, { commitment: 'confirmed', maxSupportedTransactionVersion: 0 });
      const fee = BigInt(tx!.meta!.fee);
      expect(done.rent_paid).toBe(rent);
      expect(done.fee).toBe(fee);
      expect(BigInt((await h.conn.getAccountInfo(ata, 'confirmed'))!.lamports)).toBe(rent);
      const legs = await h.t.db
        .selectFrom('journal_legs as l')
        .innerJoin('journal_entries as e', 'e.id', 'l.entry_id')
        .select(['l.account', 'l.asset', 'l.amount', 'e.kind', 'e.object_type', 'e.object_id', 'e.tx_hash'])
        .where('e.kind', '=', 'deposit_setup')
        .orderBy('l.amount')
        .execute();
      expect(legs).toEqual([
        {
          account: `address:solana:test:${shop.hotWallet}`,
          asset: 'solana:test:native',
          amount: -(fee + rent),
          kind: 'deposit_setup',
          object_type: 'session',
          object_id: sel.id,
          tx_hash: done.tx_hash,
        },
        {
          account: 'fees:solana',
          asset: 'solana:test:native',
          amount: fee + rent,
          kind: 'deposit_setup',
          object_type: 'session',
          object_id: sel.id,
          tx_hash: done.tx_hash,
        },
      ]);

      // Reconcile: the hot wallet was funded before it was registered: that is its opening balance; its SOL on chain
      // is then exactly the opening minus the journaled fee and rent, no difference, nothing unexplained.
      const report = await h.until(async () => {
        const r = await reconcileChain(h.t.db, h.adapter);
        return r.height !== null && r.height >= BigInt(tx!.slot) ? r : undefined;
      }, 60_000);
      expect(report.differences).toEqual([]);
      const opening = await h.t.db
        .selectFrom('journal_legs as l')
        .innerJoin('journal_entries as e', 'e.id', 'l.entry_id')
        .select(['l.asset', 'l.amount'])
        .where('e.kind', '=', 'opening_balance')
        .where('l.account', '=', `address:solana:test:${shop.hotWallet}`)
        .execute();
      expect(opening).toEqual([{ asset: 'solana:test:native', amount: funded }]);
      expect(await listUnexplained(h.t.db, { network: 'solana', mode: 'test' })).toEqual([]);
    } finally {
      survivor.kill();
      await survivor.exited;
    }
  }, 240_000);

  it('a refund that creates the recipient token account journals its rent with its fee', async () => {
    h.rpc.validator.setTokenAccount({ mint: h.mints.USDT, owner: shop.hotWallet, amount: 10_000_000n });
    const worker = h.runWorker();
    try {
      const s = await h.paidSession(shop, { amount: '2.00', token: 'USDT' });
      const other = new PublicKey(Buffer.alloc(32, 9)).toBase58();
      const created = await h.createRefund(shop, { session_id: s.id, amount: 50, currency: 'USDT', destination_address: other });
      expect(created.status).toBe(201);
      const done = await h.settled(shop, created.json.refund_id, 60_000);
      expect(done.status).toBe('completed');
      const tx = await h.conn.getTransaction(done.transaction_hash, { commitment: 'confirmed', maxSupportedTransactionVersion: 0 });
      const fee = BigInt(tx!.meta!.fee);
      const rent = BigInt(await h.conn.getMinimumBalanceForRentExemption(165));
      const legs = await h.t.db
        .selectFrom('journal_legs as l')
        .innerJoin('journal_entries as e', 'e.id', 'l.entry_id')
        .select(['l.account', 'l.asset', 'l.amount'])
        .where('e.kind', '=', 'refund_payout')
        .where('e.tx_hash', '=', done.transaction_hash)
        .orderBy('l.account')
        .orderBy('l.asset')
        .execute();
      expect(legs).toEqual([
        { account: `address:solana:test:${shop.hotWallet}`, asset: 'solana:test:USDT', amount: -500_000n },
        { account: `address:solana:test:${shop.hotWallet}`, asset: 'solana:test:native', amount: -(fee + rent) },
        { account: 'external', asset: 'solana:test:USDT', amount: 500_000n },
        { account: 'fees:solana', asset: 'solana:test:native', amount: fee + rent },
      ]);
    } finally {
      worker.kill();
      await worker.exited;
    }
  }, 240_000);
});
