import { isSweeper } from '../../chains/types.js';
import type { Mode, NetworkId, TokenSymbol } from '../../chains/vocabulary.js';
import { merchantAccounts } from '../ledger/merchants/merchants.js';
import { NATIVE_COINS } from '../rates/native-prices.js';
import { planSweeps, type OperatorWalletNeed, type PlannerDeps } from './planner.js';
import { operatorWallets, refundsHotWallet } from './wallets.js';

// Every wallet the operator keeps funded, in one list (docs/treasury.md, "Operator wallets"): per configured network
// and mode the sweeps' gas station, TRON's resources account, and each merchant's refunds hot wallet, with their
// balances (base units; the caller formats them with `decimals`) and, for the sweeps' wallets, what the next sweep plan
// needs of them. Read-only: nothing is registered or signed. No formatting here: the CLI (and a console) present it.

export type OperatorWalletRole = 'gas_station' | 'resources' | 'refunds';

export interface OperatorWallet {
  network: NetworkId;
  mode: Mode;
  role: OperatorWalletRole;
  /** The refunds hot wallet's merchant. */
  merchantId: string | null;
  /** As the chain's explorers show it. */
  address: string;
  /** The native coin and each configured token, with their decimals (the token registry's). */
  native: { symbol: string; decimals: number };
  tokens: Array<{ symbol: TokenSymbol; decimals: number }>;
  /** Base units; null when they could not be read (`error` says why). */
  balances: { native: bigint; tokens: Partial<Record<TokenSymbol, bigint>> } | null;
  /** TRON: the energy and bandwidth (bytes) available now; null where the chain has no such resources or unread. */
  resources: { energy: bigint; bandwidth: bigint } | null;
  error?: string;
  /** Sweeps' wallets only: what the next plan spends from it and the addresses waiting for it need, the shortfall. */
  nextPlan: Pick<OperatorWalletNeed, 'plannedSpend' | 'waiting' | 'needed' | 'shortfall'> | null;
}

export interface WalletFilter {
  network?: NetworkId;
  mode?: Mode;
  /** Only this merchant's refunds hot wallets (the operator's own wallets are listed all the same). */
  merchantId?: string;
}

export async function listOperatorWallets(deps: PlannerDeps, filter: WalletFilter = {}): Promise<OperatorWallet[]> {
  // What the next plan needs, per operator wallet (a dry run: it reads and writes nothing).
  const plan = await planSweeps(deps, {
    ...(filter.network ? { network: filter.network } : {}),
    ...(filter.mode ? { mode: filter.mode } : {}),
  });
  const accounts = await merchantAccounts(deps.db, {
    ...(filter.merchantId ? { merchantId: filter.merchantId } : {}),
    ...(filter.mode ? { mode: filter.mode } : {}),
  });
  const out: OperatorWallet[] = [];
  for (const adapter of deps.adapters) {
    if (filter.network && adapter.network !== filter.network) continue;
    if (filter.mode && adapter.mode !== filter.mode) continue;
    const wallets: Array<{ role: OperatorWalletRole; merchantId: string | null; address: string }> = [];
    if (isSweeper(adapter)) {
      const op = await operatorWallets(deps.db, adapter, deps.keys);
      wallets.push({ role: 'gas_station', merchantId: null, address: op.gasStation.address });
      if (adapter.family === 'tron') wallets.push({ role: 'resources', merchantId: null, address: op.resources.address });
    }
    for (const a of accounts)
      if (a.mode === adapter.mode)
        wallets.push({
          role: 'refunds',
          merchantId: a.merchant_id,
          address: (await refundsHotWallet(adapter, deps.keys, a.account_index)).address,
        });
    for (const w of wallets) {
      const address = adapter.normalizeAddress(w.address) ?? w.address;
      const need = plan.operatorWallets.find((n) => n.network === adapter.network && n.mode === adapter.mode && n.address === address);
      let balances: OperatorWallet['balances'] = null;
      let resources: OperatorWallet['resources'] = null;
      let error: string | undefined;
      try {
        const b = await adapter.getBalances(address);
        balances = { native: b.native, tokens: b.tokens };
        if (adapter.describeFeeResources) resources = resourcesOf(await adapter.describeFeeResources(address));
      } catch (err) {
        error = (err as Error).message;
      }
      out.push({
        network: adapter.network,
        mode: adapter.mode,
        role: w.role,
        merchantId: w.merchantId,
        address: adapter.displayAddress(address),
        native: NATIVE_COINS[adapter.network],
        tokens: adapter.tokens.map((t) => ({ symbol: t.symbol, decimals: t.decimals })),
        balances,
        resources,
        ...(error ? { error } : {}),
        nextPlan: need ? { plannedSpend: need.plannedSpend, waiting: need.waiting, needed: need.needed, shortfall: need.shortfall } : null,
      });
    }
  }
  return out;
}

/** Energy and bandwidth available, from an adapter's describeFeeResources (TRON's `{energy, bandwidth}.available`). */
function resourcesOf(r: Record<string, unknown>): OperatorWallet['resources'] {
  const available = (k: string) => (r[k] as { available?: unknown } | undefined)?.available;
  const energy = available('energy');
  const bandwidth = available('bandwidth');
  return typeof energy === 'bigint' && typeof bandwidth === 'bigint' ? { energy, bandwidth } : null;
}
