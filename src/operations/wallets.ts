import type { Mode, NetworkId } from '../../chains/vocabulary.js';
import { networkEntry } from '../../chains/registry.js';
import { formatBaseUnits, formatExact } from '../domain/money.js';
import { listOperatorWallets, type OperatorWallet } from '../treasury/operator-wallets.js';
import { plannerDepsOf, type SweepOpsDeps } from './treasury-deps.js';

// The operator's wallets (src/treasury/operator-wallets.ts, the `wallets` command's function) as JSON, for the CLI and
// the console: balances as decimal strings. The console's read is bounded by a timeout and cached a few seconds (it
// reads every chain); the nonce the service holds and the attempts still pending come from the ledger.

export interface WalletQuery {
  network?: NetworkId;
  mode?: Mode;
  merchantId?: string;
}

/** One wallet as `wallets --json` prints it. */
export function walletJson(w: OperatorWallet) {
  const nat = (v: bigint) => formatExact(v, w.native.decimals);
  return {
    network: w.network,
    mode: w.mode,
    role: w.role,
    merchant_id: w.merchantId,
    address: w.address,
    native: w.native.symbol,
    balance: w.balances ? nat(w.balances.native) : null,
    tokens: w.balances
      ? Object.fromEntries(w.tokens.map((t) => [t.symbol, formatBaseUnits(w.balances!.tokens[t.symbol] ?? 0n, t.decimals)]))
      : null,
    ...(w.error ? { error: w.error } : {}),
    next_sweep_plan: w.nextPlan
      ? {
          planned_spend: nat(w.nextPlan.plannedSpend),
          waiting_addresses_need: nat(w.nextPlan.waiting),
          needed: nat(w.nextPlan.needed),
          shortfall: nat(w.nextPlan.shortfall),
        }
      : null,
  };
}

/** The wallets with their balances (the CLI: no timeout, no cache). */
export async function operatorWalletList(d: SweepOpsDeps, q: WalletQuery): Promise<OperatorWallet[]> {
  return listOperatorWallets(plannerDepsOf(d), q);
}

const CACHE_MS = 5_000;
const cache = new Map<string, { at: number; value: Promise<ConsoleWallets> }>();

export type ConsoleWallets = Awaited<ReturnType<typeof readConsoleWallets>>;

/**
 * The console's wallets: every wallet with balances, the held nonce, pending attempts and the next plan's need. Chains
 * are read within `timeoutMs`; past it (or without keys) the list is empty and `error` says why, never an exception.
 */
export async function consoleWallets(d: SweepOpsDeps, q: WalletQuery, o: { timeoutMs?: number; now?: number } = {}) {
  const key = JSON.stringify([q.network ?? null, q.mode ?? null, q.merchantId ?? null]);
  const now = o.now ?? Date.now();
  const hit = cache.get(key);
  if (hit && now - hit.at < CACHE_MS) return hit.value;
  const value = readConsoleWallets(d, q, o.timeoutMs ?? 8_000);
  cache.set(key, { at: now, value });
  value.catch(() => cache.delete(key));
  return value;
}

async function readConsoleWallets(d: SweepOpsDeps, q: WalletQuery, timeoutMs: number) {
  if ([...d.adapters].length === 0) return { data: [], error: null as string | null };
  if (!d.treasury?.keys) return { data: [], error: 'HD_MNEMONIC or HD_ACCOUNT_XPUBS is not configured: the wallets cannot be derived' };
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => resolve('timeout'), timeoutMs);
  });
  try {
    const wallets = await Promise.race([operatorWalletList(d, q), timeout]);
    if (wallets === 'timeout') return { data: [], error: `the chains did not answer within ${timeoutMs} ms` };
    const ledger = await walletLedgerState(d, wallets);
    return {
      data: wallets.map((w) => ({
        ...walletJson(w),
        energy: w.resources?.energy.toString() ?? null,
        bandwidth: w.resources?.bandwidth.toString() ?? null,
        ...ledger(w),
      })),
      error: null as string | null,
    };
  } finally {
    clearTimeout(timer);
  }
}

/** Per wallet: the next nonce the service holds for it and its payout and sweep attempts still pending. */
async function walletLedgerState(d: SweepOpsDeps, wallets: OperatorWallet[]) {
  const nonces = await d.db.selectFrom('hot_wallet_nonces').select(['network', 'mode', 'address', 'next_nonce']).execute();
  const payouts = await d.db
    .selectFrom('payout_attempts')
    .select(['network', 'mode', 'sender as address', (eb) => eb.fn.countAll<string>().as('n')])
    .where('state', 'in', ['signed', 'broadcast'])
    .groupBy(['network', 'mode', 'sender'])
    .execute();
  const sweeps = await d.db
    .selectFrom('sweep_step_attempts as a')
    .innerJoin('sweep_steps as s', 's.id', 'a.step_id')
    .innerJoin('sweeps as w', 'w.id', 's.sweep_id')
    .select(['w.network', 'w.mode', 's.from_address as address', (eb) => eb.fn.countAll<string>().as('n')])
    .where('a.state', 'in', ['signed', 'broadcast'])
    .groupBy(['w.network', 'w.mode', 's.from_address'])
    .execute();
  const same = (w: OperatorWallet, r: { network: string; mode: string; address: string }) =>
    r.network === w.network &&
    r.mode === w.mode &&
    // EVM addresses compare without case (checksummed or not); TRON and Solana addresses are case-sensitive.
    (networkEntry(w.network)?.family === 'evm' ? r.address.toLowerCase() === w.address.toLowerCase() : r.address === w.address);
  return (w: OperatorWallet) => ({
    nonce: nonces.find((r) => same(w, r))?.next_nonce.toString() ?? null,
    pending_attempts: [...payouts, ...sweeps].filter((r) => same(w, r)).reduce((n, r) => n + Number(r.n), 0),
  });
}
