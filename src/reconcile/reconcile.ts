import type { ChainRegistry } from '../../chains/registry.js';
import { isBalanceReader, type BalanceQuery, type BalanceReader, type ChainAdapter, type TokenSymbol } from '../../chains/types.js';
import type { Db } from '../db/database.js';
import type { Mode } from '../domain/vocabulary.js';
import { accountAddress, addressAccount, assetPrefix, journalAsset, journalBalancesAt } from '../ledger/journal.js';
import {
  addressesWithTransfersInFlight,
  bookOpeningBalances,
  depositSessions,
  lastRunHeight,
  recordUnexplainedNative,
  registeredWallets,
  type RegisteredWallet,
} from '../ledger/journal-native.js';
import { addressMerchants, lastRunAgeMs, storeReconcileRun, watcherFinalHeight, withReconcileLock } from '../ledger/reconcile-runs.js';
import { reconciliationDifference, reconciliationLastRun } from '../metrics/reconcile.js';
import { countUnexplained } from '../metrics/watcher.js';

// Reconciliation (docs/journal.md): for every address of a chain with journal activity, the books (journal balance
// at a pinned final height, minus unexplained movements no operator acknowledged) against the chain's balance at that
// same height, to the base unit, for each registry token and the native coin. Pinned height: the lower of the
// watcher's committed final height and the chain's current final height, so every movement the journal can hold for
// it is already final and recorded. Every difference fails the run. Native coin: registered wallets get their opening
// balance booked once, and a native balance that differs from the journal while nothing of ours is in flight from that
// address is booked as an unexplained movement (flagged until an operator acknowledges it), since gas arrives as plain
// value transfers no log shows (docs/journal.md).

export interface ReconcileDifference {
  address: string;
  /** Token symbol or `native`. */
  asset: TokenSymbol | 'native';
  merchantId: string | null;
  /** Journal balance (every entry at or below the height). */
  journal: bigint;
  /** Unacknowledged unexplained movements inside `journal`. */
  unexplained: bigint;
  /** The books: journal minus unexplained. */
  expected: bigint;
  chain: bigint;
  /** expected − chain (ledger minus on-chain). */
  difference: bigint;
  /** Whether this difference fails the run: always (tokens and native alike; kept for the report's shape). */
  failing: boolean;
}

export interface ReconcileSummaryRow {
  merchantId: string | null;
  asset: TokenSymbol | 'native';
  addresses: number;
  expected: bigint;
  chain: bigint;
  difference: bigint;
}

export interface ChainReconciliation {
  network: string;
  mode: Mode;
  /** Null when the chain was skipped (`skipped` says why). */
  height: bigint | null;
  skipped?: string;
  runId?: bigint;
  addresses: number;
  balances: number;
  rpcCalls: number;
  durationMs: number;
  differences: ReconcileDifference[];
  summary: ReconcileSummaryRow[];
  /** Unexplained native movements this run booked (on-chain minus journal; docs/journal.md "Native balances"). */
  unexplainedNative?: Array<{ entryId: bigint; address: string; amount: bigint; merchantId: string | null }>;
}

export interface ReconcileReport {
  chains: ChainReconciliation[];
  /** True when no token balance differs on any chain. */
  ok: boolean;
}

/**
 * Reconciles every configured chain (or the one named), each under its reconcile lock (a PostgreSQL advisory lock):
 * runs of one chain never overlap. `scheduled` (the worker role's timer, in every worker process): a chain another
 * process is reconciling right now is skipped, and so is one whose latest stored run started less than
 * `minIntervalMs` ago, so several workers store one run per interval between them. Without it (the CLI) the run
 * waits for the lock and always runs.
 */
export async function reconcile(
  deps: { db: Db; adapters: ChainRegistry },
  opts: { network?: string; mode?: Mode; scheduled?: { minIntervalMs: number } } = {},
): Promise<ReconcileReport> {
  const chains: ChainReconciliation[] = [];
  for (const adapter of deps.adapters) {
    if (opts.network && adapter.network !== opts.network) continue;
    if (opts.mode && adapter.mode !== opts.mode) continue;
    const chain = { network: adapter.network, mode: adapter.mode };
    const skipped = (why: string): ChainReconciliation => ({
      ...chain,
      height: null,
      skipped: why,
      addresses: 0,
      balances: 0,
      rpcCalls: 0,
      durationMs: 0,
      differences: [],
      summary: [],
    });
    const r = await withReconcileLock(deps.db, chain, !opts.scheduled, async () => {
      if (opts.scheduled) {
        const age = await lastRunAgeMs(deps.db, chain);
        if (age !== null && age < opts.scheduled.minIntervalMs) return skipped('reconciled by another worker within the interval');
      }
      return reconcileChain(deps.db, adapter);
    });
    chains.push('busy' in r ? skipped('another worker is reconciling this chain') : r);
  }
  return { chains, ok: chains.every((c) => c.differences.every((d) => !d.failing)) };
}

export async function reconcileChain(db: Db, adapter: ChainAdapter): Promise<ChainReconciliation> {
  const chain = { network: adapter.network, mode: adapter.mode };
  const empty = { ...chain, addresses: 0, balances: 0, rpcCalls: 0, durationMs: 0, differences: [], summary: [] };
  if (!isBalanceReader(adapter))
    return { ...empty, height: null, skipped: 'balance reads at a height are not implemented for this network yet' };
  const startedAt = new Date();
  const t0 = performance.now();
  const calls0 = adapter.balanceRpcCalls;
  const committed = await watcherFinalHeight(db, chain);
  if (committed === null) return { ...empty, height: null, skipped: 'the watcher has not run on this chain yet' };
  const head = await adapter.getHead();
  const height = committed < head.final ? committed : head.final;

  const assets: Array<TokenSymbol | 'native'> = [...adapter.tokens.map((t) => t.symbol), 'native'];
  const wallets = await registeredWallets(db, chain);
  await bookOpenings(db, adapter, height, assets, wallets);
  const journal = await journalBalancesAt(db, chain, height);
  const byKey = new Map<string, { balance: bigint; unexplained: bigint }>();
  const addresses = new Set<string>(wallets.map((w) => w.address));
  for (const j of journal) {
    const address = accountAddress(chain, j.account);
    if (address === null) continue;
    addresses.add(address);
    byKey.set(`${address}\u0000${j.asset.slice(assetPrefix(chain).length)}`, { balance: j.balance, unexplained: j.unexplained });
  }
  const list = [...addresses];
  const queries: BalanceQuery[] = list.flatMap((address) => assets.map((asset) => ({ address, asset })));
  const onChain = await adapter.balancesAt(height, queries);
  const merchants = await addressMerchants(db, chain, list);
  // TRON and Solana are read now, not at the height: their drift is measured against every entry of the journal.
  const reference =
    adapter.family === 'evm'
      ? byKey
      : new Map(
          (await journalBalancesAt(db, chain, EVERY_HEIGHT)).map((j) => [
            `${accountAddress(chain, j.account)}\u0000${j.asset.slice(assetPrefix(chain).length)}`,
            { balance: j.balance, unexplained: j.unexplained },
          ]),
        );
  const unexplainedNative = await recordNativeDrift(db, chain, height, queries, onChain, byKey, reference, merchants);
  for (const u of unexplainedNative) countUnexplained(chain, u.amount > 0n ? 'in' : 'out');

  const differences: ReconcileDifference[] = [];
  const summary = new Map<string, ReconcileSummaryRow & { seen: Set<string> }>();
  queries.forEach((q, i) => {
    const j = byKey.get(`${q.address}\u0000${q.asset}`) ?? { balance: 0n, unexplained: 0n };
    const expected = j.balance - j.unexplained;
    const actual = onChain[i]!;
    const merchantId = merchants.get(q.address) ?? null;
    const key = `${merchantId ?? ''}\u0000${q.asset}`;
    let s = summary.get(key);
    if (!s) summary.set(key, (s = { merchantId, asset: q.asset, addresses: 0, expected: 0n, chain: 0n, difference: 0n, seen: new Set() }));
    if (!s.seen.has(q.address)) {
      s.seen.add(q.address);
      s.addresses++;
    }
    s.expected += expected;
    s.chain += actual;
    s.difference += expected - actual;
    if (expected !== actual) {
      differences.push({
        address: q.address,
        asset: q.asset,
        merchantId,
        journal: j.balance,
        unexplained: j.unexplained,
        expected,
        chain: actual,
        difference: expected - actual,
        failing: true,
      });
    }
  });
  const durationMs = performance.now() - t0;
  const rpcCalls = adapter.balanceRpcCalls - calls0;
  const runId = await storeReconcileRun(db, {
    chain,
    height,
    addresses: list.length,
    balances: queries.length,
    rpcCalls,
    durationMs,
    startedAt,
    differences: differences.map((d) => ({
      account: addressAccount(chain.network, chain.mode, d.address),
      asset: journalAsset(chain.network, chain.mode, d.asset),
      merchantId: d.merchantId,
      journal: d.journal,
      chain: d.chain,
      difference: d.difference,
      unexplained: d.unexplained,
    })),
  });
  for (const t of adapter.tokens) {
    const total = differences.filter((d) => d.asset === t.symbol).reduce((a, d) => a + d.difference, 0n);
    reconciliationDifference.set({ ...chain, token: t.symbol }, Number(total) / 10 ** t.decimals);
  }
  reconciliationLastRun.set(chain, Date.now() / 1000);
  return {
    ...chain,
    height,
    runId,
    addresses: list.length,
    balances: queries.length,
    rpcCalls,
    durationMs,
    differences,
    summary: [...summary.values()].map(({ seen: _seen, ...row }) => row),
    unexplainedNative,
  };
}

/**
 * Books the opening balance of each registered wallet that has none yet, on every asset reconcile reads. EVM keeps
 * state by block: read at the wallet's opening height (its registration). TRON and Solana keep none: the chain now
 * minus the journal at the pinned height (what the journal does not explain up to the first run that sees the wallet).
 */
/** Above any block height: every entry of the journal. */
const EVERY_HEIGHT = 2n ** 62n;

async function bookOpenings(
  db: Db,
  adapter: ChainAdapter & BalanceReader,
  height: bigint,
  assets: ReadonlyArray<TokenSymbol | 'native'>,
  wallets: readonly RegisteredWallet[],
): Promise<void> {
  const chain = { network: adapter.network, mode: adapter.mode };
  const pending = wallets.filter((w) => w.needsOpening && (w.openingHeight === null || w.openingHeight <= height));
  if (pending.length === 0) return;
  const historical = adapter.family === 'evm';
  // No state by height: the chain is read now, so compare with every entry (and leave wallets with a transfer in flight
  // for a later run, their landed-but-unsettled fee would be taken for part of the opening).
  const journal = historical ? [] : await journalBalancesAt(db, chain, EVERY_HEIGHT);
  const inFlight = historical
    ? new Set<string>()
    : await addressesWithTransfersInFlight(
        db,
        chain,
        pending.map((w) => w.address),
      );
  const byHeight = new Map<bigint, RegisteredWallet[]>();
  for (const w of pending) {
    if (inFlight.has(w.address)) continue;
    const h = historical ? (w.openingHeight ?? height) : w.openingHeight !== null && w.openingHeight < height ? w.openingHeight : height;
    byHeight.set(h, [...(byHeight.get(h) ?? []), w]);
  }
  const known = (address: string, asset: string): bigint =>
    journal.find(
      (j) => j.account === addressAccount(chain.network, chain.mode, address) && j.asset === journalAsset(chain.network, chain.mode, asset),
    )?.balance ?? 0n;
  const openings: Array<{
    address: string;
    merchantId: string | null;
    height: bigint;
    balances: Array<{ asset: string; amount: bigint }>;
  }> = [];
  for (const [h, ws] of byHeight) {
    const queries = ws.flatMap((w) => assets.map((asset) => ({ address: w.address, asset })));
    const read = await adapter.balancesAt(historical ? h : height, queries);
    for (const w of ws) {
      const balances = assets.map((asset) => {
        const i = queries.findIndex((q) => q.address === w.address && q.asset === asset);
        return { asset, amount: read[i]! - (historical ? 0n : known(w.address, asset)) };
      });
      openings.push({ address: w.address, merchantId: w.merchantId, height: h, balances });
    }
  }
  await bookOpeningBalances(db, chain, openings);
}

/**
 * Native balances that differ from the journal at the pinned height, on addresses with nothing of ours in flight:
 * booked as unexplained movements (the books, which leave unacknowledged ones out, still differ until an operator
 * acknowledges them). Updates `byKey` with what was written.
 */
async function recordNativeDrift(
  db: Db,
  chain: { network: string; mode: Mode },
  height: bigint,
  queries: readonly BalanceQuery[],
  onChain: readonly bigint[],
  byKey: Map<string, { balance: bigint; unexplained: bigint }>,
  reference: ReadonlyMap<string, { balance: bigint }>,
  merchants: ReadonlyMap<string, string>,
): Promise<Array<{ entryId: bigint; address: string; amount: bigint; merchantId: string | null }>> {
  const nativeKey = (address: string) => `${address}\u0000native`;
  const drifting = queries
    .map((q, i) => ({ q, chain: onChain[i]! }))
    .filter(({ q, chain: c }) => q.asset === 'native' && c !== (reference.get(nativeKey(q.address))?.balance ?? 0n));
  if (drifting.length === 0) return [];
  const inFlight = await addressesWithTransfersInFlight(
    db,
    chain,
    drifting.map((d) => d.q.address),
  );
  const settled = drifting.filter((d) => !inFlight.has(d.q.address));
  const sessions = await depositSessions(
    db,
    chain,
    settled.map((d) => d.q.address),
  );
  const written = await recordUnexplainedNative(
    db,
    chain,
    await lastRunHeight(db, chain),
    height,
    settled.map((d) => ({
      address: d.q.address,
      merchantId: merchants.get(d.q.address) ?? null,
      sessionId: sessions.get(d.q.address) ?? null,
      amount: d.chain - (reference.get(nativeKey(d.q.address))?.balance ?? 0n),
    })),
  );
  for (const w of written) {
    const j = byKey.get(nativeKey(w.drift.address)) ?? { balance: 0n, unexplained: 0n };
    byKey.set(nativeKey(w.drift.address), { balance: j.balance + w.drift.amount, unexplained: j.unexplained + w.drift.amount });
  }
  return written.map((w) => ({ entryId: w.entryId, address: w.drift.address, amount: w.drift.amount, merchantId: w.drift.merchantId }));
}
