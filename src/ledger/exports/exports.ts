import { sql, type RawBuilder } from 'kysely';
import type { Db } from '../../db/database.js';
import type { Mode } from '../../db/schema.js';
import { currencyExponent } from '../../domain/currency.js';
import { formatBaseUnits, formatMinor } from '../../domain/money.js';
import { STABLECOIN_EXPONENT } from '../../../chains/vocabulary.js';
import type { TokenDecimals } from '../../domain/chain-lookup.js';
import { isoFromTimestamptzText } from '../../db/timestamptz-text.js';

// Accounting exports (issue 16 item 6; docs/operations.md "Exports"): the rows of one kind whose time falls in
// [since, until), read through a server-side cursor in pages so that memory stays flat whatever the row count.
// A kind is one entry of EXPORT_KINDS: its query (aliased `t`, with the merchant and mode columns to filter on and
// the time column that orders it) and its columns. Adding a table is one more entry.

export type ExportValue = string | number | boolean | null;
export type ExportRow = Record<string, unknown>;

export interface ExportColumn {
  name: string;
  /** The value written for this row; default: the column of the same name (Dates as ISO-8601, bigints as digits). */
  value?: (row: ExportRow, ctx: ExportContext) => ExportValue;
}

export interface ExportContext {
  tokenDecimals: TokenDecimals;
}

export interface ExportKind {
  /** `select ... from <table> t [join ...]`; the columns the `value`s read. */
  select: RawBuilder<unknown>;
  /** Time column that defines the period and the order (with `t.id` as the tie-break). */
  time: string;
  /** Merchant and mode columns (for an export scoped to one merchant and mode). */
  merchant: string;
  mode: string;
  /** Extra condition (e.g. only final deposits). */
  where?: RawBuilder<boolean>;
  columns: ExportColumn[];
}

const plain = (v: unknown): ExportValue => {
  if (v === null || v === undefined) return null;
  if (v instanceof Date) return v.toISOString();
  if (typeof v === 'bigint') return v.toString();
  if (typeof v === 'object') return JSON.stringify(v);
  return v as ExportValue;
};
const col = (name: string): ExportColumn => ({ name });
/** A timestamptz the kind's select reads as text (`t.<name>::text as <name>`): the same ISO-8601 string, without a Date. */
const timeText = (name: string): ExportColumn => ({ name, value: (r) => isoFromTimestamptzText(r[name] as string | null) });
/** A 2-decimal stablecoin amount in minor units, as a decimal string. */
const minor2 = (name: string, from: string): ExportColumn => ({
  name,
  value: (r) => (r[from] === null || r[from] === undefined ? null : formatMinor(BigInt(r[from] as bigint), STABLECOIN_EXPONENT)),
});
/** Token base units as a decimal string of the token (registry decimals); null when this deployment does not know them. */
const tokenAmount = (name: string, from: string): ExportColumn => ({
  name,
  value: (r, ctx) => {
    if (r[from] === null || r[from] === undefined || !r.network || !r.token) return null;
    const d = ctx.tokenDecimals(String(r.network), r.mode as Mode, String(r.token));
    return d === undefined ? null : formatBaseUnits(BigInt(r[from] as bigint), d);
  },
});

export const EXPORT_KINDS = {
  sessions: {
    select: sql`select t.* from payment_sessions t`,
    time: 't.created_at',
    merchant: 't.merchant_id',
    mode: 't.mode',
    columns: [
      col('id'),
      col('merchant_id'),
      col('mode'),
      col('order_id'),
      col('status'),
      { name: 'amount', value: (r) => formatMinor(BigInt(r.amount_minor as bigint), currencyExponent(String(r.currency)) ?? 2) },
      { name: 'currency', value: (r) => String(r.currency).toLowerCase() },
      col('target_currency'),
      minor2('target_amount', 'target_amount_minor'),
      col('exchange_rate'),
      col('network'),
      col('token'),
      tokenAmount('amount_received', 'received_base'),
      col('received_base'),
      col('shortfall_base'),
      col('deposit_address'),
      col('description'),
      col('metadata'),
      col('created_at'),
      col('expires_at'),
      col('paid_at'),
      col('expired_at'),
      col('canceled_at'),
    ],
  },
  payments: {
    // The deposit's own merchant_id (its session's, set when recorded): a merchant's export reads its rows alone
    // (deposits_merchant_confirmed_idx); deposits without a session are not payments of any merchant.
    // The columns written, and no more; the two times as text (no Date per value: docs/performance.md "Export").
    select: sql`select t.id, t.merchant_id, t.mode, t.session_id, t.network, t.token, t.tx_hash, t.log_index,
      t.block_number, t.from_address, t.to_address, t.amount_base, t.disposition, t.unmatched_reason,
      t.block_time::text as block_time, t.confirmed_at::text as confirmed_at from deposits t`,
    time: 't.confirmed_at',
    merchant: 't.merchant_id',
    mode: 't.mode',
    where: sql<boolean>`t.status = 'confirmed' and t.session_id is not null`,
    columns: [
      col('id'),
      col('merchant_id'),
      col('mode'),
      col('session_id'),
      col('network'),
      col('token'),
      { name: 'transaction_hash', value: (r) => plain(r.tx_hash) },
      col('log_index'),
      { name: 'block_height', value: (r) => plain(r.block_number) },
      { name: 'sender', value: (r) => plain(r.from_address) },
      { name: 'deposit_address', value: (r) => plain(r.to_address) },
      tokenAmount('amount', 'amount_base'),
      col('amount_base'),
      col('disposition'),
      col('unmatched_reason'),
      timeText('block_time'),
      timeText('confirmed_at'),
    ],
  },
  refunds: {
    select: sql`select t.* from refunds t`,
    time: 't.created_at',
    merchant: 't.merchant_id',
    mode: 't.mode',
    columns: [
      col('id'),
      col('merchant_id'),
      col('mode'),
      col('refund_id'),
      col('session_id'),
      col('deposit_id'),
      col('order_id'),
      col('status'),
      minor2('amount', 'amount_minor'),
      col('currency'),
      col('network'),
      col('destination_address'),
      col('amount_base'),
      col('delivered_base'),
      col('transaction_hash'),
      col('receipt_number'),
      col('reason'),
      col('failure_reason'),
      col('created_at'),
      col('processed_at'),
      col('canceled_at'),
    ],
  },
  invoices: {
    select: sql`select t.* from invoices t`,
    time: 't.created_at',
    merchant: 't.merchant_id',
    mode: 't.mode',
    columns: [
      col('id'),
      col('merchant_id'),
      col('mode'),
      col('subscription_id'),
      col('customer'),
      col('period_number'),
      col('status'),
      col('payment_status'),
      { name: 'amount_due', value: (r) => formatMinor(BigInt(r.amount_due_minor as bigint), currencyExponent(String(r.currency)) ?? 2) },
      { name: 'amount_paid', value: (r) => formatMinor(BigInt(r.amount_paid_minor as bigint), currencyExponent(String(r.currency)) ?? 2) },
      col('currency'),
      col('billing_reason'),
      col('payment_id'),
      col('period_start'),
      col('period_end'),
      col('due_date'),
      col('paid_at'),
      col('created_at'),
    ],
  },
  charges: {
    select: sql`select t.* from subscription_charges t`,
    time: 't.created_at',
    merchant: 't.merchant_id',
    mode: 't.mode',
    columns: [
      col('id'),
      col('merchant_id'),
      col('mode'),
      col('invoice_id'),
      col('subscription_id'),
      col('payment_id'),
      col('network'),
      col('token'),
      col('state'),
      { name: 'payer', value: (r) => plain(r.owner_address) },
      col('destination_address'),
      tokenAmount('amount', 'amount_base'),
      col('amount_base'),
      col('delivered_base'),
      { name: 'transaction_hash', value: (r) => plain(r.tx_hash) },
      col('failure_reason'),
      col('created_at'),
      col('settled_at'),
    ],
  },
  sweeps: {
    select: sql`select t.* from sweeps t`,
    time: 't.created_at',
    merchant: 't.merchant_id',
    mode: 't.mode',
    columns: [
      col('id'),
      col('merchant_id'),
      col('mode'),
      col('network'),
      col('token'),
      col('method'),
      col('status'),
      col('destination_kind'),
      col('destination'),
      tokenAmount('amount_planned', 'planned_base'),
      col('planned_base'),
      tokenAmount('amount_swept', 'swept_base'),
      col('swept_base'),
      { name: 'estimated_fee_base', value: (r) => plain(r.estimated_fee) },
      { name: 'fee_base', value: (r) => plain(r.actual_fee) },
      col('fee_share_bps'),
      col('failure_reason'),
      col('created_at'),
      col('finished_at'),
    ],
  },
  // Network fees from the journal (docs/journal.md): one row per entry that moved native coin into `fees:<network>`
  // (sweep steps, refund payouts, subscription charges), net of rent a Solana sweep got back; native base units.
  fees: {
    select: sql`select t.*, f.fee_base, f.payer from journal_entries t
      join lateral (
        select sum(l.amount) filter (where l.account like 'fees:%') as fee_base,
               min(l.account) filter (where l.amount < 0 and l.account like 'address:%' and l.asset like '%:native') as payer
        from journal_legs l where l.entry_id = t.id and l.asset like '%:native') f on f.fee_base is not null`,
    time: 't.created_at',
    merchant: 't.merchant_id',
    mode: 't.mode',
    where: sql<boolean>`t.reverses_id is null and t.kind in ('sweep', 'refund_payout', 'charge', 'deposit_setup', 'top_up')`,
    columns: [
      { name: 'entry_id', value: (r) => plain(r.id) },
      col('merchant_id'),
      col('mode'),
      col('network'),
      col('kind'),
      col('object_type'),
      col('object_id'),
      { name: 'transaction_hash', value: (r) => plain(r.tx_hash) },
      col('block_height'),
      { name: 'payer', value: (r) => (typeof r.payer === 'string' ? r.payer.split(':').slice(3).join(':') : null) },
      { name: 'fee_native_base', value: (r) => plain(r.fee_base) },
      col('created_at'),
    ],
  },
} satisfies Record<string, ExportKind>;

export type ExportKindName = keyof typeof EXPORT_KINDS;
export const EXPORT_KIND_NAMES = Object.keys(EXPORT_KINDS) as ExportKindName[];

export interface ExportFilter {
  since: Date;
  until: Date;
  /** Scope to one merchant and mode (the merchant API); absent: every merchant (the operator CLI). */
  merchant?: { id: string; mode: Mode };
}

export const DEFAULT_EXPORT_PAGE_ROWS = 1000;

/**
 * Streams the rows of `kind` in the period, oldest first, in pages of `pageRows` through a server-side cursor (one scan,
 * one connection, a repeatable snapshot: rows committed meanwhile do not tear the export). `onPage` gets each page as
 * formatted values (in the order of `columns`) and may await (backpressure); throwing stops the export.
 */
export async function streamExport(
  db: Db,
  kind: ExportKindName,
  filter: ExportFilter,
  ctx: ExportContext,
  onPage: (rows: ExportValue[][]) => Promise<void>,
  pageRows = DEFAULT_EXPORT_PAGE_ROWS,
): Promise<number> {
  const k: ExportKind = EXPORT_KINDS[kind];
  const conditions = [sql`${sql.raw(k.time)} >= ${filter.since}`, sql`${sql.raw(k.time)} < ${filter.until}`];
  if (filter.merchant)
    conditions.push(sql`${sql.raw(k.merchant)} = ${filter.merchant.id}`, sql`${sql.raw(k.mode)} = ${filter.merchant.mode}`);
  if (k.where) conditions.push(k.where);
  const query = sql`${k.select} where ${sql.join(conditions, sql` and `)} order by ${sql.raw(k.time)}, t.id`;
  let total = 0;
  await db
    .transaction()
    .setIsolationLevel('repeatable read')
    .execute(async (trx) => {
      await sql`set transaction read only`.execute(trx);
      // Timestamps read as text (timeText) come in UTC, the shape isoFromTimestamptzText rewrites without a Date.
      await sql`set local time zone 'UTC'`.execute(trx);
      await sql`declare export_cursor no scroll cursor for ${query}`.execute(trx);
      const fetchPage = () => sql<ExportRow>`fetch forward ${sql.raw(String(pageRows))} from export_cursor`.execute(trx);
      // The next page is asked for before this one is formatted and written: the database reads it meanwhile (at most
      // two pages in memory: the one written and the one arriving).
      let next: ReturnType<typeof fetchPage> | undefined = fetchPage();
      try {
        while (next) {
          const rows: ExportRow[] = (await next).rows;
          next = rows.length === pageRows ? fetchPage() : undefined;
          if (rows.length === 0) break;
          total += rows.length;
          await onPage(rows.map((r) => formatRow(k.columns, r, ctx)));
        }
      } finally {
        // Stopped early (onPage threw): the fetch asked for ahead ends with the transaction, unread.
        next?.catch(() => undefined);
      }
      await sql`close export_cursor`.execute(trx);
    });
  return total;
}

function formatRow(columns: readonly ExportColumn[], r: ExportRow, ctx: ExportContext): ExportValue[] {
  const values: ExportValue[] = new Array(columns.length);
  for (let i = 0; i < columns.length; i++) {
    const c = columns[i]!;
    values[i] = c.value ? c.value(r, ctx) : plain(r[c.name]);
  }
  return values;
}

export const exportColumns = (kind: ExportKindName): string[] => EXPORT_KINDS[kind].columns.map((c) => c.name);
