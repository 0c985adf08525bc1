import { sql, type Kysely } from 'kysely';

// Amounts actually delivered by payouts and charges (issue 13 item 18), read from the landed transaction's Transfer
// logs (token balances on Solana), in token base units. Null until the transfer settles; a token that takes a fee on
// transfers makes them smaller than amount_base. Rows settled before this migration keep null (not measured).
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('refunds')
    .addColumn('delivered_base', sql`numeric(78,0)`, (c) => c.check(sql`delivered_base >= 0`))
    .execute();
  await db.schema
    .alterTable('subscription_charges')
    .addColumn('delivered_base', sql`numeric(78,0)`, (c) => c.check(sql`delivered_base >= 0`))
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('subscription_charges').dropColumn('delivered_base').execute();
  await db.schema.alterTable('refunds').dropColumn('delivered_base').execute();
}
