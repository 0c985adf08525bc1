import {
  createAssociatedTokenAccountIdempotentInstruction,
  createTransferCheckedInstruction,
  getAssociatedTokenAddressSync,
} from '@solana/spl-token';
import {
  Keypair,
  LAMPORTS_PER_SOL,
  PublicKey,
  SystemProgram,
  TransactionMessage,
  VersionedTransaction,
  type TransactionInstruction,
} from '@solana/web3.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChainHarnessMerchant } from '../support/chain-service-harness.js';
import { startSolanaServiceHarness, type SolanaServiceHarness } from '../support/solana-service-harness.js';
import { readingAfter } from '../support/final-state-during-read.js';
import { reconcileChain } from '../../src/reconcile/reconcile.js';
import { openRegisteredWallets } from '../../src/reconcile/openings.js';
import { journalBalancesAt } from '../../src/ledger/journal/balances.js';
import { registerWallets } from '../../src/ledger/journal/entries.js';
import { watcherFinalHeight } from '../../src/ledger/journal/reconcile-runs.js';
import { isFinalStateReader } from '../../chains/types.js';
import { openingsWithHeights } from '../support/failed-fee.js';

// Reconcile on Solana at the exact slot of the finalized state it reads (docs/journal.md "Reconcile"): each
// getMultipleAccounts answer's context.slot is the height of its balances, the books are computed at that slot.

describe('reconcile on Solana reads the finalized state at its context slot', () => {
  let h: SolanaServiceHarness;
  let shop: ChainHarnessMerchant;
  const chain = { network: 'solana', mode: 'test' as const };
  beforeAll(async () => {
    h = await startSolanaServiceHarness();
    shop = await h.newMerchant('Sol final state');
  });
  afterAll(async () => {
    await h?.close();
  });

  /** Lands a transaction of `instructions` paid and signed by `payer`; answers its slot. */
  const land = async (instructions: TransactionInstruction[], payer: Keypair): Promise<bigint> => {
    const { blockhash } = await h.conn.getLatestBlockhash('confirmed');
    const tx = new VersionedTransaction(
      new TransactionMessage({ payerKey: payer.publicKey, recentBlockhash: blockhash, instructions }).compileToV0Message(),
    );
    tx.sign([payer]);
    const sig = await h.conn.sendTransaction(tx, { preflightCommitment: 'confirmed' });
    const st = await h.until(async () => (await h.conn.getSignatureStatus(sig)).value ?? undefined, 30_000);
    expect(st.err).toBeNull();
    return BigInt(st.slot);
  };
  const finalized = async (slot: bigint) => {
    await h.until(async () => (BigInt(await h.conn.getSlot('finalized')) >= slot ? true : undefined), 30_000);
    await h.until(async () => (((await watcherFinalHeight(h.t.db, chain)) ?? -1n) >= slot ? true : undefined), 30_000);
  };

  it('a deposit finalized during the read, after the pinned slot, is no difference', async () => {
    const a = await h.paidSession(shop, { amount: '2.00', token: 'USDC' });
    await h.until(async () => ((await reconcileChain(h.t.db, h.adapter)).differences.length === 0 ? true : undefined), 60_000);
    if (!isFinalStateReader(h.adapter)) throw new Error('the Solana adapter reads final state');
    let pinned = -1n;
    let landed = -1n;
    const adapter = readingAfter(h.adapter, async () => {
      // The run pinned its slot at or below the watcher's committed final slot, which holds the paid 2.00 (the read's
      // floor is only the previous run's slot, possibly below the deposit: not the slot to judge the books at).
      pinned = (await watcherFinalHeight(h.t.db, chain))!;
      const payer = Keypair.generate();
      const mint = new PublicKey(h.mints.USDC);
      h.rpc.validator.airdrop(payer.publicKey.toBase58(), BigInt(LAMPORTS_PER_SOL));
      h.rpc.validator.setTokenAccount({ mint: h.mints.USDC, owner: payer.publicKey.toBase58(), amount: 750_000n });
      const dest = getAssociatedTokenAddressSync(mint, new PublicKey(a.depositOwner), true);
      landed = await land(
        [
          createAssociatedTokenAccountIdempotentInstruction(payer.publicKey, dest, new PublicKey(a.depositOwner), mint),
          createTransferCheckedInstruction(
            getAssociatedTokenAddressSync(mint, payer.publicKey, true),
            mint,
            dest,
            payer.publicKey,
            750_000n,
            6,
          ),
        ],
        payer,
      );
      await finalized(landed);
    });
    const report = await reconcileChain(h.t.db, adapter);
    expect(landed).toBeGreaterThan(pinned);
    // Read at the finalized slot against the books at the pinned slot, the late deposit would be a 0.75 USDC difference:
    const atPinned = await journalBalancesAt(h.t.db, chain, pinned);
    expect(atPinned.find((j) => j.account === `address:solana:test:${a.depositOwner}` && j.asset === 'solana:test:USDC')?.balance).toBe(
      2_000_000n,
    );
    expect(report.height).toBeGreaterThanOrEqual(landed);
    expect(report.stateHeights).toMatchObject({ highest: report.height, retries: 0 });
    expect(report.differences).toEqual([]);
    const usdc = report.summary.find((s) => s.asset === 'USDC' && s.merchantId === shop.id)!;
    expect(usdc).toMatchObject({ expected: 2_750_000n, chain: 2_750_000n, difference: 0n });
    expect(report.rpcCalls).toBe(1);
  });

  it('a native movement between registration and the first reconcile is an unexplained movement, not opening balance', async () => {
    const hot = shop.hotWallet;
    h.rpc.validator.airdrop(hot, 2n * BigInt(LAMPORTS_PER_SOL));
    await registerWallets(h.t.db, [{ ...chain, address: hot, merchantId: shop.id, role: 'refunds' }]);
    // What `payouts wallets` does after registering: the opening from the finalized state at or above registration.
    expect(await openRegisteredWallets(h.t.db, h.adapter, 60_000)).toEqual([hot]);
    const opening = await openingsWithHeights(h.t.db, hot, `address:solana:test:${hot}`);
    expect(opening.map((o) => [o.asset, o.amount])).toEqual([['solana:test:native', 2n * BigInt(LAMPORTS_PER_SOL)]]);
    expect(BigInt(opening[0]!.block_height)).toBeGreaterThanOrEqual(BigInt(opening[0]!.registered_height!));
    // Someone sends the wallet 0.25 SOL (a plain transfer, which no log shows) before any reconcile ran.
    const outsider = Keypair.generate();
    h.rpc.validator.airdrop(outsider.publicKey.toBase58(), BigInt(LAMPORTS_PER_SOL));
    const sent = 250_000_000n;
    const slot = await land(
      [SystemProgram.transfer({ fromPubkey: outsider.publicKey, toPubkey: new PublicKey(hot), lamports: sent })],
      outsider,
    );
    await finalized(slot);
    const report = await reconcileChain(h.t.db, h.adapter);
    expect(report.unexplainedNative).toEqual([expect.objectContaining({ address: hot, amount: sent })]);
    const total = 2n * BigInt(LAMPORTS_PER_SOL) + sent;
    expect(report.differences).toEqual([
      expect.objectContaining({ address: hot, asset: 'native', journal: total, unexplained: sent, chain: total, difference: -sent }),
    ]);
  });
});
