import { NETWORK_IDS } from '../../../chains/vocabulary.js';
import { z } from 'zod';

// Response and request shapes of the console's treasury and sweeps (operator only): destinations of swept funds with
// their change history, sweep policies, the sweep plan (dry run), sweep runs and their history. Amounts are decimal
// strings in the token (or the native coin where named), base units as digit strings.

const mode = z.enum(['test', 'live']);

export const destinationChange = z.object({
  actor: z.string(),
  changed_at: z.string(),
  old_treasury_address: z.string().nullable(),
  new_treasury_address: z.string().nullable(),
  old_hot_float: z.string().nullable(),
  new_hot_float: z.string(),
});

export const treasuryDestination = z.object({
  merchant_id: z.string(),
  network: z.string(),
  mode,
  treasury_address: z.string().nullable(),
  sweeps_go_to: z.string(),
  hot_float: z.string(),
  updated_by: z.string(),
  updated_at: z.string(),
  changes: z.array(destinationChange),
});
export type TreasuryDestination = z.infer<typeof treasuryDestination>;
export const destinationList = z.object({ data: z.array(treasuryDestination) });

/** POST /treasury/destinations: address null (or "none") sends sweeps to the refunds hot wallet. */
export const setDestinationBody = z.strictObject({
  merchant_id: z.string().min(1).max(64),
  network: z.enum(NETWORK_IDS),
  mode,
  address: z.string().min(1).max(128).nullable(),
  hot_float: z
    .string()
    .regex(/^\d{1,18}(\.\d{1,6})?$/)
    .optional(),
});
/** POST /treasury/destinations answers the destination set and its change row. */
export const destinationSet = z.object({
  merchant_id: z.string(),
  network: z.string(),
  mode,
  treasury_address: z.string().nullable(),
  hot_float: z.string(),
  audit: z.object({
    id: z.string(),
    actor: z.string(),
    changed_at: z.string(),
    old_treasury_address: z.string().nullable(),
    new_treasury_address: z.string().nullable(),
  }),
});
export type SetDestinationBody = z.infer<typeof setDestinationBody>;

export const sweepPolicy = z.object({
  network: z.string(),
  mode,
  token: z.string(),
  min_amount: z.string(),
  max_fee_bps: z.number().int(),
  /** 'default' or 'operator' (set by an operator). */
  source: z.string(),
});
export type SweepPolicy = z.infer<typeof sweepPolicy>;

export const setPolicyBody = z.strictObject({
  network: z.enum(NETWORK_IDS),
  mode,
  token: z.enum(['USDT', 'USDC']),
  min_amount: z.string().regex(/^\d{1,18}(\.\d{1,6})?$/),
  max_fee_bps: z.number().int().min(0).max(10_000),
});

export const operatorWalletNeed = z.object({
  network: z.string(),
  mode,
  role: z.enum(['gas_station', 'resources']),
  address: z.string(),
  token: z.string(),
  balance: z.string().nullable(),
  planned_spend: z.string(),
  waiting_addresses_need: z.string(),
  needed: z.string(),
  shortfall: z.string(),
  error: z.string().optional(),
});

export const sweepPlan = z.object({
  batches: z.array(
    z.object({
      merchant_id: z.string(),
      network: z.string(),
      mode,
      token: z.string(),
      method: z.string(),
      destination_kind: z.enum(['hot_wallet', 'treasury']),
      destination: z.string(),
      addresses: z.number().int(),
      amount: z.string().nullable(),
      amount_base: z.string(),
      steps: z.number().int(),
      transactions_by_purpose: z.record(z.string(), z.number().int()),
      estimated_fee_native_base: z.string(),
      estimated_fee_in_token: z.string().nullable(),
      fee_share_bps: z.number(),
      max_fee_bps: z.number(),
      price_source: z.string(),
      sources: z.array(z.object({ address: z.string(), amount: z.string().nullable() })),
    }),
  ),
  skipped: z.array(
    z.object({
      merchant_id: z.string(),
      network: z.string(),
      mode,
      token: z.string(),
      address: z.string(),
      amount: z.string().nullable(),
      reason: z.string(),
    }),
  ),
  operator_wallets: z.array(operatorWalletNeed),
});
export type SweepPlan = z.infer<typeof sweepPlan>;

export const runSweepBody = z.strictObject({
  network: z.enum(NETWORK_IDS),
  mode,
  merchant_id: z.string().min(1).max(64).optional(),
});
/** POST /sweeps/run answers at once: the sweeps created (the sweep worker advances them) and what waits. */
export const runSweepResponse = z.object({
  sweep_ids: z.array(z.string()),
  skipped: sweepPlan.shape.skipped,
  operator_wallets: z.array(operatorWalletNeed),
});

export const sweepStep = z.object({
  seq: z.number().int(),
  group: z.number().int(),
  purpose: z.string(),
  from: z.string(),
  status: z.string(),
  tx_hash: z.string().nullable(),
  /** Native base units. */
  fee: z.string().nullable(),
  failure_reason: z.string().nullable(),
  explorer_url: z.string().nullable(),
});

export const sweep = z.object({
  id: z.string(),
  merchant_id: z.string(),
  network: z.string(),
  mode,
  token: z.string(),
  method: z.string(),
  status: z.string(),
  destination_kind: z.string(),
  destination: z.string(),
  planned_base: z.string(),
  swept_base: z.string(),
  /** planned/swept as decimal strings in the token (null when its decimals are unknown here). */
  planned: z.string().nullable(),
  swept: z.string().nullable(),
  /** Fees in the network coin's base units (wei, sun, lamports) ... */
  estimated_fee: z.string(),
  actual_fee: z.string(),
  /** ... and as decimal strings in that coin (`fee_coin`: ETH, BNB, TRX or SOL). */
  fee_coin: z.string(),
  estimated_fee_native: z.string(),
  actual_fee_native: z.string(),
  fee_share_bps: z.number().nullable(),
  failure_reason: z.string().nullable(),
  created_at: z.string(),
  finished_at: z.string().nullable(),
});
export type Sweep = z.infer<typeof sweep>;

export const sweepDetail = sweep.extend({
  steps: z.array(sweepStep),
  sources: z.array(
    z.object({
      address: z.string(),
      planned_base: z.string(),
      swept_base: z.string().nullable(),
      state: z.string(),
      tx_hash: z.string().nullable(),
      explorer_url: z.string().nullable(),
    }),
  ),
});
export type SweepDetail = z.infer<typeof sweepDetail>;

/** A row of the sweeps history: the sweep and the transactions that moved its tokens so far (transfer or batch steps). */
export const sweepListItem = sweep.extend({
  /** How many token-moving transactions the sweep has sent; the first few are in `transactions`. */
  transaction_count: z.number().int(),
  transactions: z.array(z.object({ purpose: z.string(), tx_hash: z.string(), explorer_url: z.string().nullable() })),
});
export type SweepListItem = z.infer<typeof sweepListItem>;
export const sweepList = z.object({ data: z.array(sweepListItem), next_cursor: z.string().nullable() });
