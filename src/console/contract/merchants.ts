import { z } from 'zod';
import { apiKeyCreatedSchema } from './keys.js';

// The console's merchants area: GET /api/merchants (operator), GET /api/merchants/:id (an operator, or that merchant's
// own users), POST /api/merchants (operator), POST /api/merchants/:id/settings (operator; the CLI's `merchant update`).
// The shapes the routes answer with and the UI builds against (types only).

const iso = z.string().meta({ description: 'ISO 8601 time.' });

/** A merchant with its effective settings (as `merchant show` prints them). */
export const merchantSchema = z.strictObject({
  id: z.string(),
  name: z.string(),
  webhook_url: z.string().nullable(),
  created_at: iso,
  /** The effective lifetime: the merchant's own, or the deployment's default (`session_lifetime_source`). */
  session_lifetime_seconds: z.number().int(),
  session_lifetime_source: z.enum(['default', 'merchant']),
  underpayment_tolerance_bps: z.number().int(),
});
export type ConsoleMerchant = z.infer<typeof merchantSchema>;

/** GET /api/merchants?cursor&limit (oldest first, keyset on (created_at, id)). */
export const merchantListSchema = z.strictObject({ data: z.array(merchantSchema), next_cursor: z.string().nullable() });
export type MerchantList = z.infer<typeof merchantListSchema>;

/** POST /api/merchants {name, webhook_url?, webhook_test_only?}: the merchant, its test key and webhook secret, shown this once. */
export const merchantCreatedSchema = z.strictObject({
  merchant: merchantSchema,
  test_key: apiKeyCreatedSchema,
  webhook_secret: z.string(),
});
export type MerchantCreated = z.infer<typeof merchantCreatedSchema>;

/**
 * POST /api/merchants/:id/settings body: {session_lifetime_seconds?: number (60..604800) | null (the default),
 * underpayment_tolerance_bps?: number (0..10000)}; at least one. Answers the merchant (merchantSchema).
 */
export const SESSION_LIFETIME_SECONDS_RANGE = { min: 60, max: 604_800 } as const;
export const UNDERPAYMENT_TOLERANCE_BPS_RANGE = { min: 0, max: 10_000 } as const;
