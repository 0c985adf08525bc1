import { NETWORK_IDS } from '../../../chains/vocabulary.js';
import { z } from 'zod';

// Response shapes of the console's books (operator only): reconcile runs and their differences (base units, signed
// digit strings), unexplained journal entries and their acknowledgement, an account's journal legs (keyset pages).

const mode = z.enum(['test', 'live']);

export const reconcileDifference = z.object({
  account: z.string(),
  asset: z.string(),
  merchant_id: z.string().nullable(),
  journal_base: z.string(),
  chain_base: z.string(),
  /** journal − chain, base units (signed). */
  difference_base: z.string(),
  unexplained_base: z.string(),
});

export const reconcileRun = z.object({
  id: z.string(),
  network: z.string(),
  mode,
  height: z.string(),
  addresses: z.number().int(),
  balances: z.number().int(),
  differences: z.number().int(),
  rpc_calls: z.number().int(),
  duration_ms: z.number().int(),
  started_at: z.string(),
  finished_at: z.string(),
  difference_rows: z.array(reconcileDifference),
});
export type ReconcileRun = z.infer<typeof reconcileRun>;
export const reconcileRunList = z.object({ data: z.array(reconcileRun), next_cursor: z.string().nullable() });

export const startReconcileBody = z.strictObject({
  network: z.enum(NETWORK_IDS).optional(),
  mode,
});
/** POST /reconcile/run answers at once (202): the run goes on in the background; its rows appear in /reconcile/runs. */
export const startReconcileResponse = z.object({
  job_id: z.string(),
  chains: z.array(z.object({ network: z.string(), mode })),
  started_at: z.string(),
});

export const journalLeg = z.object({ account: z.string(), asset: z.string(), amount: z.string() });

export const unexplainedEntry = z.object({
  entry_id: z.string(),
  network: z.string(),
  mode,
  tx_hash: z.string(),
  block_height: z.string(),
  legs: z.array(journalLeg),
  acknowledged: z.boolean(),
  reversed: z.boolean(),
});
export type UnexplainedEntry = z.infer<typeof unexplainedEntry>;
export const unexplainedList = z.object({ data: z.array(unexplainedEntry) });

export const acknowledgeBody = z.strictObject({ note: z.string().trim().min(1).max(2000) });
export const acknowledgeResponse = z.object({ acknowledged: z.string() });

export const accountLeg = z.object({
  entry_id: z.string(),
  account: z.string(),
  asset: z.string(),
  /** Signed base units: positive into the account. */
  amount: z.string(),
  kind: z.string(),
  tx_hash: z.string(),
  block_height: z.string(),
  created_at: z.string(),
});
export type AccountLeg = z.infer<typeof accountLeg>;
export const accountLegList = z.object({ data: z.array(accountLeg), next_cursor: z.string().nullable() });
