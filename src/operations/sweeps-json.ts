import type { ChainRegistry } from '../../chains/chain-registry.js';
import type { Mode, NetworkId, TokenSymbol } from '../../chains/vocabulary.js';
import { formatBaseUnits, formatExact } from '../domain/money.js';
import type { listSweeps } from '../ledger/treasury/sweeps.js';
import { NATIVE_COINS } from '../rates/native-prices.js';
import type { SweepPlanReport } from '../treasury/planner.js';
import type { FeeMoneyNeed } from '../treasury/run.js';

// Sweep reports as JSON (the CLI's --json and the console's API): amounts as decimal strings from the registry's
// decimals, base units as digit strings. No business rule: the reports come from src/treasury/.

export type Decimals = ChainRegistry['tokenDecimals'];

export const native = (n: NetworkId, v: bigint) => formatExact(v, NATIVE_COINS[n].decimals);

export function operatorWalletsJson(report: SweepPlanReport) {
  return report.operatorWallets.map((w) => ({
    network: w.network,
    mode: w.mode,
    role: w.role,
    address: w.displayAddress,
    token: NATIVE_COINS[w.network].symbol,
    balance: w.balance === null ? null : native(w.network, w.balance),
    planned_spend: native(w.network, w.plannedSpend),
    waiting_addresses_need: native(w.network, w.waiting),
    needed: native(w.network, w.needed),
    shortfall: native(w.network, w.shortfall),
    ...(w.error ? { error: w.error } : {}),
  }));
}

export function feeMoneyJson(f: FeeMoneyNeed) {
  return {
    network: f.network,
    mode: f.mode,
    role: f.role,
    address: f.displayAddress,
    token: NATIVE_COINS[f.network].symbol,
    balance: native(f.network, f.balance),
    needed: native(f.network, f.needed),
    sweep_ids: f.sweepIds,
    waiting_addresses: f.waitingAddresses,
  };
}

export function planJson(report: SweepPlanReport, decimalsOf: Decimals) {
  const fmt = (n: NetworkId, m: Mode, t: TokenSymbol, v: bigint | null) => {
    const d = decimalsOf(n, m, t);
    return v === null ? null : d === undefined ? v.toString() : formatBaseUnits(v, d);
  };
  return {
    batches: report.batches.map((b) => ({
      merchant_id: b.merchantId,
      network: b.network,
      mode: b.mode,
      token: b.token,
      method: b.plan.method,
      destination_kind: b.destinationKind,
      destination: b.request.destination,
      addresses: b.request.sources.length,
      amount: fmt(b.network, b.mode, b.token, b.amountBase),
      amount_base: b.amountBase.toString(),
      steps: b.plan.steps.length,
      transactions_by_purpose: countBy(b.plan.steps.map((s) => s.purpose)),
      estimated_fee_native_base: b.estimatedCost.toString(),
      estimated_fee_in_token: fmt(b.network, b.mode, b.token, b.estimatedCostInToken),
      fee_share_bps: b.feeShareBps,
      max_fee_bps: b.policy.maxFeeBps,
      price_source: b.priceSource,
      sources: b.request.sources.map((s) => ({ address: s.address, amount: fmt(b.network, b.mode, b.token, s.amount) })),
    })),
    skipped: report.skipped.map((s) => ({
      merchant_id: s.merchantId,
      network: s.network,
      mode: s.mode,
      token: s.token,
      address: s.address,
      amount: fmt(s.network, s.mode, s.token, s.amountBase),
      reason: s.reason,
    })),
    operator_wallets: operatorWalletsJson(report),
  };
}

function countBy(xs: string[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const x of xs) out[x] = (out[x] ?? 0) + 1;
  return out;
}

export function sweepJson(s: Awaited<ReturnType<typeof listSweeps>>[number]) {
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
    estimated_fee: s.estimated_fee.toString(),
    actual_fee: s.actual_fee.toString(),
    fee_share_bps: s.fee_share_bps,
    failure_reason: s.failure_reason,
    created_at: s.created_at,
    finished_at: s.finished_at,
    steps: s.steps.map((st) => ({
      seq: st.seq,
      group: st.group_no,
      purpose: st.purpose,
      from: st.from_address,
      status: st.status,
      tx_hash: st.tx_hash,
      fee: st.fee?.toString() ?? null,
      failure_reason: st.failure_reason,
    })),
    sources: s.sources.map((x) => ({
      address: x.address,
      planned_base: x.planned_base.toString(),
      swept_base: x.swept_base?.toString() ?? null,
      state: x.state,
      tx_hash: x.tx_hash,
    })),
  };
}
