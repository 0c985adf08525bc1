import type { ChainRegistry } from '../../chains/chain-registry.js';
import {
  isSweeper,
  type ChainAdapter,
  type KeyDeriver,
  type SweepMethodImpl,
  type SweepPlan,
  type SweepRequest,
  type SweepSource,
  type Sweeper,
} from '../../chains/types.js';
import type { Db } from '../db/database.js';
import { STABLECOIN_EXPONENT, type Mode, type NetworkId, type TokenSymbol } from '../../chains/vocabulary.js';
import { merchantAccountIndex } from '../ledger/merchants/merchants.js';
import { hasRunningSweep, sweepCandidates } from '../ledger/treasury/sweeps.js';
import { treasuryDestination } from '../ledger/treasury/destinations.js';
import { NATIVE_COINS, type NativePriceService } from '../rates/native-prices.js';
import { feeShareBps, nativeInTokenBase, sweepPolicy, type SweepPolicy } from './policy.js';
import { depositWallet, operatorWallets, refundsHotWallet } from './wallets.js';

// The sweep planner: a dry run that reads, decides and reports, and writes nothing (docs/treasury.md, Planner).
// Candidates are the deposit addresses with final, credited deposits the ledger has not yet seen leave; their balance
// is read at the chain's final height (batched); the policy skips what is not worth sweeping, with the reason. The
// refunds hot wallet is topped up to its float first (whole addresses, largest first), the rest goes to the treasury.

export interface PlannerDeps {
  db: Db;
  adapters: ChainRegistry;
  keys: KeyDeriver;
  /** Prices fees in the token; null: no batch can be priced, so none is planned. */
  prices: NativePriceService | null;
}

export interface PlanFilter {
  merchantId?: string;
  network?: NetworkId;
  mode?: Mode;
  token?: TokenSymbol;
}

export interface PlannedBatch {
  merchantId: string;
  network: NetworkId;
  mode: Mode;
  token: TokenSymbol;
  destinationKind: 'hot_wallet' | 'treasury';
  request: SweepRequest;
  plan: SweepPlan;
  /** Token base units the batch moves (the sum of its sources' amounts). */
  amountBase: bigint;
  /** The plan's estimated cost in native base units, and priced in the token's base units. */
  estimatedCost: bigint;
  estimatedCostInToken: bigint;
  feeShareBps: number;
  priceSource: string;
  policy: SweepPolicy;
}

export interface SkippedAddress {
  merchantId: string;
  network: NetworkId;
  mode: Mode;
  token: TokenSymbol;
  address: string;
  /** Final balance read (base units); null when it was not read. */
  amountBase: bigint | null;
  reason: string;
  /** Skipped because an operator wallet lacks the native coin: that wallet (canonical) and what this address needs of it. */
  waitsFor?: { wallet: string; amount: bigint };
}

/**
 * An operator wallet the plan spends from (docs/treasury.md, "Operator wallets"): the gas station of each network, and
 * TRON's resources account. Native base units: its balance (null when it could not be read), what the planned batches
 * spend from it, what the addresses waiting for it would need, and the shortfall (`needed` - `balance`, at least 0).
 */
export interface OperatorWalletNeed {
  network: NetworkId;
  mode: Mode;
  role: 'gas_station' | 'resources';
  /** Canonical address; `displayAddress` as the chain's explorers show it. */
  address: string;
  displayAddress: string;
  balance: bigint | null;
  /** Why the balance could not be read. */
  error?: string;
  plannedSpend: bigint;
  waiting: bigint;
  needed: bigint;
  shortfall: bigint;
}

export interface SweepPlanReport {
  batches: PlannedBatch[];
  skipped: SkippedAddress[];
  /** Per planned network and mode, the operator wallets and the fee money the plan needs in them. */
  operatorWallets: OperatorWalletNeed[];
}

export async function planSweeps(deps: PlannerDeps, filter: PlanFilter = {}): Promise<SweepPlanReport> {
  const report: SweepPlanReport = { batches: [], skipped: [], operatorWallets: [] };
  for (const adapter of deps.adapters) {
    if (filter.network && adapter.network !== filter.network) continue;
    if (filter.mode && adapter.mode !== filter.mode) continue;
    if (!isSweeper(adapter)) continue;
    for (const token of adapter.tokens) {
      if (filter.token && token.symbol !== filter.token) continue;
      await planToken(deps, adapter, token.symbol, token.decimals, filter.merchantId, report);
    }
    report.operatorWallets.push(...(await operatorNeeds(deps, adapter, report)));
  }
  return report;
}

/** The operator wallets of one network and mode, with what the report's batches and waiting addresses need of them. */
async function operatorNeeds(deps: PlannerDeps, adapter: ChainAdapter & Sweeper, report: SweepPlanReport): Promise<OperatorWalletNeed[]> {
  const { network, mode } = adapter;
  const operator = await operatorWallets(deps.db, adapter, deps.keys);
  const wallets: Array<[OperatorWalletNeed['role'], string]> = [['gas_station', operator.gasStation.address]];
  if (adapter.family === 'tron') wallets.push(['resources', operator.resources.address]);
  const canon = (a: string) => adapter.normalizeAddress(a) ?? a;
  const out: OperatorWalletNeed[] = [];
  for (const [role, raw] of wallets) {
    const address = canon(raw);
    let plannedSpend = 0n;
    for (const b of report.batches)
      if (b.network === network && b.mode === mode)
        for (const st of b.plan.steps) if (canon(st.from.address) === address) plannedSpend += st.estimatedFee + st.value;
    let waiting = 0n;
    for (const s of report.skipped)
      if (s.network === network && s.mode === mode && s.waitsFor && canon(s.waitsFor.wallet) === address) waiting += s.waitsFor.amount;
    let balance: bigint | null = null;
    let error: string | undefined;
    try {
      balance = (await adapter.getBalances(address)).native;
    } catch (err) {
      error = (err as Error).message;
    }
    const needed = plannedSpend + waiting;
    const shortfall = balance !== null && needed > balance ? needed - balance : 0n;
    out.push({
      network,
      mode,
      role,
      address,
      displayAddress: adapter.displayAddress(address),
      balance,
      ...(error ? { error } : {}),
      plannedSpend,
      waiting,
      needed,
      shortfall,
    });
  }
  return out;
}

async function planToken(
  deps: PlannerDeps,
  adapter: ChainAdapter & Sweeper,
  token: TokenSymbol,
  decimals: number,
  merchantId: string | undefined,
  report: SweepPlanReport,
): Promise<void> {
  const network = adapter.network;
  const mode = adapter.mode;
  const candidates = await sweepCandidates(deps.db, { network, mode, token, ...(merchantId ? { merchantId } : {}) });
  if (candidates.length === 0) return;
  const skip = (m: string, address: string, amountBase: bigint | null, reason: string, waitsFor?: SkippedAddress['waitsFor']) =>
    report.skipped.push({ merchantId: m, network, mode, token, address, amountBase, reason, ...(waitsFor ? { waitsFor } : {}) });
  const policy = await sweepPolicy(deps.db, network, mode, token, decimals);
  const balances = await adapter.finalTokenBalances(
    token,
    candidates.map((c) => c.address),
  );
  const byMerchant = new Map<string, SweepSource[]>();
  for (const [i, c] of candidates.entries()) {
    const balance = balances[i] ?? 0n;
    if (balance === 0n) continue; // swept already (or not final yet): nothing to report
    if (balance < policy.minAmountBase) {
      skip(c.merchant_id, c.address, balance, `below the minimum: ${balance} < ${policy.minAmountBase} base units`);
      continue;
    }
    const wallet = await depositWallet(adapter, deps.keys, c.hd_account, c.address_index, c.address);
    if ('error' in wallet) {
      skip(c.merchant_id, c.address, balance, wallet.error);
      continue;
    }
    const list = byMerchant.get(c.merchant_id) ?? [];
    list.push({ ...wallet, amount: balance });
    byMerchant.set(c.merchant_id, list);
  }
  const operator = await operatorWallets(deps.db, adapter, deps.keys);
  for (const [m, sources] of byMerchant) {
    if (await hasRunningSweep(deps.db, { merchantId: m, network, mode, token })) {
      for (const s of sources) skip(m, s.address, s.amount, 'a sweep of this token is running; planned again once it ends');
      continue;
    }
    const dest = await treasuryDestination(deps.db, m, network, mode);
    const account = await merchantAccountIndex(deps.db, m, mode);
    const hot = await refundsHotWallet(adapter, deps.keys, account);
    const groups: Array<{ kind: 'hot_wallet' | 'treasury'; destination: string; sources: SweepSource[] }> = [];
    if (!dest?.treasury_address) groups.push({ kind: 'hot_wallet', destination: hot.address, sources });
    else {
      const floatBase = (dest.hot_float_minor ?? 0n) * 10n ** BigInt(Math.max(0, decimals - STABLECOIN_EXPONENT));
      const held = floatBase > 0n ? ((await adapter.getBalances(hot.address)).tokens[token] ?? 0n) : 0n;
      let deficit = floatBase - held;
      const toHot: SweepSource[] = [];
      const toTreasury: SweepSource[] = [];
      for (const s of [...sources].sort((a, b) => (a.amount > b.amount ? -1 : a.amount < b.amount ? 1 : 0))) {
        if (deficit > 0n) {
          toHot.push(s);
          deficit -= s.amount;
        } else toTreasury.push(s);
      }
      if (toHot.length) groups.push({ kind: 'hot_wallet', destination: hot.address, sources: toHot });
      if (toTreasury.length) groups.push({ kind: 'treasury', destination: dest.treasury_address, sources: toTreasury });
    }
    // Both of the merchant's destinations, whichever this group goes to: the EIP-7702 delegate its deposit keys
    // authorize is bound to exactly these (docs/treasury-evm-7702.md), the same one for both groups.
    const destinations = dest?.treasury_address ? [hot.address, dest.treasury_address] : [hot.address];
    for (const g of groups) {
      const request: SweepRequest = {
        token,
        sources: g.sources,
        destination: g.destination,
        destinations,
        gasStation: operator.gasStation,
        resources: operator.resources,
      };
      const batches = await planBatches(deps, adapter, m, token, decimals, g.kind, request, policy, (a, amt, r, w) =>
        skip(m, a, amt, r, w),
      );
      report.batches.push(...batches);
    }
  }
}

/**
 * The batches of one destination: the first available method (cheapest first) plans every source; the sources it
 * cannot sweep now (TRON: the resources account's stake does not cover their energy) are offered to the next available
 * method, and so on; what no method takes is reported with every method's reason. Each method's batch is priced and
 * weighed against the fee policy on its own.
 */
async function planBatches(
  deps: PlannerDeps,
  adapter: ChainAdapter & Sweeper,
  merchantId: string,
  token: TokenSymbol,
  decimals: number,
  destinationKind: 'hot_wallet' | 'treasury',
  request: SweepRequest,
  policy: SweepPolicy,
  skip: Skip,
): Promise<PlannedBatch[]> {
  const out: PlannedBatch[] = [];
  const reasons: string[] = [];
  const why = new Map<string, string[]>();
  /** The operator wallet the last method that declined an address said it waits for. */
  const waits = new Map<string, SkippedAddress['waitsFor']>();
  let left = request;
  for (const m of adapter.sweepMethods()) {
    if (left.sources.length === 0) break;
    const ok = await m.available();
    if (!ok.ok) {
      reasons.push(`${m.method}: ${ok.reason}`);
      continue;
    }
    // A source an earlier method declined is reported with that method's reason too.
    const skipWithHistory: Skip = (address, amount, reason, waitsFor) => {
      const before = why.get(address);
      skip(address, amount, before ? `${before.join('; ')}; ${m.method}: ${reason}` : reason, waitsFor);
    };
    const r = await planBatch(deps, adapter, m, merchantId, token, decimals, destinationKind, left, policy, skipWithHistory);
    if (r.batch) out.push(r.batch);
    for (const s of r.declined) {
      why.set(s.address, [...(why.get(s.address) ?? []), `${m.method}: ${s.reason}`]);
      if (s.waitsFor) waits.set(s.address, s.waitsFor);
      else waits.delete(s.address);
    }
    const declined = new Set(r.declined.map((s) => s.address));
    left = { ...left, sources: left.sources.filter((s) => declined.has(s.address)) };
  }
  if (left === request && reasons.length > 0)
    for (const s of request.sources) skip(s.address, s.amount, `no sweep method available (${reasons.join('; ')})`);
  else if (left === request) for (const s of request.sources) skip(s.address, s.amount, 'no sweep method available (none offered)');
  else for (const s of left.sources) skip(s.address, s.amount, (why.get(s.address) ?? []).join('; '), waits.get(s.address));
  return out;
}

type Skip = (address: string, amount: bigint | null, reason: string, waitsFor?: SkippedAddress['waitsFor']) => void;
type Declined = { address: string; reason: string; waitsFor?: SkippedAddress['waitsFor'] };

/** One method's batch; `declined`: the sources the method cannot sweep now (offered to the next method). */
async function planBatch(
  deps: PlannerDeps,
  adapter: ChainAdapter & Sweeper,
  method: SweepMethodImpl,
  merchantId: string,
  token: TokenSymbol,
  decimals: number,
  destinationKind: 'hot_wallet' | 'treasury',
  request: SweepRequest,
  policy: SweepPolicy,
  skip: Skip,
): Promise<{ batch?: PlannedBatch; declined: Declined[] }> {
  const skipAll = (r: SweepRequest, reason: string) => {
    for (const s of r.sources) skip(s.address, s.amount, reason);
    return { declined };
  };
  let declined: Declined[] = [];
  let plan = await method.plan(request);
  if (plan.skipped.length > 0) {
    // The method cannot sweep these now: plan the rest alone; the caller offers them to the next method.
    const out = new Set(plan.skipped.map((s) => s.address));
    declined = request.sources
      .filter((s) => out.has(s.address))
      .map((s) => {
        const x = plan.skipped.find((y) => y.address === s.address)!;
        return { address: s.address, reason: x.reason, ...(x.waitsFor ? { waitsFor: x.waitsFor } : {}) };
      });
    // A skipped address the method names in another form than the request's: reported here, not offered again.
    for (const s of plan.skipped) if (!declined.some((d) => d.address === s.address)) skip(s.address, null, s.reason, s.waitsFor);
    request = { ...request, sources: request.sources.filter((s) => !out.has(s.address)) };
    if (request.sources.length === 0) return { declined };
    plan = await method.plan(request);
    if (plan.skipped.length > 0) return skipAll(request, `the ${method.method} plan keeps changing; planned again next time`);
  }
  const amountBase = request.sources.reduce((t, s) => t + s.amount, 0n);
  const native = NATIVE_COINS[adapter.network];
  let price;
  try {
    if (!deps.prices) throw new Error('no native price source configured');
    price = await deps.prices.price(native.symbol, token);
  } catch (err) {
    return skipAll(request, `fees cannot be priced: no ${native.symbol} price (${(err as Error).message})`);
  }
  const costInToken = nativeInTokenBase(plan.estimatedCost, price.rate, native.decimals, decimals);
  const share = feeShareBps(costInToken, amountBase);
  if (share > policy.maxFeeBps)
    return skipAll(request, `fee share too high: ${share} bps of the batch > ${policy.maxFeeBps} bps allowed (waits until it is worth it)`);
  const batch: PlannedBatch = {
    merchantId,
    network: adapter.network,
    mode: adapter.mode,
    token,
    destinationKind,
    request,
    plan,
    amountBase,
    estimatedCost: plan.estimatedCost,
    estimatedCostInToken: costInToken,
    feeShareBps: share,
    priceSource: price.source,
    policy,
  };
  return { batch, declined };
}
