import { sql, type Kysely } from 'kysely';

// Per-merchant payment settings (issue 13, items 19 and 21).
// - session_lifetime_seconds becomes nullable: null means "the deployment's SESSION_LIFETIME_SECONDS". No command ever
//   set it before this migration, so every stored 1800 is the old column default and is cleared. The operator CLI
//   keeps it within SESSION_LIFETIME_SECONDS' range; the database only requires it positive (tests use seconds).
// - underpayment_tolerance_bps: a session counts as paid when it received at least (1 - bps/10000) of what it asked
//   for; 0 (the default) accepts no shortfall beyond sub-unit dust.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table merchants alter column session_lifetime_seconds drop not null`.execute(db);
  await sql`alter table merchants alter column session_lifetime_seconds drop default`.execute(db);
  await sql`update merchants set session_lifetime_seconds = null where session_lifetime_seconds = 1800`.execute(db);
  await sql`alter table merchants add constraint merchants_session_lifetime_ck
    check (session_lifetime_seconds is null or session_lifetime_seconds > 0)`.execute(db);
  await db.schema
    .alterTable('merchants')
    .addColumn('underpayment_tolerance_bps', 'integer', (c) =>
      c.notNull().defaultTo(0).check(sql`underpayment_tolerance_bps between 0 and 10000`),
    )
    .execute();
}
