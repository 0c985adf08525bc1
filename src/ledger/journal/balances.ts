import { sql, type Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { ChainRef } from '../core/chain-ref.js';
import { addressAccountPattern } from './accounts.js';

// What the journal holds per account and asset at a height (reconcile's books) and its own balance check.

export interface JournalBalance {
  account: string;
  asset: string;
  /** Every entry at or below the height, unexplained ones included: what the chain shows if the watcher saw everything. */
  balance: bigint;
  /** The part of `balance` that unexplained entries no operator acknowledged account for. */
  unexplained: bigint;
}

/**
 * Balances of every `address:` account of `chain` with journal activity, at `height` (entries in blocks at or below
 * it; a reversal counts at its original's height, so a reversed pair nets to zero at any height).
 */
export async function journalBalancesAt(db: Kysely<Database>, chain: ChainRef, height: bigint): Promise<JournalBalance[]> {
  const r = await sql<{ account: string; asset: string; balance: string; unexplained: string }>`
    select l.account, l.asset, sum(l.amount)::text as balance,
           coalesce(sum(l.amount) filter (where e.kind = 'unexplained' and a.entry_id is null), 0)::text as unexplained
    from journal_entries e
    join journal_legs l on l.entry_id = e.id
    left join journal_acknowledgements a on a.entry_id = coalesce(e.reverses_id, e.id)
    where e.network = ${chain.network} and e.mode = ${chain.mode} and e.block_height <= ${height.toString()}::bigint
      and l.account like ${addressAccountPattern(chain)}
    group by l.account, l.asset
    order by l.account, l.asset`.execute(db);
  return r.rows.map((x) => ({ account: x.account, asset: x.asset, balance: BigInt(x.balance), unexplained: BigInt(x.unexplained) }));
}

/** Entries whose legs do not sum to zero for some asset (must always be empty; the insert trigger refuses them). */
export async function unbalancedEntries(db: Kysely<Database>): Promise<Array<{ entryId: bigint; asset: string; total: bigint }>> {
  const r = await sql<{ entry_id: string; asset: string; total: string }>`
    select entry_id::text, asset, sum(amount)::text as total from journal_legs group by entry_id, asset having sum(amount) <> 0`.execute(
    db,
  );
  return r.rows.map((x) => ({ entryId: BigInt(x.entry_id), asset: x.asset, total: BigInt(x.total) }));
}

/** One leg of an `address:` account of `chain` in a block above `from` and at or below `to` (books at several heights). */
export interface JournalLegAt extends JournalBalance {
  height: bigint;
}

/**
 * The legs of `address:` accounts of `chain` in blocks in (`from`, `to`], with their height, `unexplained` as in
 * journalBalancesAt: with journalBalancesAt(from), the balance at any height up to `to`.
 */
export async function journalLegsBetween(db: Kysely<Database>, chain: ChainRef, from: bigint, to: bigint): Promise<JournalLegAt[]> {
  if (to <= from) return [];
  const r = await sql<{ account: string; asset: string; height: string; balance: string; unexplained: string }>`
    select l.account, l.asset, e.block_height::text as height, sum(l.amount)::text as balance,
           coalesce(sum(l.amount) filter (where e.kind = 'unexplained' and a.entry_id is null), 0)::text as unexplained
    from journal_entries e
    join journal_legs l on l.entry_id = e.id
    left join journal_acknowledgements a on a.entry_id = coalesce(e.reverses_id, e.id)
    where e.network = ${chain.network} and e.mode = ${chain.mode}
      and e.block_height > ${from.toString()}::bigint and e.block_height <= ${to.toString()}::bigint
      and l.account like ${addressAccountPattern(chain)}
    group by l.account, l.asset, e.block_height`.execute(db);
  return r.rows.map((x) => ({
    account: x.account,
    asset: x.asset,
    height: BigInt(x.height),
    balance: BigInt(x.balance),
    unexplained: BigInt(x.unexplained),
  }));
}
