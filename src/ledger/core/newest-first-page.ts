import { sql, type SelectQueryBuilder } from 'kysely';
import type { Db } from '../../db/database.js';
import type { Database, Mode } from '../../db/schema.js';

// The page-style lists (GET /checkout/sessions, GET /refunds): newest first by (created_at, id). With `after` (a row id
// of this merchant and mode, from a previous page's cursor), the rows strictly after that one, whatever was inserted
// since; `position` counts the matching rows before the page.

type PagedTable = 'payment_sessions' | 'refunds';

export interface NewestFirstPage<Row> {
  rows: Row[];
  total: number;
  /** Matching rows before the first row of this page (newest first). */
  position: number;
}

/** `base` selects the table's rows filtered to the merchant, mode and list filters; null when `after` is not this merchant's row. */
export async function newestFirstPage<T extends PagedTable, Row>(
  db: Db,
  table: T,
  base: SelectQueryBuilder<Database, T, Row>,
  scope: { merchantId: string; mode: Mode },
  opts: { offset: number; limit: number; after?: string },
): Promise<NewestFirstPage<Row> | null> {
  const { after } = opts;
  if (after !== undefined) {
    const own = await sql<{
      id: string;
    }>`select id from ${sql.table(table)} where id = ${after} and merchant_id = ${scope.merchantId} and mode = ${scope.mode}`.execute(db);
    if (own.rows.length === 0) return null;
  }
  const page =
    after === undefined
      ? base
      : base.where(sql<boolean>`(created_at, id) < (select c.created_at, c.id from ${sql.table(table)} c where c.id = ${after})`);
  const count = (q: typeof base) => q.clearSelect().select(sql<bigint>`count(*)`.as('n')).executeTakeFirstOrThrow();
  const [rows, all, rest] = await Promise.all([
    page.orderBy(sql`created_at`, 'desc').orderBy(sql`id`, 'desc').offset(opts.offset).limit(opts.limit).execute(),
    count(base),
    after === undefined ? undefined : count(page),
  ]);
  const total = Number(all.n);
  return { rows, total, position: (rest === undefined ? 0 : total - Number(rest.n)) + opts.offset };
}
