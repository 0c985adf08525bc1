import { z } from 'zod';

// Response shapes of the console's overview (GET /api/overview). Money as decimal strings with their token; counts
// as numbers; timestamps ISO 8601. Operator-only parts (wallets) are null for a merchant user.

export const overviewDay = z.object({
  day: z.string(), // YYYY-MM-DD (UTC)
  network: z.string(),
  mode: z.enum(['test', 'live']),
  token: z.string(),
  /** Sum of the paid sessions' amounts, decimal string in the token. */
  volume: z.string(),
  paid: z.number().int(),
});
export type OverviewDay = z.infer<typeof overviewDay>;

export const overviewRates = z.object({
  /** Sessions created in the window that reached each end state, and their share (0..1, null when none ended). */
  created: z.number().int(),
  paid: z.number().int(),
  expired: z.number().int(),
  canceled: z.number().int(),
  paid_rate: z.number().nullable(),
  expired_rate: z.number().nullable(),
  canceled_rate: z.number().nullable(),
});

export const overviewTimeToPaid = z.object({
  network: z.string(),
  mode: z.enum(['test', 'live']),
  /** Median seconds from the first deposit seen to paid; null when no session was paid. */
  median_seconds: z.number().nullable(),
  samples: z.number().int(),
});

export const overviewFailingEndpoint = z.object({
  merchant_id: z.string(),
  url: z.string().nullable(),
  /** The last deliveries looked at, all failed. */
  failed_deliveries: z.number().int(),
  last_failure_at: z.string().nullable(),
  last_error: z.string().nullable(),
});

export const overviewWatcher = z.object({
  chain_key: z.string(),
  tip_height: z.string(),
  final_height: z.string(),
  /** tip − final (blocks the watcher has not yet counted final). */
  lag_blocks: z.string(),
  tip_time: z.string().nullable(),
  updated_at: z.string().nullable(),
  /** Seconds since the cursor last moved. */
  seconds_since_update: z.number().nullable(),
});

export const overviewWallet = z.object({
  network: z.string(),
  mode: z.enum(['test', 'live']),
  role: z.enum(['gas_station', 'resources', 'refunds']),
  merchant_id: z.string().nullable(),
  address: z.string(),
  native: z.string(),
  /** Decimal string of the native coin; null when unread (error says why). */
  balance: z.string().nullable(),
  needed: z.string().nullable(),
  shortfall: z.string().nullable(),
  below_threshold: z.boolean().nullable(),
  error: z.string().optional(),
});

export const overviewReconcile = z.object({
  network: z.string(),
  mode: z.enum(['test', 'live']),
  run_id: z.string(),
  height: z.string(),
  differences: z.number().int(),
  started_at: z.string(),
  finished_at: z.string(),
});

export const overviewResponse = z.object({
  merchant_id: z.string().nullable(),
  since: z.string(),
  until: z.string(),
  days: z.array(overviewDay),
  rates: overviewRates,
  time_to_paid: z.array(overviewTimeToPaid),
  refunds_in_flight: z.object({ count: z.number().int() }),
  failing_webhook_endpoints: z.array(overviewFailingEndpoint),
  watchers: z.array(overviewWatcher),
  /** Operator only (null for a merchant user); `wallets_error` when the chains could not be read in time. */
  wallets: z.array(overviewWallet).nullable(),
  wallets_error: z.string().nullable(),
  last_reconcile: z.array(overviewReconcile).nullable(),
});
export type OverviewResponse = z.infer<typeof overviewResponse>;
