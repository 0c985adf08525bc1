import type { Selectable } from 'kysely';
import type { PaymentSessionsTable } from '../../db/schema.js';

/** A payment_sessions row as the ledger reads it. */
export type SessionRow = Selectable<PaymentSessionsTable>;

/**
 * Every column of payment_sessions, named: the result of a named (prepared) statement must not be `*`, whose expansion
 * changes when a migration adds a column (src/db/named-statements.ts). The check below fails to compile when a column
 * of the table's type is missing here.
 */
export const SESSION_COLUMNS = [
  'id',
  'merchant_id',
  'mode',
  'order_id',
  'amount_minor',
  'currency',
  'description',
  'merchant_domain_id',
  'line_items',
  'tax_minor',
  'shipping_minor',
  'success_url',
  'cancel_url',
  'metadata',
  'target_currency',
  'target_amount_minor',
  'exchange_rate',
  'rate_locked_at',
  'network',
  'token',
  'hd_account',
  'address_index',
  'deposit_address',
  'status',
  'received_base',
  'created_at',
  'expires_at',
  'paid_at',
  'canceled_at',
  'expired_at',
  'quote_usdt_minor',
  'quote_usdt_rate',
  'quote_usdc_minor',
  'quote_usdc_rate',
  'shortfall_base',
] as const satisfies readonly (keyof PaymentSessionsTable)[];

type Unlisted = Exclude<keyof PaymentSessionsTable, (typeof SESSION_COLUMNS)[number]>;
const everyColumnListed: [Unlisted] extends [never] ? true : Unlisted = true;
void everyColumnListed;
