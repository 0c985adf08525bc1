import type { FastifyRequest } from 'fastify';
import { z } from 'zod';
import { parameterInvalid } from '../../domain/errors.js';

/** A query-string integer: digits only (no exponent, sign or hex), within bounds. */
export function queryInt(min: number, max: number) {
  return z
    .string()
    .regex(/^\d{1,9}$/, 'must be an integer')
    .transform(Number)
    .pipe(z.number().int().min(min).max(max));
}

/** Page-style list parameters (decisions.md: page from 1, page_size default 20, max 100), plus endpoint filters. */
export function pageQuery<F extends z.ZodRawShape>(filters: F) {
  return z.strictObject({ page: queryInt(1, 1_000_000).default(1), page_size: queryInt(1, 100).default(20), ...filters });
}

/** `{data, pagination: {page, page_size, total, total_pages, has_more}}` for one page of `total` rows. */
export function pageEnvelope<T>(q: { page: number; page_size: number }, data: T[], total: number) {
  const totalPages = Math.ceil(total / q.page_size);
  return { data, pagination: { page: q.page, page_size: q.page_size, total, total_pages: totalPages, has_more: q.page < totalPages } };
}

/** Row window of a page. */
export const pageWindow = (q: { page: number; page_size: number }) => ({ offset: (q.page - 1) * q.page_size, limit: q.page_size });

/** The optional Idempotency-Key header (at most 255 characters). */
export function idempotencyKeyOf(req: FastifyRequest): string | undefined {
  const v = req.headers['idempotency-key'];
  const key = Array.isArray(v) ? v[0] : v;
  if (key === undefined || key === '') return undefined;
  if (key.length > 255) throw parameterInvalid('Idempotency-Key', 'Idempotency-Key must be at most 255 characters.');
  return key;
}
