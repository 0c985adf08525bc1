import { z } from 'zod';

// Response shape of the audit page's API: GET /api/audit?actor_id&action&object_type&object_id&merchant_id&from&to
// &cursor&limit (newest first). An operator sees every row; a merchant user its merchant's rows only. Types only for the UI.

export const auditRowSchema = z.object({
  id: z.string(),
  at: z.string(),
  actor_kind: z.enum(['console', 'cli', 'system']),
  actor_id: z.string().nullable(),
  actor_email: z.string().nullable(),
  actor_role: z.string().nullable(),
  action: z.string(),
  object_type: z.string(),
  object_id: z.string().nullable(),
  merchant_id: z.string().nullable(),
  before: z.unknown(),
  after: z.unknown(),
  ip: z.string().nullable(),
  detail: z.string().nullable(),
});
export type AuditRowView = z.infer<typeof auditRowSchema>;

export const auditListSchema = z.object({ data: z.array(auditRowSchema), next_cursor: z.string().nullable() });
export type AuditList = z.infer<typeof auditListSchema>;
