import type { ChainRegistry } from '../../chains/chain-registry.js';
import { sql } from 'kysely';
import { networkEntry, networksOfFamily } from '../../chains/registry.js';
import { HOT_WALLET_SLOT, type ChainAdapter, type KeyDeriver } from '../../chains/types.js';
import type { Db } from '../db/database.js';
import { metrics } from '../metrics/registry.js';
import './hot-wallet-thresholds.js';

// Hot-wallet balances, read every METRICS_BALANCE_INTERVAL_MS (never on a scrape: one RPC call per wallet). Wallets are
// per merchant, and a merchant is never a label, so each gauge is the minimum (the wallet that will run dry first)
// and the sum over the wallets in use: the refund wallets of merchants with a refund in the last 30 days (on Solana
// also of merchants with a session in the last 7 days: that wallet pays the rent of their deposit token accounts) and
// the charge wallets of merchants with a live subscription. `payouts wallets` names the wallet behind a low minimum.
// Amounts are whole tokens and coins (floats are fine for monitoring; the ledger never reads these).

const SLOTS = ['refunds', 'charges'] as const;
type Slot = (typeof SLOTS)[number];
type L = 'network' | 'mode' | 'slot' | 'asset';
const LABELS = ['network', 'mode', 'slot', 'asset'] as const;
const VALUES = { mode: ['test', 'live'], slot: SLOTS, asset: ['native', 'USDT', 'USDC', 'energy', 'bandwidth'] } as const;

const minBalance = metrics.gauge<L>({
  name: 'stablepay_hot_wallet_min_balance',
  help: 'Lowest balance among the hot wallets in use (whole units; energy and bandwidth in TRON units).',
  labels: LABELS,
  values: VALUES,
});
const totalBalance = metrics.gauge<L>({
  name: 'stablepay_hot_wallet_total_balance',
  help: 'Sum of the balances of the hot wallets in use (whole units).',
  labels: LABELS,
  values: VALUES,
});
const walletsRead = metrics.gauge<'network' | 'mode' | 'slot'>({
  name: 'stablepay_hot_wallets_read',
  help: 'Hot wallets whose balances the last read covered.',
  labels: ['network', 'mode', 'slot'],
  values: { mode: ['test', 'live'], slot: SLOTS },
});
const readErrors = metrics.counter<'network' | 'mode'>({
  name: 'stablepay_hot_wallet_read_errors_total',
  help: 'Hot-wallet balance reads that failed.',
  labels: ['network', 'mode'],
  values: { mode: ['test', 'live'] },
});
const lastRead = metrics.gauge<never>({
  name: 'stablepay_hot_wallet_last_read_timestamp_seconds',
  help: 'Unix time the last balance read finished.',
  labels: [],
});

/** Whole units of `v` base units (a float, for monitoring only). */
const whole = (v: bigint, decimals: number): number => Number(v) / 10 ** decimals;

/** Networks whose refund wallet pays the rent of deposit token accounts (the Solana family's: docs/solana.md). */
const rentPayingNetworks = networksOfFamily('solana');

/** `network`: only for that network's wallets (null: every network of the mode). */
async function accountsInUse(db: Db): Promise<Array<{ mode: string; account: number; slot: Slot; network: string | null }>> {
  const { rows } = await sql<{ mode: string; account_index: number; slot: Slot; network: string | null }>`
    select a.mode, a.account_index, 'refunds' as slot, null as network from merchant_hd_accounts a
    where exists (select 1 from refunds r where r.merchant_id = a.merchant_id and r.mode = a.mode and r.created_at > now() - interval '30 days')
    union all
    select a.mode, a.account_index, 'refunds' as slot, p.network from merchant_hd_accounts a
    join lateral (
      select distinct p.network from payment_sessions p
      where p.merchant_id = a.merchant_id and p.mode = a.mode and p.created_at > now() - interval '7 days' and p.network = any(${rentPayingNetworks}::text[])
    ) p on true
    union all
    select a.mode, a.account_index, 'charges' as slot, null as network from merchant_hd_accounts a
    where exists (select 1 from subscriptions s where s.merchant_id = a.merchant_id and s.mode = a.mode and s.status in ('trialing', 'active', 'past_due'))
    limit 3000`.execute(db);
  return rows.map((r) => ({ mode: r.mode, account: r.account_index, slot: r.slot, network: r.network }));
}

export async function readHotWalletBalances(deps: { db: Db; adapters: ChainRegistry; keys: KeyDeriver }): Promise<void> {
  const accounts = await accountsInUse(deps.db);
  for (const adapter of deps.adapters) {
    for (const slot of SLOTS) {
      const mine = [
        ...new Set(
          accounts
            .filter((a) => a.mode === adapter.mode && a.slot === slot && (a.network === null || a.network === adapter.network))
            .map((a) => a.account),
        ),
      ];
      const sums = new Map<string, { min: number; total: number }>();
      const add = (asset: string, v: number) => {
        const s = sums.get(asset);
        sums.set(asset, s ? { min: Math.min(s.min, v), total: s.total + v } : { min: v, total: v });
      };
      let read = 0;
      for (const a of mine) {
        try {
          const wallet = await adapter.deriveHotWallet(deps.keys, a, HOT_WALLET_SLOT[slot]);
          const b = await adapter.getBalances(wallet.address);
          add('native', whole(b.native, networkEntry(adapter.network)?.nativeCoin.decimals ?? 18));
          for (const t of adapter.tokens) add(t.symbol, whole(b.tokens[t.symbol] ?? 0n, t.decimals));
          if (adapter.describeFeeResources) {
            const r = await adapter.describeFeeResources(wallet.address);
            for (const asset of ['energy', 'bandwidth'] as const) {
              const available = (r[asset] as { available?: unknown } | undefined)?.available;
              if (typeof available === 'bigint' || typeof available === 'number') add(asset, Number(available));
            }
          }
          read++;
        } catch {
          readErrors.inc({ network: adapter.network, mode: adapter.mode });
        }
      }
      walletsRead.set({ network: adapter.network, mode: adapter.mode, slot }, read);
      for (const [asset, s] of sums) {
        const l = { network: adapter.network, mode: adapter.mode, slot, asset };
        minBalance.set(l, s.min);
        totalBalance.set(l, s.total);
      }
    }
  }
  lastRead.set({}, Date.now() / 1000);
}

/** Reads now and then every `intervalMs`; a read still running when the next is due is not doubled. */
export function startHotWalletReader(
  deps: Parameters<typeof readHotWalletBalances>[0] & { intervalMs: number; onError?: (err: unknown) => void },
): { stop(): Promise<void> } {
  let current: Promise<void> | null = null;
  const tick = () => {
    current ??= readHotWalletBalances(deps)
      .catch((e: unknown) => deps.onError?.(e))
      .finally(() => {
        current = null;
      });
  };
  tick();
  const timer = setInterval(tick, deps.intervalMs);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await current;
    },
  };
}
