import { PublicKey } from '@solana/web3.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChainHarnessMerchant } from '../support/chain-service-harness.js';
import { startSolanaServiceHarness, type SolanaServiceHarness } from '../support/solana-service-harness.js';
import { registerWallets } from '../../src/ledger/journal/entries.js';
import { reconcileChain } from '../../src/reconcile/reconcile.js';
import { expectBurntFeeOnce, landFailedOnSolana, openingBalances } from '../support/failed-fee.js';

// The fee of a failed Solana transaction is burnt and journaled (docs/journal.md, "Failed transactions"): a refund
// whose transfer passed the node's preflight lands after the issuer froze the hot wallet's token account, so the
// TransferChecked fails (SPL Token AccountFrozen) and the transaction lands with its `err`, still paying its fee
// (`meta.fee`; the LiteSVM endpoint debits the fee payer as a validator does). The engine journals the fee (hot wallet →
// fees:solana, linked to the refund), the refund fails as a failed payout does, and reconcile reads the hot wallet's
// SOL exactly as the journal says.

let h: SolanaServiceHarness;
let shop: ChainHarnessMerchant;
beforeAll(async () => {
  h = await startSolanaServiceHarness();
  shop = await h.newMerchant('Sol burnt fee');
}, 120_000);
afterAll(async () => {
  await h?.close();
});

const SOL = 10_000_000_000n; // 10 SOL in lamports
const USDT = 20_000_000n;

describe('fees of failed Solana transactions', () => {
  it('a refund that lands failed (token account frozen): the fee is journaled once, the refund fails, SOL reconciles', async () => {
    const hot = shop.hotWallet;
    const ours = `address:solana:test:${hot}`;
    await registerWallets(h.t.db, [{ network: 'solana', mode: 'test', address: hot, merchantId: shop.id, role: 'refunds' }]);
    h.fundHotWallet(shop, { lamports: SOL, usdt: USDT, usdc: 0n });
    const s = await h.paidSession(shop, { amount: '2.00', token: 'USDT' });

    // Before the refund: the hot wallet's opening balance is booked (what it was funded with, less nothing the journal
    // does not explain: the deposit setup's fee and rent are journaled), and nothing differs.
    const before = await h.until(async () => {
      const r = await reconcileChain(h.t.db, h.adapter);
      return r.height !== null && r.differences.length === 0 && r.addresses >= 2 ? r : undefined;
    }, 60_000);
    expect(before.unexplainedNative).toEqual([]);
    const opening = await openingBalances(h.t.db, ours);
    expect(opening).toHaveLength(2);
    expect(opening).toEqual(
      expect.arrayContaining([
        { asset: 'solana:test:USDT', amount: USDT },
        { asset: 'solana:test:native', amount: SOL },
      ]),
    );

    // The refund is signed and accepted by the node's preflight, but held before it lands; the issuer freezes the hot
    // wallet's token account and the transaction lands (in the same tick: no engine step in between).
    let refundId = '';
    const txHash = await landFailedOnSolana(
      h.rpc.validator,
      async () => {
        const created = await h.createRefund(shop, { session_id: s.id, refund_id: 'sol-burnt-fee', amount: 200, currency: 'USDT' });
        expect(created.status).toBe(201);
        refundId = created.json.id;
        return h.until(async () => {
          const a = await h.t.db.selectFrom('payout_attempts').select(['state', 'tx_hash']).where('refund_id', '=', refundId).execute();
          return a.find((x) => x.state === 'broadcast')?.tx_hash;
        }, 60_000);
      },
      () => h.rpc.validator.setTokenAccount({ mint: h.mints.USDT, owner: hot, amount: USDT, frozen: true }),
    );
    const lamportsAtLanding = BigInt(await h.conn.getBalance(new PublicKey(hot), 'confirmed'));

    const done = await h.settled(shop, 'sol-burnt-fee', 60_000);
    expect(done.status).toBe('failed');
    expect(done.failure_reason).toMatch(/reverted on chain/);
    expect(done.transaction_hash).toBe(txHash);
    expect((await h.refundEvents(refundId)).map((e) => e.type)).toEqual(['refund.failed']);
    expect(await h.transfersFrom(h.mints.USDT, hot, s.payer)).toEqual([]);
    expect(await h.tokenBalance(h.mints.USDT, hot)).toBe(USDT);

    // On chain: landed with its error, the fee paid by the hot wallet, nothing else moved.
    const tx = (await h.conn.getTransaction(txHash, { commitment: 'finalized', maxSupportedTransactionVersion: 0 }))!;
    expect(tx.meta?.err).toMatchObject({ InstructionError: [expect.any(Number), { Custom: 17 }] }); // AccountFrozen
    const fee = BigInt(tx.meta!.fee);
    expect(fee).toBeGreaterThan(0n);
    expect(BigInt(tx.meta!.preBalances[0]!) - BigInt(tx.meta!.postBalances[0]!)).toBe(fee);
    expect(tx.transaction.message.staticAccountKeys[0]!.toBase58()).toBe(hot);

    await expectBurntFeeOnce(h.t.db, {
      kind: 'refund_payout',
      object: { type: 'refund', id: refundId },
      network: 'solana',
      txHash,
      merchantId: shop.id,
      blockHeight: BigInt(tx.slot),
      sender: hot,
      fee,
    });

    // The hot wallet's SOL reconciles to the lamport: no native drift is booked.
    const after = await h.until(async () => {
      const r = await reconcileChain(h.t.db, h.adapter);
      return r.height !== null && r.height >= BigInt(tx.slot) ? r : undefined;
    }, 60_000);
    expect(after.differences).toEqual([]);
    expect(after.unexplainedNative).toEqual([]);
    const lamports = BigInt(await h.conn.getBalance(new PublicKey(hot), 'finalized'));
    expect(lamports).toBe(lamportsAtLanding);
    const native = after.summary.find((x) => x.asset === 'native' && x.merchantId === shop.id)!;
    expect(native).toMatchObject({ chain: lamports, expected: lamports, difference: 0n });
  }, 180_000);
});
