import { sql, type SelectQueryBuilder, type Selectable } from 'kysely';
import type { Db } from '../../db/database.js';
import type { Database, Mode } from '../../db/schema.js';

// The Stripe-style lists (GET /subscriptions, GET /invoices): newest first by (created_at, id). `starting_after`
// pages towards older rows, `ending_before` towards newer ones. The cursor is a row of the same merchant and mode;
// its (created_at, id) is compared as a tuple against the stored row (created_at has microseconds, a JS Date only
// milliseconds), so rows created while a client pages never shift a page (no duplicate, no gap).

export interface CursorPage<T> {
  rows: T[];
  hasMore: boolean;
}

export type CursorListResult<T> = { kind: 'page'; page: CursorPage<T> } | { kind: 'bad_cursor'; param: 'starting_after' | 'ending_before' };

export interface CursorPageRequest {
  limit: number;
  startingAfter?: string;
  endingBefore?: string;
}

/** The tables listed this way: each has id, created_at, merchant_id and mode. */
export type CursorPagedTable = 'subscriptions' | 'invoices';

type Query<TB extends CursorPagedTable> = SelectQueryBuilder<Database, TB, Selectable<Database[TB]>>;

/** One page of `table`'s rows of this merchant and mode, narrowed by `filter` (the list's own query parameters). */
export async function cursorPage<TB extends CursorPagedTable>(
  db: Db,
  table: TB,
  owner: { merchantId: string; mode: Mode },
  o: CursorPageRequest,
  filter: (q: Query<TB>) => Query<TB> = (q) => q,
): Promise<CursorListResult<Selectable<Database[TB]>>> {
  // One table of the union for the builder's column names: every CursorPagedTable has the columns used here.
  const from = (db as Db).selectFrom(table as CursorPagedTable as 'subscriptions');
  const cursorId = o.startingAfter ?? o.endingBefore;
  if (cursorId !== undefined) {
    const cursor = await from
      .select('id')
      .where('id', '=', cursorId)
      .where('merchant_id', '=', owner.merchantId)
      .where('mode', '=', owner.mode)
      .executeTakeFirst();
    if (!cursor) return { kind: 'bad_cursor', param: o.startingAfter !== undefined ? 'starting_after' : 'ending_before' };
  }
  let q = filter(
    from.selectAll().where('merchant_id', '=', owner.merchantId).where('mode', '=', owner.mode) as unknown as Query<TB>,
  ) as unknown as Query<'subscriptions'>;
  const backwards = o.startingAfter === undefined && o.endingBefore !== undefined;
  if (cursorId !== undefined) {
    const at = sql`(select created_at, id from ${sql.table(table)} where id = ${cursorId})`;
    q = q.where(backwards ? sql<boolean>`(created_at, id) > ${at}` : sql<boolean>`(created_at, id) < ${at}`);
  }
  const dir = backwards ? 'asc' : 'desc';
  const rows = (await q
    .orderBy('created_at', dir)
    .orderBy('id', dir)
    .limit(o.limit + 1)
    .execute()) as unknown as Selectable<Database[TB]>[];
  const page = rows.slice(0, o.limit);
  if (backwards) page.reverse();
  return { kind: 'page', page: { rows: page, hasMore: rows.length > o.limit } };
}
