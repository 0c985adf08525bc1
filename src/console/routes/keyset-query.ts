import { z } from 'zod';
import { invalidRequest } from '../../domain/errors.js';
import { decodeCursor, type KeysetRequest } from '../../operations/keyset-by-created.js';

// The list query every keyset list of the console shares: limit (1..100, default 25), an opaque cursor, sort (an
// indexed column: created_at) and order. `keysetOf` turns it into the operations layer's request.

export const listQueryShape = {
  limit: z.coerce.number().int().min(1).max(100).default(25),
  cursor: z.string().max(400).optional(),
  sort: z.enum(['created_at']).default('created_at'),
  order: z.enum(['asc', 'desc']).optional(),
};

/** An ISO 8601 time with its zone (or a date, UTC midnight) in a query or body. */
export const isoTime = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2}))?$/, 'an ISO 8601 time with its zone')
  .transform((s, ctx) => {
    const d = new Date(/^\d{4}-\d{2}-\d{2}$/.test(s) ? `${s}T00:00:00Z` : s);
    if (Number.isNaN(d.getTime())) {
      ctx.addIssue({ code: 'custom', message: 'not a valid time' });
      return z.NEVER;
    }
    return d;
  });

export function keysetOf(
  q: { limit: number; cursor?: string | undefined; order?: 'asc' | 'desc' | undefined },
  order: 'asc' | 'desc' = 'desc',
): KeysetRequest {
  let cursor: string | undefined;
  if (q.cursor !== undefined) {
    const id = decodeCursor(q.cursor);
    if (id === null) throw invalidRequest('parameter_invalid', 'Invalid cursor: use the next_cursor of a previous page.', 'cursor');
    cursor = id;
  }
  return { limit: q.limit, cursor, order: q.order ?? order };
}

export const iso = (d: Date | null): string | null => (d === null ? null : d.toISOString());
