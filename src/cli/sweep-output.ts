import type { ChainRegistry } from '../../chains/registry.js';
import { formatBaseUnits, formatExact } from '../domain/money.js';
import type { Mode, NetworkId, TokenSymbol } from '../../chains/vocabulary.js';
import type { listSweeps } from '../ledger/treasury/sweeps.js';
import { NATIVE_COINS } from '../rates/native-prices.js';
import type { SweepPlanReport } from '../treasury/planner.js';
import type { FeeMoneyNeed, SweepRows, SweepRunResult } from '../treasury/run.js';

// How `sweep plan`, `sweep run` and `sweep list` print: text for people by default, JSON with --json; amounts as decimal
// strings from the registry's decimals. No business rule: the reports come from src/treasury/.

const ROLE_NAME = { gas_station: 'gas station', resources: 'resources account' } as const;
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

/** One human line per wallet short of fee money: network, mode, which wallet, address, balance, amount needed. */
export function feeMoneyLine(f: FeeMoneyNeed): string {
  const coin = NATIVE_COINS[f.network].symbol;
  const who = f.role ? ROLE_NAME[f.role] : 'wallet';
  return `${f.network} ${f.mode} ${who} ${f.displayAddress} holds ${native(f.network, f.balance)} ${coin}, needs ${native(f.network, f.needed)} ${coin}`;
}

export function runText(r: SweepRunResult, decimalsOf: Decimals): string {
  const lines: string[] = [];
  const amount = (s: SweepRows[number], v: bigint) => {
    const d = decimalsOf(s.network, s.mode, s.token);
    return d === undefined ? `${v} base units` : `${formatBaseUnits(v, d)} ${s.token}`;
  };
  const sweepLine = (s: SweepRows[number]) =>
    `  ${s.id} ${s.network} ${s.mode} ${s.method} ${s.status}: ${amount(s, s.swept_base)} of ${amount(s, s.planned_base)} swept${s.failure_reason ? ` (${s.failure_reason})` : ''}`;
  lines.push(`Created ${r.created.length} sweep(s):`, ...(r.created.length ? r.created.map(sweepLine) : ['  (none)']));
  if (r.resumed.length) lines.push(`Resumed ${r.resumed.length} sweep(s) left running:`, ...r.resumed.map(sweepLine));
  if (r.report.skipped.length) lines.push(`Waiting (${r.report.skipped.length} address(es); \`sweep plan\` says why).`);
  if (r.feeMoney.length) {
    lines.push('', 'Waiting for fee money an operator must add:');
    for (const f of r.feeMoney) lines.push(`  ${feeMoneyLine(f)}`);
    lines.push(
      'Sweeps waiting for it stay running: a worker (ROLES=worker) finishes them once the money arrives, or the next `sweep run`.',
    );
  } else if (r.stillRunning > 0)
    lines.push('', `${r.stillRunning} sweep(s) still running: a worker finishes them, or the next \`sweep run\`.`);
  return `${lines.join('\n')}\n`;
}

type Decimals = ChainRegistry['tokenDecimals'];

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

export function planTable(report: SweepPlanReport, decimalsOf: Decimals): string {
  const j = planJson(report, decimalsOf);
  const lines: string[] = [];
  const row = (cells: Array<string | number | null>) =>
    cells.map((c, i) => String(c ?? '').padEnd([10, 5, 6, 11, 15, 8, 16, 20, 10][i] ?? 0)).join(' ');
  lines.push('Would move:');
  lines.push(row(['network', 'mode', 'token', 'to', 'method', 'addrs', 'amount', 'est. fee (token)', 'fee share']));
  for (const b of j.batches)
    lines.push(
      row([
        b.network,
        b.mode,
        b.token,
        b.destination_kind,
        b.method,
        b.addresses,
        b.amount,
        b.estimated_fee_in_token,
        `${b.fee_share_bps} bps`,
      ]),
    );
  if (j.batches.length === 0) lines.push('  (nothing)');
  lines.push('', 'Waiting (skipped):');
  for (const s of j.skipped) lines.push(`  ${s.network} ${s.mode} ${s.token} ${s.address} ${s.amount ?? ''}: ${s.reason}`);
  if (j.skipped.length === 0) lines.push('  (nothing)');
  lines.push('', 'Operator wallets (fee money):');
  for (const w of j.operator_wallets) {
    const name = `${w.network} ${w.mode} ${ROLE_NAME[w.role]} ${w.address}`;
    if (w.balance === null) lines.push(`  ${name}: balance not read (${w.error ?? 'unknown'}); the plan needs ${w.needed} ${w.token}`);
    else
      lines.push(
        `  ${name}: holds ${w.balance} ${w.token}, the plan needs ${w.needed} ${w.token}${w.shortfall !== '0' ? `, short by ${w.shortfall} ${w.token}` : ''}`,
      );
  }
  if (j.operator_wallets.length === 0) lines.push('  (none)');
  return `${lines.join('\n')}\n`;
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
