import { sql, type Transaction } from 'kysely';
import type { Db } from '../../db/database.js';
import type { Database } from '../../db/schema.js';
import type { Mode, NetworkId } from '../../../chains/vocabulary.js';
import type { TakenNonce } from './outbound-store.js';
import { lockNonceRow, noteChainNonce } from './wallet-nonce-guard.js';

// Every hot wallet's nonce (refunds hot wallets, chargers, gas stations, deposit addresses that send their own sweep
// transfer): the hot_wallet_nonces rows, handed out under a row lock in the transaction that stores the signed bytes,
// so nonces are gapless and unique, and given back only when the last one handed out never reached the chain.

/**
 * Locks a hot wallet's nonce row, creating it from the chain's pending count the first time. Every assignment
 * happens under this lock in the transaction that stores the signed bytes, so nonces are gapless and unique. On an
 * existing row, notes whether the chain is ahead of it (transactions the ledger does not know: the engine then signs
 * nothing, see src/ledger/outbound/wallet-nonce-guard.ts).
 *
 * `firstFromZero` (the refunds hot wallet): a wallet the ledger never signed for must never have sent anything, so its
 * row starts at 0 and a chain nonce above it is noted like any other (a database restored from a backup taken before
 * the wallet's first payout, or the key used by hand): nothing is signed until an operator accepts the chain's nonce.
 */
async function lockNextNonce(
  trx: Transaction<Database>,
  wallet: { network: NetworkId; mode: Mode; address: string },
  chainNonce: () => Promise<bigint>,
  o: { firstFromZero?: boolean } = {},
): Promise<bigint> {
  const row = await trx
    .selectFrom('hot_wallet_nonces')
    .select(['next_nonce', 'unknown_chain_nonce'])
    .where('network', '=', wallet.network)
    .where('mode', '=', wallet.mode)
    .where('address', '=', wallet.address)
    .forUpdate()
    .executeTakeFirst();
  if (row) {
    await noteChainNonce(trx, wallet, row, await chainNonce());
    return row.next_nonce;
  }
  const chain = await chainNonce();
  await trx
    .insertInto('hot_wallet_nonces')
    .values({ network: wallet.network, mode: wallet.mode, address: wallet.address, next_nonce: o.firstFromZero ? '0' : chain.toString() })
    .onConflict((oc) => oc.doNothing())
    .execute();
  const created = await lockNonceRow(trx, wallet);
  if (created === undefined) throw new Error(`nonce row of ${wallet.network}/${wallet.mode} ${wallet.address} vanished`);
  if (o.firstFromZero) await noteChainNonce(trx, wallet, { next_nonce: created, unknown_chain_nonce: null }, chain);
  return created;
}

/**
 * Hands out a wallet's stored next nonce and advances it, in the caller's transaction (the row stays locked until it
 * commits): what `lockNextNonce` then `advanceNonce` do, in one statement for the common case (a row with no note
 * and the chain not ahead), so the wallet's serial section (every payout of the wallet waits for it) is one round trip
 * shorter and the nonce row is locked by the same statement that advances it. Anything else (no row yet, a note to
 * clear, the chain ahead) takes `lockNextNonce`'s path with the same answers and notes.
 */
export async function takeNextNonce(
  trx: Transaction<Database>,
  wallet: { network: NetworkId; mode: Mode; address: string },
  chainNonce: bigint,
  o: { firstFromZero?: boolean } = {},
): Promise<TakenNonce> {
  const fast = await trx
    .updateTable('hot_wallet_nonces')
    .set({ next_nonce: sql`next_nonce + 1` })
    .where('network', '=', wallet.network)
    .where('mode', '=', wallet.mode)
    .where('address', '=', wallet.address)
    .where('unknown_chain_nonce', 'is', null)
    .where('next_nonce', '>=', chainNonce)
    .returning(sql<bigint>`next_nonce - 1`.as('taken'))
    .executeTakeFirst();
  if (fast) return { kind: 'taken', nonce: fast.taken };
  const stored = await lockNextNonce(trx, wallet, async () => chainNonce, o);
  if (chainNonce > stored) return { kind: 'chain_ahead', stored };
  await advanceNonce(trx, wallet, stored);
  return { kind: 'taken', nonce: stored };
}

async function advanceNonce(
  trx: Transaction<Database>,
  w: { network: NetworkId; mode: Mode; address: string },
  used: bigint,
): Promise<void> {
  await trx
    .updateTable('hot_wallet_nonces')
    .set({ next_nonce: (used + 1n).toString() })
    .where('network', '=', w.network)
    .where('mode', '=', w.mode)
    .where('address', '=', w.address)
    .execute();
}

/**
 * Gives back the nonce of an attempt that never reached the chain, when it is the last one handed out (no gap can
 * open), running `drop` (the attempt store marks the attempt dropped) in the same transaction. Answers whether it did.
 */
export async function releaseNonceIfLastWith(
  db: Db,
  w: { network: NetworkId; mode: Mode; address: string },
  attempt: { nonce: bigint | null },
  drop: (trx: Transaction<Database>) => Promise<unknown>,
): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    const next = await lockNonceRow(trx, w);
    if (next === undefined || attempt.nonce === null || next !== attempt.nonce + 1n) return false;
    await trx
      .updateTable('hot_wallet_nonces')
      .set({ next_nonce: attempt.nonce.toString() })
      .where('network', '=', w.network)
      .where('mode', '=', w.mode)
      .where('address', '=', w.address)
      .execute();
    await drop(trx);
    return true;
  });
}
