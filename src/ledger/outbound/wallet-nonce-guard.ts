import { sql, type Transaction } from 'kysely';
import type { Db } from '../../db/database.js';
import type { Database } from '../../db/schema.js';
import type { NonceRef } from './outbound-store.js';

// The ledger side of the outbound engine's guard against transactions the ledger does not know (docs/outbound.md,
// "Transactions the ledger does not know"). A wallet's stored next nonce counts every transaction the gateway signed;
// when the chain's pending nonce is AHEAD of it, something else sent from the wallet (a restored older backup that
// lost our own payouts, or the key used by hand), and signing at the chain's nonce could pay a refund twice. The engine
// then signs nothing from the wallet; the row remembers what was seen until an operator accepts the chain's nonce.

export interface WalletNonceState extends NonceRef {
  nextNonce: bigint;
  /** The chain's pending nonce last seen ahead of nextNonce, when it was. */
  unknown: { chainNonce: bigint; since: Date } | null;
}

/**
 * Under the nonce row's lock (the signing transaction): notes whether the chain's pending nonce is ahead of the stored
 * one, and answers it. The note is cleared when the chain is not ahead (an accepted nonce, or a reorg).
 */
export async function noteChainNonce(
  trx: Transaction<Database>,
  w: NonceRef,
  row: { next_nonce: bigint; unknown_chain_nonce: bigint | null },
  chainNonce: bigint,
): Promise<boolean> {
  const ahead = chainNonce > row.next_nonce;
  if (!ahead && row.unknown_chain_nonce === null) return false;
  if (ahead && row.unknown_chain_nonce === chainNonce) return true;
  await trx
    .updateTable('hot_wallet_nonces')
    .set(
      ahead
        ? { unknown_chain_nonce: chainNonce.toString(), unknown_seen_at: sql`coalesce(unknown_seen_at, now())` }
        : { unknown_chain_nonce: null, unknown_seen_at: null },
    )
    .where('network', '=', w.network)
    .where('mode', '=', w.mode)
    .where('address', '=', w.address)
    .execute();
  return ahead;
}

/** Every wallet's nonce row (optionally one network and mode), with what the guard saw. */
export async function walletNonceStates(db: Db, filter: Partial<Pick<NonceRef, 'network' | 'mode'>> = {}): Promise<WalletNonceState[]> {
  let q = db.selectFrom('hot_wallet_nonces').selectAll();
  if (filter.network) q = q.where('network', '=', filter.network);
  if (filter.mode) q = q.where('mode', '=', filter.mode);
  const rows = await q.orderBy('network').orderBy('mode').orderBy('address').execute();
  return rows.map((r) => ({
    network: r.network,
    mode: r.mode,
    address: r.address,
    nextNonce: r.next_nonce,
    unknown: r.unknown_chain_nonce !== null ? { chainNonce: r.unknown_chain_nonce, since: r.unknown_seen_at ?? new Date(0) } : null,
  }));
}

export type AcceptNonceResult =
  | { kind: 'accepted'; previous: bigint; accepted: bigint; acceptanceId: bigint }
  | { kind: 'no_wallet' }
  | { kind: 'behind_stored'; stored: bigint };

/**
 * The operator's resolution, after checking the chain: the wallet's stored next nonce becomes `nonce` (the chain's
 * pending nonce, checked by the caller), the guard's note is cleared, and who did it is recorded, in one transaction.
 * Never moves the nonce backwards (that would reuse nonces the gateway signed).
 */
export async function acceptWalletNonce(
  db: Db,
  w: NonceRef,
  nonce: bigint,
  by: { actor: string; note: string | null },
): Promise<AcceptNonceResult> {
  return db.transaction().execute(async (trx) => {
    const stored = await lockNonceRow(trx, w);
    if (stored === undefined) return { kind: 'no_wallet' as const };
    if (nonce < stored) return { kind: 'behind_stored' as const, stored };
    await trx
      .updateTable('hot_wallet_nonces')
      .set({ next_nonce: nonce.toString(), unknown_chain_nonce: null, unknown_seen_at: null })
      .where('network', '=', w.network)
      .where('mode', '=', w.mode)
      .where('address', '=', w.address)
      .execute();
    const audit = await trx
      .insertInto('hot_wallet_nonce_acceptances')
      .values({
        network: w.network,
        mode: w.mode,
        address: w.address,
        previous_next_nonce: stored.toString(),
        accepted_next_nonce: nonce.toString(),
        actor: by.actor,
        note: by.note,
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    return { kind: 'accepted' as const, previous: stored, accepted: nonce, acceptanceId: audit.id };
  });
}

/** Locks a wallet's nonce row in the caller's transaction; its stored next nonce, or undefined when it has none yet. */
export async function lockNonceRow(trx: Transaction<Database>, w: NonceRef): Promise<bigint | undefined> {
  const row = await trx
    .selectFrom('hot_wallet_nonces')
    .select('next_nonce')
    .where('network', '=', w.network)
    .where('mode', '=', w.mode)
    .where('address', '=', w.address)
    .forUpdate()
    .executeTakeFirst();
  return row?.next_nonce;
}
