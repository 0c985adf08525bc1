import type { ChainRegistry } from '../../chains/chain-registry.js';
import type { Mode, NetworkId, TokenSymbol } from '../../chains/vocabulary.js';
import type { Db } from '../db/database.js';
import { resourceNotFound } from '../domain/errors.js';
import { formatBaseUnits } from '../domain/money.js';
import { sweepById, sweepSources, sweepSteps, sweepsMovingTransactions, type SweepRow } from '../ledger/treasury/sweeps.js';
import { planSweeps, type PlanFilter } from '../treasury/planner.js';
import { createSweeps } from '../treasury/runner.js';
import { decodeKeyset, encodeKeyset } from './books-keyset.js';
import { NATIVE_COINS } from '../rates/native-prices.js';
import { native, operatorWalletsJson, planJson } from './sweeps-json.js';
import { plannerDepsOf, type SweepOpsDeps } from './treasury-deps.js';

// Sweeps for the console (and the CLI's dry run): the plan as JSON, starting a run that returns at once (the sweep
// worker drives the created sweeps), the history as keyset pages, one sweep with its steps, costs and explorer links.

/** The dry run `sweep plan --json` prints. */
export async function sweepPlan(d: SweepOpsDeps, filter: PlanFilter) {
  const report = await planSweeps(plannerDepsOf(d), filter);
  return planJson(report, d.adapters.tokenDecimals);
}

/** Plans and persists the sweeps, and answers at once with their ids: the sweep worker (ROLES=worker) sends them. */
export async function startSweeps(d: SweepOpsDeps, filter: PlanFilter) {
  const report = await planSweeps(plannerDepsOf(d), filter);
  const created = await createSweeps(d.db, report.batches);
  return {
    sweep_ids: created.map((s) => s.id),
    skipped: planJson(report, d.adapters.tokenDecimals).skipped,
    operator_wallets: operatorWalletsJson(report),
  };
}

function sweepSummary(s: SweepRow, chains: ChainRegistry) {
  const decimals = chains.tokenDecimals(s.network as NetworkId, s.mode as Mode, s.token as TokenSymbol);
  const fmt = (v: bigint) => (decimals === undefined ? null : formatBaseUnits(v, decimals));
  return {
    id: s.id,
    merchant_id: s.merchant_id,
    network: s.network,
    mode: s.mode,
    token: s.token,
    method: s.method,
    status: s.status,
    destination_kind: s.destination_kind,
    destination: s.destination,
    planned_base: s.planned_base.toString(),
    swept_base: s.swept_base.toString(),
    planned: fmt(s.planned_base),
    swept: fmt(s.swept_base),
    estimated_fee: s.estimated_fee.toString(),
    actual_fee: s.actual_fee.toString(),
    fee_coin: NATIVE_COINS[s.network as NetworkId].symbol,
    estimated_fee_native: native(s.network as NetworkId, s.estimated_fee),
    actual_fee_native: native(s.network as NetworkId, s.actual_fee),
    fee_share_bps: s.fee_share_bps,
    failure_reason: s.failure_reason,
    created_at: s.created_at.toISOString(),
    finished_at: s.finished_at?.toISOString() ?? null,
  };
}

/** How many of a sweep's token-moving transactions a history row links to (the rest are on the sweep's page). */
const HISTORY_TRANSACTIONS = 3;

/**
 * Sweeps newest first, keyset on (created_at, id) (index sweeps_list_idx per merchant), each with the transactions that
 * moved its tokens so far (the first few with explorer links, and how many there are).
 */
export async function sweepHistory(
  db: Db,
  chains: ChainRegistry,
  q: { merchantId?: string; status?: SweepRow['status']; network?: NetworkId; mode?: Mode; limit: number; cursor?: string },
) {
  const after = decodeKeyset(q.cursor);
  let query = db.selectFrom('sweeps').selectAll();
  if (q.merchantId) query = query.where('merchant_id', '=', q.merchantId);
  if (q.status) query = query.where('status', '=', q.status);
  if (q.network) query = query.where('network', '=', q.network);
  if (q.mode) query = query.where('mode', '=', q.mode);
  if (after) {
    const at = new Date(after.key);
    query = query.where((eb) => eb.or([eb('created_at', '<', at), eb.and([eb('created_at', '=', at), eb('id', '<', after.id)])]));
  }
  const rows = await query
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(q.limit + 1)
    .execute();
  const page = rows.slice(0, q.limit);
  const last = page[page.length - 1];
  const moving = new Map<string, Array<{ purpose: string; tx_hash: string | null }>>();
  for (const t of await sweepsMovingTransactions(
    db,
    page.map((s) => s.id),
  ))
    moving.set(t.sweep_id, [...(moving.get(t.sweep_id) ?? []), t]);
  return {
    data: page.map((s) => {
      const txs = moving.get(s.id) ?? [];
      return {
        ...sweepSummary(s, chains),
        transaction_count: txs.length,
        transactions: txs.slice(0, HISTORY_TRANSACTIONS).map((t) => ({
          purpose: t.purpose,
          tx_hash: t.tx_hash!,
          explorer_url: chains.explorerTxUrl(s.network, s.mode as Mode, t.tx_hash!),
        })),
      };
    }),
    next_cursor: rows.length > q.limit && last ? encodeKeyset({ key: last.created_at.toISOString(), id: last.id }) : null,
  };
}

/** One sweep with its steps (tx hashes, fees, explorer links) and sources; 404 when there is none. */
export async function sweepDetail(db: Db, chains: ChainRegistry, id: string) {
  const s = await sweepById(db, id);
  if (!s) throw resourceNotFound('id', `sweep: '${id}'`);
  const link = (hash: string | null) => (hash ? chains.explorerTxUrl(s.network, s.mode as Mode, hash) : null);
  const [steps, sources] = await Promise.all([sweepSteps(db, id), sweepSources(db, id)]);
  return {
    ...sweepSummary(s, chains),
    steps: steps.map((st) => ({
      seq: st.seq,
      group: st.group_no,
      purpose: st.purpose,
      from: st.from_address,
      status: st.status,
      tx_hash: st.tx_hash,
      fee: st.fee?.toString() ?? null,
      failure_reason: st.failure_reason,
      explorer_url: link(st.tx_hash),
    })),
    sources: sources.map((x) => ({
      address: x.address,
      planned_base: x.planned_base.toString(),
      swept_base: x.swept_base?.toString() ?? null,
      state: x.state,
      tx_hash: x.tx_hash,
      explorer_url: link(x.tx_hash),
    })),
  };
}
