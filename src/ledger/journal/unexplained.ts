import { sql, type Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { Mode } from '../../../chains/vocabulary.js';
import type { JournalLeg } from './accounts.js';

// Unexplained entries (money that moved at our addresses without a business record) and their acknowledgement by an
// operator (docs/journal.md).

export interface UnexplainedEntry {
  entryId: bigint;
  network: string;
  mode: Mode;
  txHash: string;
  blockHeight: bigint;
  legs: JournalLeg[];
  acknowledged: boolean;
  reversed: boolean;
}

/** Unexplained entries, newest first (the operator's list; `acknowledged: false` only by default). */
export async function listUnexplained(
  db: Kysely<Database>,
  opts: { network?: string; mode?: Mode; all?: boolean; limit?: number } = {},
): Promise<UnexplainedEntry[]> {
  let q = db
    .selectFrom('journal_entries as e')
    .leftJoin('journal_acknowledgements as a', 'a.entry_id', 'e.id')
    .select(['e.id', 'e.network', 'e.mode', 'e.tx_hash', 'e.block_height', 'a.entry_id as ack'])
    .select(sql<boolean>`exists (select 1 from journal_entries r where r.reverses_id = e.id)`.as('reversed'))
    .where('e.kind', '=', 'unexplained')
    .where('e.reverses_id', 'is', null);
  if (opts.network) q = q.where('e.network', '=', opts.network);
  if (opts.mode) q = q.where('e.mode', '=', opts.mode);
  if (!opts.all) q = q.where('a.entry_id', 'is', null);
  const rows = await q
    .orderBy('e.id', 'desc')
    .limit(opts.limit ?? 100)
    .execute();
  if (rows.length === 0) return [];
  const legs = await db
    .selectFrom('journal_legs')
    .selectAll()
    .where(
      'entry_id',
      'in',
      rows.map((r) => r.id),
    )
    .execute();
  return rows.map((r) => ({
    entryId: r.id,
    network: r.network,
    mode: r.mode,
    txHash: r.tx_hash,
    blockHeight: r.block_height,
    legs: legs.filter((l) => l.entry_id === r.id).map((l) => ({ account: l.account, asset: l.asset, amount: l.amount })),
    acknowledged: r.ack !== null,
    reversed: r.reversed,
  }));
}

/** The operator accepts an unexplained entry (with a note); reconcile then counts it. False when no such entry. */
export async function acknowledgeUnexplained(db: Kysely<Database>, entryId: bigint, note: string): Promise<boolean> {
  const r = await sql`
    insert into journal_acknowledgements (entry_id, note)
    select id, ${note} from journal_entries where id = ${entryId.toString()}::bigint and kind = 'unexplained' and reverses_id is null
    on conflict (entry_id) do nothing`.execute(db);
  return Number(r.numAffectedRows ?? 0n) > 0;
}
