import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { listAudit } from '../../ledger/audit/audit-log.js';
import { merchantScope } from '../actor.js';
import { type AuditList, type AuditRowView, auditListSchema } from '../contract/audit.js';
import type { ConsoleDeps } from '../deps.js';
import { consoleRoute } from '../route.js';

// The audit page's API: GET /api/audit, newest first, keyset by id. An operator reads every row; a merchant user only
// its merchant's rows (asking for another merchant: 403).

const isoDate = z.iso.datetime({ offset: true }).transform((s) => new Date(s));

export function registerAuditRoutes(api: FastifyInstance, deps: ConsoleDeps): void {
  consoleRoute(api, deps.ops.db, {
    method: 'GET',
    url: '/audit',
    summary: 'The audit log, newest first, with filters',
    response: auditListSchema,
    query: z.strictObject({
      limit: z.coerce.number().int().min(1).max(100).default(25),
      cursor: z
        .string()
        .regex(/^[1-9][0-9]{0,18}$/, 'not a cursor of this list')
        .optional(),
      actor_id: z.string().max(128).optional(),
      action: z.string().max(64).optional(),
      object_type: z.string().max(64).optional(),
      object_id: z.string().max(128).optional(),
      merchant_id: z.string().max(64).optional(),
      from: isoDate.optional(),
      to: isoDate.optional(),
    }),
    async handler({ actor, query }) {
      const merchantId = merchantScope(actor, query.merchant_id);
      const rows = await listAudit(deps.ops.db, {
        limit: query.limit + 1,
        ...(merchantId !== undefined ? { merchantId } : {}),
        ...(query.actor_id !== undefined ? { actorId: query.actor_id } : {}),
        ...(query.action !== undefined ? { action: query.action } : {}),
        ...(query.object_type !== undefined ? { objectType: query.object_type } : {}),
        ...(query.object_id !== undefined ? { objectId: query.object_id } : {}),
        ...(query.from !== undefined ? { from: query.from } : {}),
        ...(query.to !== undefined ? { to: query.to } : {}),
        ...(query.cursor !== undefined ? { beforeId: BigInt(query.cursor) } : {}),
      });
      const page = rows.slice(0, query.limit);
      const data: AuditRowView[] = page.map((r) => ({ ...r, at: r.at.toISOString() }));
      const out: AuditList = { data, next_cursor: rows.length > query.limit ? (page.at(-1)?.id ?? null) : null };
      return out;
    },
  });
}
