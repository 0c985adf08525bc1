import { sql } from 'kysely';
import type { Db } from '../../db/database.js';
import type { Mode, NetworkId } from '../../../chains/vocabulary.js';
import type { NonceRef, WalletHistoryLedger } from './outbound-store.js';

// The ledger side of the restore guard of wallets without account nonces (TRON, Solana; docs/outbound.md
// "Transactions the ledger does not know"). What the ledger knows a wallet sent is every attempt of every outbound
// kind (payout_attempts, sweep_step_attempts, deposit_setup_attempts, gas_station_drain_attempts,
// subscription_charge_attempts, and a charge's
// tx_hash recorded from the chain): the engine stores an attempt before its first broadcast, so a transaction of the
// gateway's own is known before any node sees it. A transaction the chain shows and the ledger does not know is noted
// in hot_wallet_unknown_transactions; the wallet's sends wait while one is neither accepted by an operator nor known
// since (`payouts settle-from-chain` stores it as the refund's attempt).

/** The hashes among `hashes` that the ledger knows on (network, mode): an attempt of any kind, or an accepted note. */
export async function knownTransactions(db: Db, chain: { network: NetworkId; mode: Mode }, hashes: string[]): Promise<Set<string>> {
  if (hashes.length === 0) return new Set();
  const list = sql`${sql.val(hashes)}::text[]`;
  const r = await sql<{ tx_hash: string }>`
    select tx_hash from payout_attempts where network = ${chain.network} and mode = ${chain.mode} and tx_hash = any(${list})
    union select tx_hash from sweep_step_attempts where network = ${chain.network} and mode = ${chain.mode} and tx_hash = any(${list})
    union select tx_hash from deposit_setup_attempts where network = ${chain.network} and mode = ${chain.mode} and tx_hash = any(${list})
    union select tx_hash from gas_station_drain_attempts where network = ${chain.network} and mode = ${chain.mode} and tx_hash = any(${list})
    union select a.tx_hash from subscription_charge_attempts a join subscription_charges c on c.id = a.charge_id
      where c.network = ${chain.network} and c.mode = ${chain.mode} and a.tx_hash = any(${list})
    union select tx_hash from subscription_charges where network = ${chain.network} and mode = ${chain.mode} and tx_hash = any(${list})
    union select tx_hash from hot_wallet_unknown_transactions
      where network = ${chain.network} and mode = ${chain.mode} and accepted_at is not null and tx_hash = any(${list})`.execute(db);
  return new Set(r.rows.map((x) => x.tx_hash));
}

/** Notes the wallet's transactions the ledger does not know (once each: a transaction seen again keeps its row). */
export async function noteUnknownTransactions(
  db: Db,
  w: NonceRef,
  txs: ReadonlyArray<{ hash: string; timeMs: number | null; failed: boolean }>,
): Promise<void> {
  if (txs.length === 0) return;
  await db
    .insertInto('hot_wallet_unknown_transactions')
    .values(
      txs.map((t) => ({
        network: w.network,
        mode: w.mode,
        address: w.address,
        tx_hash: t.hash,
        chain_time: t.timeMs === null ? null : new Date(t.timeMs),
        failed: t.failed,
      })),
    )
    .onConflict((oc) => oc.columns(['network', 'mode', 'tx_hash']).doNothing())
    .execute();
}

/** The wallet's noted transactions that still hold its sends: not accepted, and not known to the ledger since. */
export async function heldTransactions(db: Db, w: NonceRef): Promise<string[]> {
  const rows = await db
    .selectFrom('hot_wallet_unknown_transactions')
    .select('tx_hash')
    .where('network', '=', w.network)
    .where('mode', '=', w.mode)
    .where('address', '=', w.address)
    .where('accepted_at', 'is', null)
    .orderBy('id')
    .execute();
  if (rows.length === 0) return [];
  const known = await knownTransactions(
    db,
    w,
    rows.map((r) => r.tx_hash),
  );
  return rows.map((r) => r.tx_hash).filter((h) => !known.has(h));
}

export type UnknownTransactionStatus = 'held' | 'recorded' | 'accepted';

export interface UnknownTransactionView {
  network: NetworkId;
  mode: Mode;
  address: string;
  txHash: string;
  chainTime: Date | null;
  failed: boolean;
  seenAt: Date;
  /** held: the wallet waits for it; recorded: an attempt has its hash since (settle-from-chain); accepted: by an operator. */
  status: UnknownTransactionStatus;
  accepted: { at: Date; by: string; note: string | null } | null;
}

/** Every noted transaction (optionally one network, mode or wallet), oldest first, with its status; `open` only held ones. */
export async function unknownTransactions(
  db: Db,
  filter: { network?: NetworkId; mode?: Mode; address?: string; open?: boolean } = {},
): Promise<UnknownTransactionView[]> {
  let q = db.selectFrom('hot_wallet_unknown_transactions').selectAll();
  if (filter.network) q = q.where('network', '=', filter.network);
  if (filter.mode) q = q.where('mode', '=', filter.mode);
  if (filter.address) q = q.where('address', '=', filter.address);
  const rows = await q.orderBy('id').execute();
  const views: UnknownTransactionView[] = [];
  const knownBy = new Map<string, Set<string>>();
  for (const r of rows) {
    const key = `${r.network}/${r.mode}`;
    if (!knownBy.has(key)) {
      const same = rows.filter((x) => x.network === r.network && x.mode === r.mode).map((x) => x.tx_hash);
      knownBy.set(key, await knownTransactions(db, r, same));
    }
    const status: UnknownTransactionStatus = r.accepted_at !== null ? 'accepted' : knownBy.get(key)!.has(r.tx_hash) ? 'recorded' : 'held';
    views.push({
      network: r.network,
      mode: r.mode,
      address: r.address,
      txHash: r.tx_hash,
      chainTime: r.chain_time,
      failed: r.failed,
      seenAt: r.seen_at,
      status,
      accepted: r.accepted_at !== null ? { at: r.accepted_at, by: r.accepted_by ?? '', note: r.note } : null,
    });
  }
  return filter.open ? views.filter((v) => v.status === 'held') : views;
}

export type AcceptTransactionsResult =
  | { kind: 'accepted'; txHashes: string[] }
  /** Hashes that are not held transactions of the wallet (never noted, another wallet's, already accepted or recorded). */
  | { kind: 'not_held'; txHashes: string[] };

/**
 * The operator's resolution, after checking each transaction on an explorer: the wallet's noted transactions
 * `txHashes` are accepted as known (who and why recorded on each row), in one transaction; all or none.
 */
export async function acceptUnknownTransactions(
  db: Db,
  w: NonceRef,
  txHashes: string[],
  by: { actor: string; note: string | null },
): Promise<AcceptTransactionsResult> {
  const held = new Set(await heldTransactions(db, w));
  const notHeld = txHashes.filter((h) => !held.has(h));
  if (notHeld.length > 0) return { kind: 'not_held', txHashes: notHeld };
  return db.transaction().execute(async (trx) => {
    const r = await trx
      .updateTable('hot_wallet_unknown_transactions')
      .set({ accepted_at: sql`now()`, accepted_by: by.actor, note: by.note })
      .where('network', '=', w.network)
      .where('mode', '=', w.mode)
      .where('address', '=', w.address)
      .where('tx_hash', 'in', txHashes)
      .where('accepted_at', 'is', null)
      .returning('tx_hash')
      .execute();
    if (r.length !== txHashes.length) throw new Error('accepted concurrently; nothing changed');
    return { kind: 'accepted' as const, txHashes: r.map((x) => x.tx_hash) };
  });
}

const ledgers = new WeakMap<Db, WalletHistoryLedger>();

/**
 * The guard's ledger calls, as the outbound stores hand them to the engine (OutboundStore.wallets): one object per
 * database handle, so the engine's per-process memory of the wallets it checked is shared by every kind of a process.
 */
export function walletHistoryLedger(db: Db): WalletHistoryLedger {
  let l = ledgers.get(db);
  if (!l) {
    l = {
      known: (chain, hashes) => knownTransactions(db, chain, hashes),
      note: (w, txs) => noteUnknownTransactions(db, w, txs),
      held: (w) => heldTransactions(db, w),
    };
    ledgers.set(db, l);
  }
  return l;
}
