import { sql, type RawBuilder } from 'kysely';

// Keyset pagination of the console's lists on (created_at, id): the cursor is the last row's id (opaque, base64url),
// and the next page holds the rows strictly past that row's stored (created_at, id) tuple. The tuple is compared in
// SQL against the stored row (created_at has microseconds, a JS Date only milliseconds), so rows inserted while an
// operator pages never shift a page. Never OFFSET.

export type SortOrder = 'asc' | 'desc';

export interface KeysetRequest {
  limit: number;
  cursor?: string | undefined;
  order: SortOrder;
}

export interface KeysetPage<T> {
  rows: T[];
  nextCursor: string | null;
}

export const encodeCursor = (id: string): string => Buffer.from(id, 'utf8').toString('base64url');

/** The row id a cursor names; null for a cursor this API never issued. */
export function decodeCursor(cursor: string): string | null {
  if (!/^[A-Za-z0-9_-]{1,400}$/.test(cursor)) return null;
  const id = Buffer.from(cursor, 'base64url').toString('utf8');
  return /^[A-Za-z0-9_.:-]{1,255}$/.test(id) ? id : null;
}

/** `(alias.created_at, alias.id) < | > (the cursor row's)` for the page after `cursorId`. */
export function pastCursor(table: string, alias: string, idColumn: string, cursorId: string, order: SortOrder): RawBuilder<boolean> {
  const cmp = sql.raw(order === 'desc' ? '<' : '>');
  const a = (c: string) => sql.ref(`${alias}.${c}`);
  return sql<boolean>`(${a('created_at')}, ${a(idColumn)}) ${cmp} (select c.created_at, c.${sql.ref(idColumn)} from ${sql.table(table)} c where c.${sql.ref(idColumn)} = ${cursorId})`;
}

/** Cuts the limit+1 rows a query fetched into a page and the cursor of the next one. */
export function keysetPage<T>(rows: T[], limit: number, idOf: (row: T) => string): KeysetPage<T> {
  const page = rows.slice(0, limit);
  const last = page[page.length - 1];
  return { rows: page, nextCursor: rows.length > limit && last !== undefined ? encodeCursor(idOf(last)) : null };
}
