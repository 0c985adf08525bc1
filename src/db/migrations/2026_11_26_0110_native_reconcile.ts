import { sql, type Kysely } from 'kysely';

// Native balances reconciled (docs/journal.md, "Native balances"): a registered wallet remembers the height the watcher
// had scanned when it was registered (its opening balance is read there), and the journal gains the kind
// `opening_balance` (what a wallet held before the journal watched it).
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('journal_wallets').addColumn('registered_height', 'bigint').execute();
  await sql`alter table journal_entries drop constraint journal_entries_kind_check`.execute(db);
  await sql`alter table journal_entries add constraint journal_entries_kind_check
    check (kind in ('deposit', 'refund_payout', 'charge', 'deposit_setup', 'sweep', 'top_up', 'unexplained', 'opening_balance'))`.execute(
    db,
  );
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table journal_entries drop constraint journal_entries_kind_check`.execute(db);
  await sql`alter table journal_entries add constraint journal_entries_kind_check
    check (kind in ('deposit', 'refund_payout', 'charge', 'deposit_setup', 'sweep', 'top_up', 'unexplained'))`.execute(db);
  await db.schema.alterTable('journal_wallets').dropColumn('registered_height').execute();
}
