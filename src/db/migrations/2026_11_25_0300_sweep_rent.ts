import { sql, type Kysely } from 'kysely';

// Solana rent a sweep step locked (docs/treasury.md, Solana): the lamports the fee payer put into an account the step
// created (the destination's associated token account). Spent like a fee in the cost report (`sweep costs`), beside
// the rent the closed deposit token accounts returned (native_moved of Solana batch steps). Null elsewhere.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('sweep_steps')
    .addColumn('rent_paid', sql`numeric(78,0)`, (c) => c.check(sql`rent_paid >= 0`))
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('sweep_steps').dropColumn('rent_paid').execute();
}
