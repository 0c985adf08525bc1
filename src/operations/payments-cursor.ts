import { parameterInvalid } from '../domain/errors.js';

// The console lists' opaque cursor: the id of the last row of the page (base64url). The next page compares
// (sort column, id) against that row's, read from the table, so rows created while someone pages never shift a page.

export const encodeCursor = (id: string): string => Buffer.from(id, 'utf8').toString('base64url');

export function decodeCursor(cursor: string): string {
  const id = Buffer.from(cursor, 'base64url').toString('utf8');
  if (!/^[0-9A-Za-z_-]{3,80}$/.test(id) || encodeCursor(id) !== cursor)
    throw parameterInvalid('cursor', 'cursor is not a cursor of this list.');
  return id;
}

/** The page and the next cursor, from `limit + 1` rows read. */
export function pageOf<T extends { id: string }>(rows: T[], limit: number): { rows: T[]; nextCursor: string | null } {
  const page = rows.slice(0, limit);
  return { rows: page, nextCursor: rows.length > limit && page.length ? encodeCursor(page.at(-1)!.id) : null };
}
