import { sql } from 'kysely';
import type { Mode, NetworkId, TokenSymbol } from '../../chains/vocabulary.js';
import type { SessionStatus } from '../db/schema.js';
import { parameterInvalid } from '../domain/errors.js';
import type { SessionRow } from '../ledger/payments/sessions.js';
import type { OperationsContext } from './context.js';
import { decodeCursor, pageOf } from './payments-cursor.js';
import { paymentRowView, type PaymentRowView } from './payments-view.js';

// The payments list (console GET /payments): payment sessions of one merchant or of all, filtered, newest first or by
// amount, keyset-paged on (sort column, id). Indexes: migration 2026_11_29_0400_console_indexes.

export interface PaymentFilter {
  merchantId?: string;
  status?: SessionStatus;
  network?: NetworkId;
  token?: TokenSymbol;
  mode?: Mode;
  currency?: string;
  createdFrom?: Date;
  createdTo?: Date;
  /** Minor units of the session currency. */
  amountMin?: bigint;
  amountMax?: bigint;
  /** Exact: a session id, an order id, a deposit address or a deposit's transaction hash. */
  q?: string;
  sort: 'created_at' | 'amount';
  order: 'asc' | 'desc';
  limit: number;
  cursor?: string;
}

export async function listPayments(
  ops: Pick<OperationsContext, 'db' | 'chains'>,
  f: PaymentFilter,
): Promise<{ data: PaymentRowView[]; next_cursor: string | null }> {
  const col = f.sort === 'amount' ? 'amount_minor' : 'created_at';
  let q = ops.db.selectFrom('payment_sessions').selectAll();
  if (f.merchantId !== undefined) q = q.where('merchant_id', '=', f.merchantId);
  if (f.mode !== undefined) q = q.where('mode', '=', f.mode);
  if (f.status !== undefined) q = q.where('status', '=', f.status);
  if (f.network !== undefined) q = q.where('network', '=', f.network);
  if (f.token !== undefined) q = q.where('token', '=', f.token);
  if (f.currency !== undefined) q = q.where('currency', '=', f.currency.toUpperCase());
  if (f.createdFrom !== undefined) q = q.where('created_at', '>=', f.createdFrom);
  if (f.createdTo !== undefined) q = q.where('created_at', '<', f.createdTo);
  if (f.amountMin !== undefined) q = q.where('amount_minor', '>=', f.amountMin);
  if (f.amountMax !== undefined) q = q.where('amount_minor', '<=', f.amountMax);
  if (f.q !== undefined) {
    const text = f.q;
    q = q.where((eb) =>
      eb.or([
        eb('id', '=', text),
        eb('order_id', '=', text),
        eb('deposit_address', '=', text),
        // = any(array(…)), not `in (…)`: an array computed once can join the other arms in a BitmapOr of indexes;
        // `in (subquery)` under an OR is a filter evaluated on every row of a sequential scan.
        sql<boolean>`id = any(array(select session_id from deposits where tx_hash = ${text} and session_id is not null))`,
      ]),
    );
  }
  if (f.cursor !== undefined) {
    const id = decodeCursor(f.cursor);
    const at = await ops.db.selectFrom('payment_sessions').select('id').where('id', '=', id).executeTakeFirst();
    if (!at) throw parameterInvalid('cursor', 'cursor is not a cursor of this list.');
    const row = sql`(select ${sql.ref(col)}, id from payment_sessions where id = ${id})`;
    q = q.where(f.order === 'desc' ? sql<boolean>`(${sql.ref(col)}, id) < ${row}` : sql<boolean>`(${sql.ref(col)}, id) > ${row}`);
  }
  const rows: SessionRow[] = await q
    .orderBy(col, f.order)
    .orderBy('id', f.order)
    .limit(f.limit + 1)
    .execute();
  const page = pageOf(rows, f.limit);
  return { data: page.rows.map((s) => paymentRowView(s, ops.chains.tokenDecimals)), next_cursor: page.nextCursor };
}
