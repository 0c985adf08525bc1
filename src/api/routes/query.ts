import type { FastifyRequest } from 'fastify';
import { z } from 'zod';
import { parameterInvalid } from '../../domain/errors.js';
import { hasIdShape, type IdPrefix } from '../../domain/ids.js';

/** A query-string integer: digits only (no exponent, sign or hex), within bounds. */
export function queryInt(min: number, max: number) {
  return z
    .string()
    .regex(/^\d{1,9}$/, 'must be an integer')
    .meta({ description: `An integer from ${min} to ${max}.` })
    .transform(Number)
    .pipe(z.number().int().min(min).max(max));
}

/**
 * Page-style list parameters (interface.md, Pagination; decisions.md: page from 1, page_size default 20, max 100),
 * plus endpoint filters. `cursor` is the opaque `pagination.next_cursor` of the previous page; `page` and `cursor`
 * exclude each other.
 */
export function pageQuery<F extends z.ZodRawShape>(filters: F) {
  return z.strictObject({
    page: queryInt(1, 1_000_000).optional(),
    page_size: queryInt(1, 100).default(20),
    cursor: z.string().min(1).max(200).optional(),
    ...filters,
  });
}

export interface PageRequest {
  page_size: number;
  offset: number;
  /** Id of the last row of the previous page, from the cursor. */
  after?: string;
}

/** The window a page-style query asks for; refuses `page` with `cursor`, and a cursor we did not issue. */
export function pageRequest(
  q: { page?: number | undefined; page_size: number; cursor?: string | undefined },
  idPrefix: IdPrefix,
): PageRequest {
  if (q.cursor === undefined) return { page_size: q.page_size, offset: ((q.page ?? 1) - 1) * q.page_size };
  if (q.page !== undefined) throw parameterInvalid('cursor', 'Give page or cursor, not both.');
  return { page_size: q.page_size, offset: 0, after: decodePageCursor(q.cursor, idPrefix) };
}

// A cursor is base64url of {"after": <id of the last row of its page>}: opaque to clients, checked on the way back.
function encodePageCursor(id: string): string {
  return Buffer.from(JSON.stringify({ after: id })).toString('base64url');
}

function decodePageCursor(cursor: string, idPrefix: IdPrefix): string {
  const refuse = () => parameterInvalid('cursor', 'cursor is not a cursor this list returned (pagination.next_cursor).');
  if (!/^[A-Za-z0-9_-]+$/.test(cursor)) throw refuse();
  let after: unknown;
  try {
    after = (JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as { after?: unknown } | null)?.after;
  } catch {
    throw refuse();
  }
  if (typeof after !== 'string' || !hasIdShape(after, idPrefix)) throw refuse();
  return after;
}

/** A cursor that names no row of this merchant and mode. */
export const unknownPageCursor = () => parameterInvalid('cursor', 'cursor does not name a position in this list.');

/**
 * `{data, pagination: {page, page_size, total, total_pages, has_more, next_cursor}}`; `position` counts the rows
 * before this page, so `page` is the page that holds its first row. `next_cursor` (an extension) is null on the last page.
 */
export function pageEnvelope<T>(r: PageRequest, data: T[], total: number, position: number, lastId: string | undefined) {
  const totalPages = Math.ceil(total / r.page_size);
  const hasMore = position + data.length < total;
  return {
    data,
    pagination: {
      page: Math.floor(position / r.page_size) + 1,
      page_size: r.page_size,
      total,
      total_pages: totalPages,
      has_more: hasMore,
      next_cursor: hasMore && lastId !== undefined ? encodePageCursor(lastId) : null,
    },
  };
}

/** The page-style list envelope around `item` (the OpenAPI document's `*Page` schemas). */
export function pageEnvelopeSchema<T extends z.ZodType>(item: T) {
  return z.strictObject({
    data: z.array(item),
    pagination: z.strictObject({
      page: z.number().int().min(1),
      page_size: z.number().int().min(1).max(100),
      total: z.number().int().min(0),
      total_pages: z.number().int().min(0),
      has_more: z.boolean(),
      next_cursor: z.string().nullable().meta({ description: 'Extension: pass as `cursor` for the next page; null on the last page.' }),
    }),
  });
}

/** The optional Idempotency-Key header (at most 255 characters). */
export function idempotencyKeyOf(req: FastifyRequest): string | undefined {
  const v = req.headers['idempotency-key'];
  const key = Array.isArray(v) ? v[0] : v;
  if (key === undefined || key === '') return undefined;
  if (key.length > 255) throw parameterInvalid('Idempotency-Key', 'Idempotency-Key must be at most 255 characters.');
  return key;
}
