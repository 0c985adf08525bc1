import { formatBaseUnits } from '../domain/money.js';
import { type Decimals, feeMoneyJson, native, operatorWalletsJson, planJson, sweepJson } from '../operations/sweeps-json.js';
import { NATIVE_COINS } from '../rates/native-prices.js';
import type { SweepPlanReport } from '../treasury/planner.js';
import type { FeeMoneyNeed, SweepRows, SweepRunResult } from '../treasury/run.js';

export { feeMoneyJson, native, operatorWalletsJson, planJson, sweepJson };

// How `sweep plan`, `sweep run` and `sweep list` print: text for people by default, JSON with --json; amounts as decimal
// strings from the registry's decimals. No business rule: the reports come from src/treasury/.

const ROLE_NAME = { gas_station: 'gas station', resources: 'resources account' } as const;

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
