import { sql, type Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import { chainKey, type ChainRef } from '../core/chain-ref.js';

// Reconciliation runs (docs/journal.md): each run of one chain is stored with every balance that differed, so that
// drift can be shown over time. Rows are only ever inserted here; clean runs past their retention are pruned by the
// ledger's retention room (ledger/retention/reconcile-runs.ts, docs/retention.md).

export interface ReconcileDifferenceRow {
  account: string;
  asset: string;
  merchantId: string | null;
  journal: bigint;
  chain: bigint;
  difference: bigint;
  unexplained: bigint;
}

export interface ReconcileRunInput {
  chain: ChainRef;
  height: bigint;
  addresses: number;
  balances: number;
  rpcCalls: number;
  durationMs: number;
  startedAt: Date;
  differences: readonly ReconcileDifferenceRow[];
}

export async function storeReconcileRun(db: Kysely<Database>, run: ReconcileRunInput): Promise<bigint> {
  return db.transaction().execute(async (trx) => {
    const r = await trx
      .insertInto('reconcile_runs')
      .values({
        network: run.chain.network,
        mode: run.chain.mode,
        height: run.height,
        addresses: run.addresses,
        balances: run.balances,
        differences: run.differences.length,
        rpc_calls: run.rpcCalls,
        duration_ms: Math.round(run.durationMs),
        started_at: run.startedAt,
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    const d = run.differences;
    if (d.length > 0) {
      await sql`
        insert into reconcile_differences (run_id, account, asset, merchant_id, journal_base, chain_base, difference_base, unexplained_base)
        select ${r.id.toString()}::bigint, * from unnest(${d.map((x) => x.account)}::text[], ${d.map((x) => x.asset)}::text[],
          ${d.map((x) => x.merchantId)}::text[], ${d.map((x) => x.journal.toString())}::numeric[], ${d.map((x) => x.chain.toString())}::numeric[],
          ${d.map((x) => x.difference.toString())}::numeric[], ${d.map((x) => x.unexplained.toString())}::numeric[])`.execute(trx);
    }
    return r.id;
  });
}

/** Advisory-lock class of reconcile runs (one lock per chain: the second key is the chain key's hash). */
const RECONCILE_LOCK_CLASS = 0x5245_434e; // 'RECN'

/**
 * Runs `fn` while holding `chain`'s reconcile lock: a session-level PostgreSQL advisory lock on one pooled connection,
 * kept for the whole run (fn itself uses the pool) and released at the end, or by PostgreSQL when the process dies.
 * `wait`: block until the lock is free (the CLI); otherwise answer `{ busy: true }` at once when another process holds it.
 */
export async function withReconcileLock<T>(
  db: Kysely<Database>,
  chain: ChainRef,
  wait: boolean,
  fn: () => Promise<T>,
): Promise<T | { busy: true }> {
  const key = chainKey(chain);
  return db.connection().execute(async (conn) => {
    if (wait) await sql`select pg_advisory_lock(${RECONCILE_LOCK_CLASS}::int, hashtext(${key}))`.execute(conn);
    else {
      const r = await sql<{ ok: boolean }>`select pg_try_advisory_lock(${RECONCILE_LOCK_CLASS}::int, hashtext(${key})) as ok`.execute(conn);
      if (!r.rows[0]?.ok) return { busy: true as const };
    }
    try {
      return await fn();
    } finally {
      await sql`select pg_advisory_unlock(${RECONCILE_LOCK_CLASS}::int, hashtext(${key}))`.execute(conn);
    }
  });
}

/** Claims of slots older than this are deleted when a slot is claimed (a claim matters only within its slot). */
const SLOT_CLAIM_RETENTION = '7 days';

/**
 * Claims scheduled slot `slot` of `chain` for this worker: true for the one worker whose claim lands, false for every
 * other (the slot is theirs). A claim is never released: it names a slot, which passes; a holder that dies leaves
 * nothing the next slot waits for.
 */
export async function claimReconcileSlot(db: Kysely<Database>, chain: ChainRef, slot: bigint): Promise<boolean> {
  const r = await db
    .insertInto('reconcile_slots')
    .values({ network: chain.network, mode: chain.mode, slot })
    .onConflict((oc) => oc.doNothing())
    .returning('slot')
    .executeTakeFirst();
  if (r)
    await db
      .deleteFrom('reconcile_slots')
      .where('network', '=', chain.network)
      .where('mode', '=', chain.mode)
      .where('claimed_at', '<', sql<Date>`now() - ${SLOT_CLAIM_RETENTION}::interval`)
      .execute();
  return r !== undefined;
}

/** The height the watcher of `chain` has committed as final (null before its first step). */
export async function watcherFinalHeight(db: Kysely<Database>, chain: ChainRef): Promise<bigint | null> {
  const r = await db.selectFrom('chain_cursors').select('final_height').where('chain_key', '=', chainKey(chain)).executeTakeFirst();
  return r?.final_height ?? null;
}

/** The merchant owning each of `addresses` on `chain`: through its session (deposit address) or its registration (wallet). */
export async function addressMerchants(db: Kysely<Database>, chain: ChainRef, addresses: readonly string[]): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (let i = 0; i < addresses.length; i += 10_000) {
    const list = addresses.slice(i, i + 10_000);
    const r = await sql<{ address: string; merchant_id: string }>`
      select da.address, s.merchant_id from deposit_addresses da join payment_sessions s on s.id = da.session_id
      where da.network = ${chain.network} and da.mode = ${chain.mode} and da.address = any(${list}::text[])
      union all
      select address, merchant_id from journal_wallets
      where network = ${chain.network} and mode = ${chain.mode} and merchant_id is not null and address = any(${list}::text[])`.execute(db);
    for (const x of r.rows) out.set(x.address, x.merchant_id);
  }
  return out;
}

/** The latest runs, newest first (drift over time). */
export async function recentReconcileRuns(db: Kysely<Database>, limit = 20) {
  return db.selectFrom('reconcile_runs').selectAll().orderBy('id', 'desc').limit(limit).execute();
}
