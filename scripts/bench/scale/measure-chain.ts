import { AbiCoder, keccak256, toBeHex } from 'ethers';
import { sql } from 'kysely';
import { ChainRegistry } from '../../../chains/chain-registry.js';
import { NETWORKS } from '../../../chains/registry.js';
import type { TokenSymbol } from '../../../chains/types.js';
import { plannerDeps, type TreasuryCliContext } from '../../../src/cli/treasury.js';
import type { Db } from '../../../src/db/database.js';
import { journalBalancesAt } from '../../../src/ledger/journal/balances.js';
import { createNativePriceService } from '../../../src/rates/native-prices.js';
import { reconcileChain } from '../../../src/reconcile/reconcile.js';
import { planSweeps } from '../../../src/treasury/planner.js';
import { operatorWallets } from '../../../src/treasury/wallets.js';
import { makeAdapter, signer } from '../../../test/support/evm-tokens/scenario.js';
import { startFakeTicker } from '../../../test/support/fake-ticker.js';
import { startPayerChain, type PayerChain } from '../evm-bench-chain.js';
import { measureTip } from '../evm-watcher-tip.js';
import type { Target } from './measure.js';

// The scale benchmark's chain measurements (run.ts: watcher, reconcile, sweep), each on one database, against one Anvil
// serving ethereum:test (the network of the registry the seed's sessions use in test mode; USDT and USDC with the
// registry's decimals). Anvil's chain starts above the highest block the database's journal holds for ethereum:test
// (`--number`), so that every seeded entry is at or below the heights reconcile and the planner read at.
//   reconcile  the chain is made to hold what the journal says: every `address:ethereum:test:` account's USDT and USDC
//              balance is paid to it on Anvil (1,000 per transaction through the batch payer), the watcher's cursor
//              set at the final height; then `reconcileChain` (what `cli reconcile` runs) compares every address with
//              journal activity, token and native, at the pinned height. The ledger's side alone (journalBalancesAt at
//              that height) is timed too, before.
//   sweep      `sweep plan --merchant <measured>` as the CLI runs it (plannerDeps + planSweeps) on ethereum:test:
//              candidates from the ledger, final balances read from the chain, each key derived and checked, batches
//              priced (a local fake of Coinbase's ticker: ETH at 3,000) with the gas top-up method (Cancun: no
//              EIP-7702), the gas station funded. The planner refuses an address its key does not derive, and the
//              seed's addresses are hashes: first the measured merchant's ethereum:test addresses are replaced by the
//              ones the bench mnemonic derives for their (account, index), in sessions, deposit addresses, deposits
//              and journal legs (the journal's append-only triggers off for that one transaction), before funding.
//   watcher    `watched` open sessions of the measured merchant on ethereum:test (synthetic addresses 0x00..0i, beside
//              whatever the database holds), the watcher in its own process (evm-watcher-tip.ts) and `runs` blocks of
//              `perBlock` payments: confirming block → paid, worst and median, and the process's peak RSS.

export type Figures = Record<string, number>;

export interface ChainOptions {
  skip: Set<string>;
  watched: number;
  perBlock: number;
  runs: number;
  /** How long the watcher's watch-set load may take before the watcher measurement is given up. */
  loadTimeoutMs: number;
  /** How the journal's balances are put on the chain (fundJournal). */
  fund: 'payer' | 'storage';
  log?: (line: string) => void;
}

const NETWORK = 'ethereum';
const MODE = 'test';
const CONFIRMATIONS = 3;
const PREFIX = `address:${NETWORK}:${MODE}:`;

function registryTokens(): Array<{ symbol: TokenSymbol; decimals: number }> {
  const n = NETWORKS.find((x) => x.id === NETWORK)!;
  const tokens = n[MODE].tokens.length > 0 ? n[MODE].tokens : n.live.tokens;
  // As the seed does (seed-sql.ts): a token the registry lacks in this mode takes the first token's decimals.
  return (['USDT', 'USDC'] as const).map((symbol) => ({
    symbol,
    decimals: (tokens.find((t) => t.symbol === symbol) ?? tokens[0]!).decimals,
  }));
}

export async function measureChain(t: Target, o: ChainOptions): Promise<Figures> {
  const log = o.log ?? console.log;
  const f: Figures = {};
  const want = (name: string) => !o.skip.has(name);
  if (!want('watcher') && !want('reconcile') && !want('sweep')) return f;
  const top = await sql<{ h: string }>`
    select coalesce(max(block_height), 0)::text as h from journal_entries where network = ${NETWORK} and mode = ${MODE}`.execute(t.db);
  const genesis = BigInt(top.rows[0]!.h) + 100n;
  const chain = await startPayerChain(
    registryTokens(),
    ['--no-mining', '--hardfork', 'cancun', '--number', genesis.toString()],
    10n ** 12n,
  );
  try {
    const adapter = makeAdapter(chain.node, chain.tokens, { confirmation: { kind: 'depth', confirmations: CONFIRMATIONS } });
    if (want('reconcile') || want('sweep')) {
      if (want('sweep')) {
        const t0 = performance.now();
        const n = await rederive(t.db, adapter, t.merchant.merchantId);
        f['sweep: addresses re-derived (setup)'] = n;
        log(`  sweep setup: ${n} addresses of the merchant re-derived in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
      }
      const t0 = performance.now();
      const funded = await fundJournal(t.db, chain, o.fund);
      const setup = (performance.now() - t0) / 1000;
      f['chain: balances funded (setup)'] = funded;
      f['chain: funding s (setup)'] = setup;
      log(`  chain setup: ${funded} journal balances paid on Anvil in ${setup.toFixed(1)} s`);
      await chain.node.mine(CONFIRMATIONS + 2);
      const height = BigInt(await chain.node.provider.getBlockNumber()) - BigInt(CONFIRMATIONS);
      await sql`delete from chain_cursors where chain_key = ${`${NETWORK}:${MODE}`}`.execute(t.db);
      await sql`insert into chain_cursors (chain_key, cursor, tip_height, tip_time, final_height)
                values (${`${NETWORK}:${MODE}`}, '{}', ${height.toString()}, now(), ${height.toString()})`.execute(t.db);
      if (want('reconcile')) {
        const l0 = performance.now();
        const books = await journalBalancesAt(t.db, { network: NETWORK, mode: MODE }, height);
        f['reconcile: ledger read s'] = (performance.now() - l0) / 1000;
        f['reconcile: journal balances'] = books.length;
        const r0 = performance.now();
        const r = await reconcileChain(t.db, adapter);
        const seconds = (performance.now() - r0) / 1000;
        f['reconcile s'] = seconds;
        f['reconcile addresses'] = r.addresses;
        f['reconcile balances compared'] = r.balances;
        f['reconcile ms per 1,000 addresses'] = r.addresses > 0 ? (seconds * 1_000_000) / r.addresses : Number.NaN;
        f['reconcile RPC requests'] = r.rpcCalls;
        f['reconcile token differences'] = r.differences.filter((d) => d.asset !== 'native').length;
        f['reconcile native differences'] = r.differences.filter((d) => d.asset === 'native').length;
        if (r.skipped) log(`  reconcile skipped: ${r.skipped}`);
        for (const d of r.differences.slice(0, 5))
          log(`  reconcile difference: ${d.address} ${d.asset} expected ${d.expected} chain ${d.chain}`);
      }
      if (want('sweep')) Object.assign(f, await measureSweepPlan(t, chain, adapter, log));
    }
    if (want('watcher')) Object.assign(f, await measureWatcher(t, chain, o));
    return f;
  } finally {
    await chain.node.stop();
  }
}

/** The measured merchant's ethereum:test addresses, replaced by the ones the bench mnemonic derives for their (account, index). */
async function rederive(db: Db, adapter: ReturnType<typeof makeAdapter>, merchantId: string): Promise<number> {
  const rows = await db
    .selectFrom('payment_sessions')
    .select(['hd_account', 'address_index', 'deposit_address'])
    .where('merchant_id', '=', merchantId)
    .where('network', '=', NETWORK)
    .where('mode', '=', MODE)
    .where('deposit_address', 'is not', null)
    .execute();
  if (rows.length === 0) return 0;
  const from: string[] = [];
  const to: string[] = [];
  for (const r of rows) {
    const a = await adapter.deriveDepositAddress(signer, r.hd_account, BigInt(r.address_index));
    from.push(r.deposit_address!);
    to.push(adapter.normalizeAddress(a) ?? a);
  }
  await db.transaction().execute(async (trx) => {
    // The journal is append-only (its triggers refuse UPDATE): off for this transaction only; a bench-only rewrite.
    await sql`set local session_replication_role = replica`.execute(trx);
    await sql`create temp table remap (old text primary key, new text not null) on commit drop`.execute(trx);
    await sql`insert into remap select * from unnest(${from}::text[], ${to}::text[])`.execute(trx);
    await sql`update payment_sessions s set deposit_address = r.new from remap r
              where s.deposit_address = r.old and s.network = ${NETWORK} and s.mode = ${MODE}`.execute(trx);
    await sql`update deposit_addresses d set address = r.new from remap r
              where d.address = r.old and d.network = ${NETWORK} and d.mode = ${MODE}`.execute(trx);
    await sql`update deposits d set to_address = r.new from remap r
              where d.to_address = r.old and d.network = ${NETWORK} and d.mode = ${MODE}`.execute(trx);
    await sql`update journal_legs l set account = ${PREFIX} || r.new from remap r where l.account = ${PREFIX} || r.old`.execute(trx);
  });
  return rows.length;
}

/**
 * Every positive USDT/USDC balance of an `address:ethereum:test:` account of the journal, put on Anvil at that address:
 * `payer`, paid through the batch payer (1,000 transfers a transaction, as a chain would carry them); `storage`, the
 * token's balanceOf slot written directly (anvil_setStorageAt, JSON-RPC batches of 500), for what reconcile and the
 * planner read (balanceOf at a height) the same state, several times faster to set up.
 */
async function fundJournal(db: Db, chain: PayerChain, how: 'payer' | 'storage'): Promise<number> {
  let n = 0;
  for (const token of chain.tokens) {
    const { rows } = await sql<{ account: string; amount: string }>`
      select l.account, sum(l.amount)::text as amount
      from journal_legs l join journal_entries e on e.id = l.entry_id
      where e.network = ${NETWORK} and e.mode = ${MODE} and l.account like ${`${PREFIX}%`}
        and l.asset = ${`${NETWORK}:${MODE}:${token.symbol}`}
      group by l.account having sum(l.amount) > 0`.execute(db);
    const size = how === 'payer' ? 1000 : 500;
    const slot = how === 'storage' && rows.length > 0 ? await balanceSlot(chain, token.address) : 0n;
    for (let i = 0; i < rows.length; i += size) {
      const part = rows.slice(i, i + size);
      const to = part.map((r) => r.account.slice(PREFIX.length));
      const amounts = part.map((r) => BigInt(r.amount));
      if (how === 'payer') await (await chain.pay(token, to, amounts)).wait();
      else await setBalances(chain, token.address, slot, to, amounts);
    }
    n += rows.length;
  }
  await chain.node.mine(1);
  return n;
}

/** The storage slot of `token`'s balanceOf mapping: the first of slots 0..15 whose entry for a probe address balanceOf reads. */
async function balanceSlot(chain: PayerChain, token: string): Promise<bigint> {
  const probe = '0x00000000000000000000000000000000000b0b0b';
  const coder = AbiCoder.defaultAbiCoder();
  for (let slot = 0n; slot < 16n; slot++) {
    const key = keccak256(coder.encode(['address', 'uint256'], [probe, slot]));
    await chain.node.rpc('anvil_setStorageAt', [token, key, toBeHex(7n, 32)]);
    const read = await chain.node.rpc<string>('eth_call', [
      { to: token, data: `0x70a08231${coder.encode(['address'], [probe]).slice(2)}` },
      'latest',
    ]);
    await chain.node.rpc('anvil_setStorageAt', [token, key, toBeHex(0n, 32)]);
    if (BigInt(read) === 7n) return slot;
  }
  throw new Error(`no balanceOf slot found for ${token}`);
}

async function setBalances(chain: PayerChain, token: string, slot: bigint, to: string[], amounts: bigint[]): Promise<void> {
  const coder = AbiCoder.defaultAbiCoder();
  const body = to.map((a, i) => ({
    jsonrpc: '2.0',
    id: i,
    method: 'anvil_setStorageAt',
    params: [token, keccak256(coder.encode(['address', 'uint256'], [a, slot])), toBeHex(amounts[i]!, 32)],
  }));
  const res = await fetch(chain.node.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const out = (await res.json()) as Array<{ error?: { message: string } }>;
  const failed = out.find((x) => x.error);
  if (failed) throw new Error(`anvil_setStorageAt: ${failed.error!.message}`);
}

async function measureSweepPlan(
  t: Target,
  chain: PayerChain,
  adapter: ReturnType<typeof makeAdapter>,
  log: (line: string) => void,
): Promise<Figures> {
  const ticker = await startFakeTicker({ coinbaseRates: { ETH: { USDT: '3000', USDC: '3000' } } });
  try {
    const gas = await operatorWallets(t.db, adapter, signer);
    await chain.node.rpc('anvil_setBalance', [gas.gasStation.address, '0x56bc75e2d63100000']); // 100 ETH
    await chain.node.mine(CONFIRMATIONS + 1);
    const ctx: TreasuryCliContext = {
      db: t.db,
      adapters: async () => new ChainRegistry([adapter]),
      keys: signer,
      signer: null,
      prices: () => createNativePriceService({ sources: ['coinbase'], coinbaseBaseUrl: ticker.url, timeoutMs: 2000, cacheTtlMs: 30_000 }),
      engine: { pollMs: 1000, stuckAfterMs: 60_000, feeBumpPercent: 10 },
      env: {},
    };
    // What `cli sweep plan --merchant <id>` runs (src/cli/treasury.ts: plan = planSweeps(await plannerDeps(ctx), filter)).
    const t0 = performance.now();
    const report = await planSweeps(await plannerDeps(ctx), { merchantId: t.merchant.merchantId });
    const seconds = (performance.now() - t0) / 1000;
    const planned = report.batches.reduce((a, b) => a + b.request.sources.length, 0);
    const reasons = new Map<string, number>();
    for (const s of report.skipped) {
      const k = s.reason.replace(/\d+/g, 'N').slice(0, 80);
      reasons.set(k, (reasons.get(k) ?? 0) + 1);
    }
    for (const [k, n] of reasons) log(`  sweep plan skipped ${n}: ${k}`);
    return {
      'sweep plan s': seconds,
      'sweep plan addresses considered': planned + report.skipped.length,
      'sweep plan addresses planned': planned,
      'sweep plan addresses skipped': report.skipped.length,
      'sweep plan batches': report.batches.length,
    };
  } finally {
    await ticker.close();
  }
}

async function measureWatcher(t: Target, chain: PayerChain, o: ChainOptions): Promise<Figures> {
  const n = o.watched;
  const id = (i: number | string) => `cs_scalew${i}`;
  await sql`insert into payment_sessions (id, merchant_id, mode, order_id, amount_minor, currency, target_currency, target_amount_minor,
              hd_account, network, token, deposit_address, expires_at)
            select 'cs_scalew' || i, ${t.merchant.merchantId}, 'test', 'scale-watch-' || i, 100, 'USDT', 'USDT', 100, 1, ${NETWORK}, 'USDT',
                   '0x' || lpad(to_hex(i), 40, '0'), now() + interval '1 day'
            from generate_series(1, ${n}) i`.execute(t.db);
  await sql`insert into deposit_addresses (network, mode, address, session_id)
            select ${NETWORK}, ${MODE}, '0x' || lpad(to_hex(i), 40, '0'), 'cs_scalew' || i from generate_series(1, ${n}) i`.execute(t.db);
  await sql`analyze payment_sessions, deposit_addresses`.execute(t.db);
  await chain.node.rpc('evm_setAutomine', [false]);
  const usdt = chain.tokens.find((x) => x.symbol === 'USDT')!;
  const addr = (i: number) => `0x${i.toString(16).padStart(40, '0')}`;
  const r = await measureTip({
    db: t.db,
    dbUrl: t.url,
    node: chain.node,
    token: usdt.address,
    confirmations: CONFIRMATIONS,
    runs: o.runs,
    loadTimeoutMs: o.loadTimeoutMs,
    payRun: async (run) => {
      const first = 1 + run * o.perBlock;
      const to = Array.from({ length: o.perBlock }, (_, j) => addr(first + j));
      await chain.pay(
        usdt,
        to,
        to.map(() => 10n ** BigInt(usdt.decimals)),
      );
      await chain.node.mine(1);
      return id(first + o.perBlock - 1);
    },
  });
  const lat = r.tips.map((x) => x.latency);
  const sorted = [...lat].sort((a, b) => a - b);
  const credits = r.tips.flatMap((x) => (x.step ? [x.step.committed - x.step.polled] : [])).sort((a, b) => a - b);
  const med = (v: number[]) => (v.length ? (v[Math.floor((v.length - 1) / 2)]! + v[Math.ceil((v.length - 1) / 2)]!) / 2 : Number.NaN);
  if (!Number.isFinite(r.watched))
    (o.log ?? console.log)(
      `  watcher: the watch set did not load within ${(r.loadMs / 1000).toFixed(0)} s (its full load's query); no run made`,
    );
  return {
    'watcher watched addresses': r.watched,
    'watcher first step (watch set load) s': r.loadMs / 1000,
    'watcher confirm→paid worst ms': lat.every(Number.isFinite) ? Math.max(...lat) : Number.NaN,
    'watcher confirm→paid median ms': lat.every(Number.isFinite) ? med(sorted) : Number.NaN,
    'watcher credit transaction median ms': med(credits),
    'watcher peak RSS MB': r.peakRss,
    'watcher RSS MB, watch set loaded': r.loadedRss,
  };
}
