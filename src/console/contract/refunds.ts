import { z } from 'zod';

// The console's refunds area (GET /api/refunds, GET /api/refunds/:id, POST /api/refunds/:id/retry,
// POST /api/refunds/:id/settle-from-chain): the shapes the routes answer with. Money: decimal strings in token units.

const iso = z.string().meta({ description: 'ISO 8601 time.' });
const decimal = z.string().regex(/^\d+(\.\d+)?$/);

export const CONSOLE_REFUND_STATUSES = ['pending', 'processing', 'completed', 'failed', 'canceled'] as const;

/** One refund as the console shows it (a row of GET /api/refunds, and `refund` of its detail). */
export const consoleRefundSchema = z.strictObject({
  id: z.string().meta({ description: 'Our re_ id (the console addresses refunds by it).' }),
  refund_id: z.string().meta({ description: "The merchant's refund_id." }),
  merchant_id: z.string(),
  mode: z.enum(['test', 'live']),
  session_id: z.string(),
  deposit_id: z.string().nullable(),
  order_id: z.string(),
  /** Token units, e.g. "12.50". */
  amount: decimal,
  /** What the destination received (token units, rounded down to cents); null until completed. */
  amount_delivered: decimal.nullable(),
  token: z.string(),
  network: z.string(),
  status: z.enum(CONSOLE_REFUND_STATUSES),
  reason: z.string().nullable(),
  description: z.string().nullable(),
  failure_reason: z.string().nullable(),
  destination_address: z.string(),
  transaction_hash: z.string().nullable(),
  explorer_url: z.string().nullable(),
  created_at: iso,
  processed_at: iso.nullable(),
  canceled_at: iso.nullable(),
});

export const refundListSchema = z.strictObject({ data: z.array(consoleRefundSchema), next_cursor: z.string().nullable() });

export const payoutAttemptSchema = z.strictObject({
  tx_hash: z.string(),
  nonce: z.string().nullable(),
  state: z.enum(['signed', 'broadcast', 'confirmed', 'failed', 'replaced', 'dropped']),
  /** The network fee the journal booked for this transaction (base units of the native coin); null until it is final. */
  fee: z.string().nullable(),
  /** The same fee in the network's coin (`fee_coin`: ETH, BNB, TRX or SOL), e.g. "0.000021". */
  fee_native: decimal.nullable(),
  fee_coin: z.string(),
  fee_bump_percent: z.number().int(),
  detail: z.string().nullable(),
  created_at: iso,
  broadcast_at: iso.nullable(),
  settled_at: iso.nullable(),
  explorer_url: z.string().nullable(),
});

/** GET /api/refunds/:id. */
export const refundDetailSchema = z.strictObject({ refund: consoleRefundSchema, attempts: z.array(payoutAttemptSchema) });

/** POST /api/refunds/:id/retry: a failed refund paid again as a new refund (`<refund_id>-retry-N`). */
export const refundRetryResultSchema = z.strictObject({ retried: z.string(), refund: consoleRefundSchema });

/** Body of POST /api/refunds/:id/settle-from-chain (operator): the landed transaction that paid it. */
export const refundSettleBodySchema = z.strictObject({ tx_hash: z.string().min(1).max(200) });
export const refundSettleResultSchema = z.strictObject({
  refund: consoleRefundSchema,
  tx_hash: z.string(),
  delivered_base: z.string().regex(/^\d+$/),
});

export type ConsoleRefund = z.infer<typeof consoleRefundSchema>;
export type RefundList = z.infer<typeof refundListSchema>;
export type PayoutAttemptView = z.infer<typeof payoutAttemptSchema>;
export type RefundDetail = z.infer<typeof refundDetailSchema>;
export type RefundRetryResult = z.infer<typeof refundRetryResultSchema>;
export type RefundSettleBody = z.infer<typeof refundSettleBodySchema>;
export type RefundSettleResult = z.infer<typeof refundSettleResultSchema>;
