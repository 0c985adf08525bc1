import { sql } from 'kysely';
import { asCount, type PruneClass } from './prune-class.js';

// Reconcile runs that found nothing (docs/journal.md, docs/retention.md): a run with any difference is a finding and is
// never pruned; of each chain the newest run and the run at the highest height are always kept (the next run reads
// its floor from the highest height: native-balances.ts lastRunHeight). A clean run has no difference rows; the
// statement deletes any all the same, so a run never leaves rows behind. Index: reconcile_runs (finished_at) where
// differences = 0.

const keep = sql`
  (select distinct on (network, mode) id from reconcile_runs order by network, mode, id desc)
  union
  (select distinct on (network, mode) id from reconcile_runs order by network, mode, height desc, id desc)`;

const picked = (cutoff: Date, limit: number | null) => sql`
  select r.id from reconcile_runs r
  where r.differences = 0 and r.finished_at < ${cutoff} and r.id not in (${keep})
  order by r.finished_at
  ${limit === null ? sql`` : sql`limit ${limit} for update of r skip locked`}`;

export const reconcileRuns: PruneClass = {
  name: 'reconcile_runs',
  tables: ['reconcile_runs', 'reconcile_differences'],
  async count(db, cutoff) {
    const { rows } = await sql<{ runs: string; differences: string }>`
      select count(*) as runs,
             coalesce(sum((select count(*) from reconcile_differences x where x.run_id = p.id)), 0) as differences
      from (${picked(cutoff, null)}) p`.execute(db);
    return { reconcile_runs: asCount(rows[0]?.runs), reconcile_differences: asCount(rows[0]?.differences) };
  },
  async pruneBatch(db, cutoff, limit) {
    const { rows } = await sql<{ runs: number; differences: number }>`
      with picked as (${picked(cutoff, limit)}),
      d as (delete from reconcile_differences x using picked p where x.run_id = p.id returning 1),
      r as (delete from reconcile_runs x using picked p where x.id = p.id returning 1)
      select (select count(*) from r)::int as runs, (select count(*) from d)::int as differences`.execute(db);
    return { reconcile_runs: asCount(rows[0]?.runs), reconcile_differences: asCount(rows[0]?.differences) };
  },
};
