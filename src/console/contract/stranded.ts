import { z } from 'zod';
import { consoleRefundSchema } from './refunds.js';

// The console's stranded-money area (GET /api/stranded, POST /api/stranded/:kind/:id/refund) and search
// (GET /api/search): unmatched deposits and what expired or canceled sessions received, paid back to the sender or a
// typed address after a confirmation step that shows the exact amount, token, network and destination.

const iso = z.string().meta({ description: 'ISO 8601 time.' });
const decimal = z.string().regex(/^\d+(\.\d+)?$/);

export const STRANDED_KINDS = ['deposit', 'session'] as const;

/** One row of GET /api/stranded. */
export const strandedRowSchema = z.strictObject({
  kind: z.enum(STRANDED_KINDS),
  /** The deposit's id (kind deposit) or the session's cs_ id (kind session). */
  id: z.string(),
  /** null for a deposit to an address of no session (operators only see those). */
  merchant_id: z.string().nullable(),
  mode: z.enum(['test', 'live']),
  network: z.string(),
  token: z.string(),
  /** What it received, token units; null when the token's decimals are not known on this deployment. */
  received: decimal.nullable(),
  /** What is left to pay back (token units, cents); null when the network is not configured here. */
  refundable: decimal.nullable(),
  /** The sender when one is known (deposit: its from address; session: the sender of its deposits, when one). */
  sender: z.string().nullable(),
  /** kind deposit: why it matched no session (e.g. `unknown_address`, `late`); kind session: the session status. */
  reason: z.string(),
  /** What the operator must know (an `unsupported_token` deposit: not credited, not refundable by the gateway); else null. */
  notice: z.string().nullable(),
  tx_hash: z.string().nullable(),
  session_id: z.string().nullable(),
  at: iso,
  refunds: z.array(z.strictObject({ id: z.string(), refund_id: z.string(), status: z.string(), amount: decimal })),
});

export const strandedListSchema = z.strictObject({ data: z.array(strandedRowSchema), next_cursor: z.string().nullable() });

/** Body of POST /api/stranded/:kind/:id/refund: without confirm:true, a preview that changes nothing. */
export const strandedRefundBodySchema = z.strictObject({
  destination: z.string().min(1).max(200).optional(),
  amount: z.string().max(40).optional(),
  confirm: z.boolean().optional(),
});

export const strandedPreviewSchema = z.strictObject({
  preview: z.literal(true),
  amount: decimal,
  token: z.string(),
  network: z.string(),
  destination: z.string(),
});

export const strandedRefundResultSchema = z.strictObject({
  preview: z.literal(false),
  replayed: z.boolean(),
  refund: consoleRefundSchema,
});

export const SEARCH_KINDS = ['session', 'refund', 'deposit'] as const;
/** GET /api/search?q= */
export const searchResultSchema = z.strictObject({
  hits: z.array(
    z.strictObject({
      kind: z.enum(SEARCH_KINDS),
      id: z.string(),
      session_id: z.string().nullable(),
      label: z.string(),
    }),
  ),
});

export type StrandedRow = z.infer<typeof strandedRowSchema>;
export type StrandedList = z.infer<typeof strandedListSchema>;
export type StrandedRefundBody = z.infer<typeof strandedRefundBodySchema>;
export type StrandedPreview = z.infer<typeof strandedPreviewSchema>;
export type StrandedRefundResult = z.infer<typeof strandedRefundResultSchema>;
export type SearchResult = z.infer<typeof searchResultSchema>;

/** POST /api/stranded/:kind/:id/refund: the preview (without `confirm: true`) or the refund made. */
export const strandedRefundAnswerSchema = z.union([strandedPreviewSchema, strandedRefundResultSchema]);
