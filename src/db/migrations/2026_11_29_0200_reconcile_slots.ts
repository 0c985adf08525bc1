import { sql, type Kysely } from 'kysely';

// The scheduled reconcile's claims (issue 34, docs/journal.md "Reconcile"): every worker's scheduler ticks at the
// same slot boundaries (multiples of RECONCILE_INTERVAL_MS since the epoch), and the one whose insert of
// (network, mode, slot) lands runs that slot; the others skip it. A claim belongs to its slot only: a holder that dies
// leaves nothing the next slot waits for.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table reconcile_slots (
      network text not null,
      mode text not null,
      slot bigint not null,
      claimed_at timestamptz not null default now(),
      primary key (network, mode, slot)
    )`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table reconcile_slots`.execute(db);
}
