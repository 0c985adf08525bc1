import { sql, type Kysely } from 'kysely';

// Per-coin locked quotes, and the shortfall of a session paid short (issue 13, items 14 and 19).
// - quote_<coin>_minor / quote_<coin>_rate: what the payer owes in that stablecoin (API minor units) and the rate that
//   gave it (null: no conversion, the session is priced in that coin), both locked at creation. A null amount means
//   the coin could not be quoted and is not offered. Sessions without any quote (created before this migration, or
//   written by the subscription charge engine) keep the old rule: either coin at the session's own target amount.
//   Existing sessions are backfilled with exactly that rule, so none changes behaviour.
// - shortfall_base: base units of the paid token by which a paid session fell short of its amount due (sub-unit dust,
//   or within the merchant's underpayment tolerance); 0 when paid in full. Null until paid.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('payment_sessions')
    .addColumn('quote_usdt_minor', 'bigint', (c) => c.check(sql`quote_usdt_minor > 0`))
    .addColumn('quote_usdt_rate', 'text')
    .addColumn('quote_usdc_minor', 'bigint', (c) => c.check(sql`quote_usdc_minor > 0`))
    .addColumn('quote_usdc_rate', 'text')
    .addColumn('shortfall_base', sql`numeric(78,0)`, (c) => c.check(sql`shortfall_base >= 0`))
    .execute();
  await sql`update payment_sessions
            set quote_usdt_minor = target_amount_minor, quote_usdt_rate = exchange_rate,
                quote_usdc_minor = target_amount_minor, quote_usdc_rate = exchange_rate`.execute(db);
  await sql`update payment_sessions set shortfall_base = 0 where status = 'paid'`.execute(db);
  await db.schema
    .alterTable('session_settlements')
    .addColumn('shortfall_base', sql`numeric(78,0)`, (c) => c.notNull().defaultTo(0).check(sql`shortfall_base >= 0`))
    .execute();
}
