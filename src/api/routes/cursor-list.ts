import type { FastifyRequest } from 'fastify';
import { z } from 'zod';
import { parameterInvalid } from '../../domain/errors.js';
import { queryInt } from './query.js';

// Cursor-style lists (decisions.md: Lists and pagination): limit 1..100 (default 10), starting_after xor ending_before.
export function cursorListQuery<T extends z.ZodRawShape>(filters: T) {
  return z.strictObject({
    limit: queryInt(1, 100).default(10),
    starting_after: z.string().min(1).max(255).optional(),
    ending_before: z.string().min(1).max(255).optional(),
    ...filters,
  });
}

export function refuseBothCursors(q: { starting_after?: string | undefined; ending_before?: string | undefined }): void {
  if (q.starting_after !== undefined && q.ending_before !== undefined)
    throw parameterInvalid('ending_before', 'Give starting_after or ending_before, not both.');
}

/** The cursor-style list envelope around `item` (the OpenAPI document's `*List` schemas). */
export function listEnvelopeSchema<T extends z.ZodType>(item: T) {
  return z.strictObject({ object: z.literal('list'), data: z.array(item), has_more: z.boolean(), url: z.string() });
}

export function listEnvelope(req: FastifyRequest, data: unknown[], hasMore: boolean) {
  return { object: 'list', data, has_more: hasMore, url: req.url };
}
