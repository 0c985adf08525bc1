import { sql } from 'kysely';
import { asCount, type PruneClass } from './prune-class.js';

// Idempotency keys past their window (docs/errors.md "Retrying safely", docs/retention.md): a key older than the
// cutoff no longer replays; a retry with it is judged as a new request (a session create with the same order_id then
// answers order_id_conflict). Keys inside the window are never picked. Index: idempotency_keys (created_at).

const picked = (cutoff: Date, limit: number | null) => sql`
  select k.merchant_id, k.mode, k.scope, k.key from idempotency_keys k
  where k.created_at < ${cutoff}
  order by k.created_at
  ${limit === null ? sql`` : sql`limit ${limit} for update of k skip locked`}`;

export const idempotencyKeys: PruneClass = {
  name: 'idempotency_keys',
  tables: ['idempotency_keys'],
  async count(db, cutoff) {
    const { rows } = await sql<{ n: string }>`select count(*) as n from (${picked(cutoff, null)}) p`.execute(db);
    return { idempotency_keys: asCount(rows[0]?.n) };
  },
  async pruneBatch(db, cutoff, limit) {
    const { rows } = await sql<{ n: number }>`
      with picked as (${picked(cutoff, limit)}),
      k as (
        delete from idempotency_keys x using picked p
        where x.merchant_id = p.merchant_id and x.mode = p.mode and x.scope = p.scope and x.key = p.key
        returning 1)
      select count(*)::int as n from k`.execute(db);
    return { idempotency_keys: asCount(rows[0]?.n) };
  },
};
