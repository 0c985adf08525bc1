import { sql, type Kysely } from 'kysely';

// Re-authorization and revocation (issue 9): `auth_requested_at` marks a subscription whose page selection waits for
// an authorization (a first one while incomplete, or a new one for a live subscription, e.g. past_due after the
// allowance ran out or was revoked); `revoked_at` on payment methods records when an Approval to 0 was seen.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('subscriptions').addColumn('auth_requested_at', 'timestamptz').execute();
  await sql`update subscriptions set auth_requested_at = updated_at where status = 'incomplete' and auth_owner is not null`.execute(db);
  await sql`create index subscriptions_auth_requested_idx on subscriptions (auth_network, mode) where auth_requested_at is not null`.execute(
    db,
  );
  await db.schema.alterTable('payment_methods').addColumn('revoked_at', 'timestamptz').execute();
  await sql`create index payment_methods_owner_idx on payment_methods (network, mode, owner_address)`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('payment_methods').dropColumn('revoked_at').execute();
  await db.schema.alterTable('subscriptions').dropColumn('auth_requested_at').execute();
}
