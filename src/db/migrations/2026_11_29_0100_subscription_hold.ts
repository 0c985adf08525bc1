import { sql, type Kysely } from 'kysely';

// Operator hold of a subscription (issue 34 item 6, docs/subscriptions.md "Operator hold"): a charge whose tokens left
// the customer for another address than the settlement address (`wrong_recipient`) is not dunned; the subscription is
// held until an operator resolves it (`subscriptions resolve`). The public status stays one of the spec's values; the
// hold is these columns, shown as the extension `operator_hold`.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    alter table subscriptions
      add column hold_reason text,
      add column hold_charge_id bigint references subscription_charges (id),
      add column hold_tx_hash text,
      add column held_at timestamptz`.execute(db);
  await sql`create index subscriptions_held on subscriptions (held_at) where hold_reason is not null`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop index subscriptions_held`.execute(db);
  await sql`alter table subscriptions drop column hold_reason, drop column hold_charge_id, drop column hold_tx_hash, drop column held_at`.execute(
    db,
  );
}
