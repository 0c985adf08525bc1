import { randomUUID } from 'node:crypto';
import type { ChainRegistry } from '../../chains/chain-registry.js';
import type { Mode } from '../../chains/vocabulary.js';
import type { Db } from '../db/database.js';
import { ApiError, resourceNotFound } from '../domain/errors.js';
import { acknowledgeUnexplained, listUnexplained } from '../ledger/journal/unexplained.js';
import type { Logger } from '../logger.js';
import { reconcile, type ReconcileReport } from '../reconcile/reconcile.js';
import { decodeKeyset, encodeKeyset } from './books-keyset.js';

// The books (docs/journal.md) for the CLI (`reconcile`, `journal ...`) and the console: reconcile runs with their
// differences to the base unit, starting a run, unexplained entries and their acknowledgement, an account's legs.

/** One reconcile run of the chains configured here (or the one named): the CLI's `reconcile`, waiting for each lock. */
export function runReconcile(deps: { db: Db; adapters: ChainRegistry }, opts: { network?: string; mode?: Mode }): Promise<ReconcileReport> {
  return reconcile(deps, opts);
}

/**
 * Starts a reconcile run in the background and answers at once (a run reads every balance: minutes on a big ledger).
 * Each chain's run is stored when it ends (GET /reconcile/runs); a chain another run holds waits for it.
 */
export function startReconcile(
  deps: { db: Db; adapters: ChainRegistry; log: Pick<Logger, 'info' | 'error'> },
  opts: { network?: string; mode: Mode },
) {
  const chains = [...deps.adapters]
    .filter((a) => (!opts.network || a.network === opts.network) && a.mode === opts.mode)
    .map((a) => ({ network: a.network, mode: a.mode }));
  if (chains.length === 0)
    throw new ApiError(
      409,
      'invalid_request_error',
      'network_not_configured',
      'No chain of this network and mode is configured here.',
      'network',
    );
  const jobId = randomUUID();
  const startedAt = new Date();
  reconcile(deps, opts).then(
    (r) => deps.log.info({ jobId, ok: r.ok, chains: r.chains.length }, 'console reconcile run finished'),
    (err) => deps.log.error({ err, jobId }, 'console reconcile run failed'),
  );
  return { job_id: jobId, chains, started_at: startedAt.toISOString() };
}

/** Reconcile runs newest first (keyset on id; index reconcile_runs_chain per chain), with their differing balances. */
export async function reconcileRuns(db: Db, q: { network?: string; mode?: Mode; limit: number; cursor?: string }) {
  const after = decodeKeyset(q.cursor);
  let query = db.selectFrom('reconcile_runs').selectAll();
  if (q.network) query = query.where('network', '=', q.network);
  if (q.mode) query = query.where('mode', '=', q.mode);
  if (after) query = query.where('id', '<', BigInt(after.id));
  const rows = await query
    .orderBy('id', 'desc')
    .limit(q.limit + 1)
    .execute();
  const page = rows.slice(0, q.limit);
  const diffs = page.length
    ? await db
        .selectFrom('reconcile_differences')
        .selectAll()
        .where(
          'run_id',
          'in',
          page.map((r) => r.id),
        )
        .execute()
    : [];
  const last = page[page.length - 1];
  return {
    data: page.map((r) => ({
      id: r.id.toString(),
      network: r.network,
      mode: r.mode,
      height: r.height.toString(),
      addresses: r.addresses,
      balances: r.balances,
      differences: r.differences,
      rpc_calls: r.rpc_calls,
      duration_ms: r.duration_ms,
      started_at: r.started_at.toISOString(),
      finished_at: r.finished_at.toISOString(),
      difference_rows: diffs
        .filter((d) => d.run_id === r.id)
        .map((d) => ({
          account: d.account,
          asset: d.asset,
          merchant_id: d.merchant_id,
          journal_base: d.journal_base.toString(),
          chain_base: d.chain_base.toString(),
          difference_base: d.difference_base.toString(),
          unexplained_base: d.unexplained_base.toString(),
        })),
    })),
    next_cursor: rows.length > q.limit && last ? encodeKeyset({ key: '', id: last.id.toString() }) : null,
  };
}

/** Unexplained entries (unacknowledged unless `all`), newest first, base units as digit strings. */
export async function unexplainedEntries(db: Db, q: { network?: string; mode?: Mode; all?: boolean; limit?: number }) {
  const rows = await listUnexplained(db, q);
  return rows.map((e) => ({
    entry_id: e.entryId.toString(),
    network: e.network,
    mode: e.mode,
    tx_hash: e.txHash,
    block_height: e.blockHeight.toString(),
    legs: e.legs.map((l) => ({ account: l.account, asset: l.asset, amount: l.amount.toString() })),
    acknowledged: e.acknowledged,
    reversed: e.reversed,
  }));
}

/** The operator accepts an unexplained entry with a note; 404 when there is no such unacknowledged entry. */
export async function acknowledgeEntry(db: Db, entryId: bigint, note: string): Promise<{ acknowledged: string }> {
  if (!(await acknowledgeUnexplained(db, entryId, note))) throw resourceNotFound('id', `unacknowledged unexplained entry ${entryId}`);
  return { acknowledged: entryId.toString() };
}

/** An account's journal legs, newest entry first (keyset on entry id and asset; index journal_legs_account). */
export async function accountLegs(db: Db, account: string, q: { asset?: string; limit: number; cursor?: string }) {
  const after = decodeKeyset(q.cursor);
  let query = db
    .selectFrom('journal_legs as l')
    .innerJoin('journal_entries as e', 'e.id', 'l.entry_id')
    .select(['l.entry_id', 'l.account', 'l.asset', 'l.amount', 'e.kind', 'e.tx_hash', 'e.block_height', 'e.created_at'])
    .where('l.account', '=', account);
  if (q.asset) query = query.where('l.asset', '=', q.asset);
  if (after) {
    const id = BigInt(after.id);
    query = query.where((eb) => eb.or([eb('l.entry_id', '<', id), eb.and([eb('l.entry_id', '=', id), eb('l.asset', '<', after.key)])]));
  }
  const rows = await query
    .orderBy('l.entry_id', 'desc')
    .orderBy('l.asset', 'desc')
    .limit(q.limit + 1)
    .execute();
  const page = rows.slice(0, q.limit);
  const last = page[page.length - 1];
  return {
    data: page.map((r) => ({
      entry_id: r.entry_id.toString(),
      account: r.account,
      asset: r.asset,
      amount: r.amount.toString(),
      kind: r.kind,
      tx_hash: r.tx_hash,
      block_height: r.block_height.toString(),
      created_at: r.created_at.toISOString(),
    })),
    next_cursor: rows.length > q.limit && last ? encodeKeyset({ key: last.asset, id: last.entry_id.toString() }) : null,
  };
}
