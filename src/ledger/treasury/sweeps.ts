import { sql, type Selectable, type Transaction } from 'kysely';
import type { Db } from '../../db/database.js';
import type { Database } from '../../db/schema.js';
import type { SweepSourcesTable, SweepStepAttemptsTable, SweepStepsTable, SweepsTable } from '../../db/treasury-tables.js';
import { newId } from '../../domain/ids.js';
import { journalSweepStep, registerSweepWallets } from '../journal/sweep-entries.js';
import { networksOfFamily, type Mode, type NetworkId, type TokenSymbol } from '../../../chains/vocabulary.js';
import { SWEEP_STEP_ATTEMPTS, attemptsOf, blockingAttemptIdsOf } from '../outbound/attempt-store.js';

// The ledger of sweeps: a sweep (one token of one merchant on one network, many deposit addresses to one destination),
// its sources (the amount planned per address and what left it, read from the landed step: the record of a movement
// out of the deposit address), its steps (one transaction each) and their attempts. The treasury layer
// (src/treasury/) decides; every write is here.

export type SweepRow = Selectable<SweepsTable>;
export type SweepSourceRow = Selectable<SweepSourcesTable>;
export type SweepStepRow = Selectable<SweepStepsTable>;
export type SweepAttemptRow = Selectable<SweepStepAttemptsTable>;

export interface NewSweep {
  merchantId: string;
  network: NetworkId;
  mode: Mode;
  token: TokenSymbol;
  method: string;
  destinationKind: 'hot_wallet' | 'treasury';
  destination: string;
  /** The chains' SweepRequest as JSON (bigints as decimal strings). */
  request: Record<string, unknown>;
  sources: Array<{ address: string; key: { curve: string; path: string }; amount: bigint }>;
  /** The plan's steps as JSON, in plan order, with their group, purpose, sender and estimated fee. */
  steps: Array<{ group: number; purpose: string; from: string; estimatedFee: bigint; json: Record<string, unknown> }>;
  estimatedFee: bigint;
  feeShareBps: number | null;
}

/**
 * Persists a sweep with its sources and steps before anything is signed. Undefined when one of the sources is
 * already in a running sweep of the token (the in-flight unique index): nothing is written.
 */
export async function createSweep(db: Db, s: NewSweep): Promise<SweepRow | undefined> {
  try {
    return await db.transaction().execute(async (trx) => {
      const id = newId('swp');
      const planned = s.sources.reduce((t, x) => t + x.amount, 0n);
      const sweep = await trx
        .insertInto('sweeps')
        .values({
          id,
          merchant_id: s.merchantId,
          network: s.network,
          mode: s.mode,
          token: s.token,
          method: s.method,
          destination_kind: s.destinationKind,
          destination: s.destination,
          request: JSON.stringify(s.request),
          planned_base: planned,
          estimated_fee: s.estimatedFee,
          fee_share_bps: s.feeShareBps,
        })
        .returningAll()
        .executeTakeFirstOrThrow();
      await trx
        .insertInto('sweep_sources')
        .values(
          s.sources.map((x) => ({
            sweep_id: id,
            network: s.network,
            mode: s.mode,
            token: s.token,
            address: x.address,
            key: JSON.stringify(x.key),
            planned_base: x.amount,
          })),
        )
        .execute();
      if (s.steps.length > 0)
        await trx
          .insertInto('sweep_steps')
          .values(
            s.steps.map((st, seq) => ({
              id: newId('sws'),
              sweep_id: id,
              seq,
              group_no: st.group,
              purpose: st.purpose,
              from_address: st.from,
              step: JSON.stringify(st.json),
              estimated_fee: st.estimatedFee,
            })),
          )
          .execute();
      // The gas station (and TRON's resources account) are watched from the first sweep on, like hot wallets.
      await registerSweepWallets(trx, sweep);
      return sweep;
    });
  } catch (err) {
    if ((err as { code?: string }).code === '23505' && String((err as Error).message).includes('sweep_sources_in_flight_uq'))
      return undefined;
    throw err;
  }
}

/**
 * Deposit addresses of a network and mode with final, credited deposits of `token`, and what is left to sweep by the
 * ledger's count (confirmed deposits minus what sweeps recorded leaving): those with something left, not in a running
 * sweep, with the HD position of their key. The balance actually swept is read on chain by the planner.
 */
export async function sweepCandidates(
  db: Db,
  q: { network: NetworkId; mode: Mode; token: TokenSymbol; merchantId?: string },
): Promise<Array<{ merchant_id: string; address: string; hd_account: number; address_index: bigint; unswept_base: bigint }>> {
  const merchantFilter = q.merchantId ? sql`and ps.merchant_id = ${q.merchantId}` : sql``;
  const { rows } = await sql<{ merchant_id: string; address: string; hd_account: number; address_index: string; unswept_base: string }>`
    with received as (
      select d.to_address as address, sum(d.amount_base) as received_base,
             bool_or(d.disposition = 'credited') as credited
      from deposits d
      where d.network = ${q.network} and d.mode = ${q.mode} and d.token = ${q.token} and d.status = 'confirmed'
        and d.unmatched_reason is distinct from 'unsupported_token'
      group by d.to_address
    ), swept as (
      select s.address, sum(s.swept_base) as swept_base
      from sweep_sources s
      where s.network = ${q.network} and s.mode = ${q.mode} and s.token = ${q.token} and s.state = 'swept'
      group by s.address
    )
    select ps.merchant_id, da.address, ps.hd_account, ps.address_index,
           (r.received_base - coalesce(w.swept_base, 0))::text as unswept_base
    from received r
    join deposit_addresses da on da.network = ${q.network} and da.mode = ${q.mode} and da.address = r.address
    join payment_sessions ps on ps.id = da.session_id
    left join swept w on w.address = r.address
    where r.credited and r.received_base > coalesce(w.swept_base, 0) ${merchantFilter}
      and not exists (select 1 from sweep_sources f where f.network = ${q.network} and f.mode = ${q.mode}
                      and f.token = ${q.token} and f.address = r.address and f.state = 'planned')
    order by ps.merchant_id, da.address`.execute(db);
  return rows.map((r) => ({ ...r, address_index: BigInt(r.address_index), unswept_base: BigInt(r.unswept_base) }));
}

/** Whether a sweep of this merchant, network, mode and token is running (the planner waits for it). */
export async function hasRunningSweep(
  db: Db,
  q: { merchantId: string; network: NetworkId; mode: Mode; token: TokenSymbol },
): Promise<boolean> {
  const row = await db
    .selectFrom('sweeps')
    .select('id')
    .where('merchant_id', '=', q.merchantId)
    .where('network', '=', q.network)
    .where('mode', '=', q.mode)
    .where('token', '=', q.token)
    .where('status', '=', 'running')
    .executeTakeFirst();
  return row !== undefined;
}

/** The running sweeps of one network and mode (a gas-station rotation waits for them to end). */
export async function runningSweepIdsOn(db: Db, network: NetworkId, mode: Mode): Promise<string[]> {
  const rows = await db
    .selectFrom('sweeps')
    .select('id')
    .where('status', '=', 'running')
    .where('network', '=', network)
    .where('mode', '=', mode)
    .orderBy('created_at')
    .execute();
  return rows.map((r) => r.id);
}

export async function runningSweepIds(db: Db): Promise<string[]> {
  const rows = await db.selectFrom('sweeps').select('id').where('status', '=', 'running').orderBy('created_at').execute();
  return rows.map((r) => r.id);
}

export async function sweepById(db: Db, id: string): Promise<SweepRow | undefined> {
  return db.selectFrom('sweeps').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function sweepSteps(db: Db, sweepId: string): Promise<SweepStepRow[]> {
  return db.selectFrom('sweep_steps').selectAll().where('sweep_id', '=', sweepId).orderBy('seq').execute();
}

/** Purposes of the steps that move the tokens (a transfer per address, or one batch of several). */
export const TOKEN_MOVING_PURPOSES = ['transfer', 'batch'] as const;

/**
 * The token-moving transactions sent so far by each of `sweepIds` (steps with a hash), in step order: what a list of
 * sweeps links to. Served by sweep_steps_seq_uq (sweep_id, seq).
 */
export async function sweepsMovingTransactions(
  db: Db,
  sweepIds: readonly string[],
): Promise<Array<Pick<SweepStepRow, 'sweep_id' | 'seq' | 'purpose' | 'tx_hash'>>> {
  if (sweepIds.length === 0) return [];
  return db
    .selectFrom('sweep_steps')
    .select(['sweep_id', 'seq', 'purpose', 'tx_hash'])
    .where('sweep_id', 'in', [...sweepIds])
    .where('purpose', 'in', [...TOKEN_MOVING_PURPOSES])
    .where('tx_hash', 'is not', null)
    .orderBy('sweep_id')
    .orderBy('seq')
    .execute();
}

export async function sweepSources(db: Db, sweepId: string): Promise<SweepSourceRow[]> {
  return db.selectFrom('sweep_sources').selectAll().where('sweep_id', '=', sweepId).orderBy('address').execute();
}

/** pending → processing (the step may be signed for from now on). Answers the step as it is now. */
export async function claimSweepStep(db: Db, stepId: string): Promise<{ step: SweepStepRow; sweep: SweepRow } | undefined> {
  await db.updateTable('sweep_steps').set({ status: 'processing' }).where('id', '=', stepId).where('status', '=', 'pending').execute();
  const step = await db.selectFrom('sweep_steps').selectAll().where('id', '=', stepId).executeTakeFirst();
  if (!step) return undefined;
  const sweep = await db.selectFrom('sweeps').selectAll().where('id', '=', step.sweep_id).executeTakeFirstOrThrow();
  return { step, sweep };
}

export async function sweepStepAttempts(db: Db, stepId: string): Promise<SweepAttemptRow[]> {
  return attemptsOf<SweepAttemptRow>(db, SWEEP_STEP_ATTEMPTS, stepId);
}

/** Locks a step row; undefined unless it is still processing. */
export async function lockProcessingStep(trx: Transaction<Database>, stepId: string): Promise<SweepStepRow | undefined> {
  return trx
    .selectFrom('sweep_steps')
    .selectAll()
    .where('id', '=', stepId)
    .where('status', '=', 'processing')
    .forUpdate()
    .executeTakeFirst();
}

/**
 * A step landed and is final: the attempt confirmed (the others replaced), the step succeeded with its fee, per
 * source the base units that left it for the destination, and the step's journal entry, in one transaction. Idempotent: a step already settled
 * answers false and changes nothing.
 */
export async function settleSweepStep(
  db: Db,
  stepId: string,
  attempt: { id: bigint; txHash: string },
  r: { swept: Array<{ source: string; amount: bigint }>; fee: bigint; nativeMoved: bigint; elsewhere?: bigint; rentPaid?: bigint },
  landed: { block: { height: bigint; hash: string } },
): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    const step = await lockProcessingStep(trx, stepId);
    if (!step) return false;
    const sweep = await trx.selectFrom('sweeps').selectAll().where('id', '=', step.sweep_id).executeTakeFirstOrThrow();
    // The journal entry of this step's movements (docs/journal.md "Sweeps"), in the same transaction.
    await journalSweepStep(trx, sweep, step, { ...r, elsewhere: r.elsewhere ?? 0n, txHash: attempt.txHash, block: landed.block });
    await registerSweepWallets(trx, sweep);
    await trx.updateTable('sweep_step_attempts').set({ state: 'confirmed', settled_at: sql`now()` }).where('id', '=', attempt.id).execute();
    await trx
      .updateTable('sweep_step_attempts')
      .set({ state: 'replaced', settled_at: sql`now()` })
      .where('step_id', '=', stepId)
      .where('id', '!=', attempt.id)
      .where('state', 'in', ['signed', 'broadcast'])
      .execute();
    await trx
      .updateTable('sweep_steps')
      .set({
        status: 'succeeded',
        tx_hash: attempt.txHash,
        fee: r.fee,
        native_moved: r.nativeMoved,
        rent_paid: r.rentPaid ?? null,
        settled_at: sql`now()`,
      })
      .where('id', '=', stepId)
      .execute();
    let swept = 0n;
    for (const s of r.swept) {
      await trx
        .updateTable('sweep_sources')
        .set({ state: 'swept', swept_base: s.amount, tx_hash: attempt.txHash, swept_at: sql`now()` })
        .where('sweep_id', '=', step.sweep_id)
        .where('address', '=', s.source)
        .where('state', '=', 'planned')
        .execute();
      swept += s.amount;
    }
    await trx
      .updateTable('sweeps')
      .set({ swept_base: sql`swept_base + ${swept.toString()}::numeric`, actual_fee: sql`actual_fee + ${r.fee.toString()}::numeric` })
      .where('id', '=', step.sweep_id)
      .execute();
    return true;
  });
}

/**
 * Settles a step that nothing was signed for (skipped: not needed; failed: refused before signing), under the step's
 * lock and only while none of its attempts can still land: another run of the same step (the CLI's drive beside the
 * worker's pass) may have signed and sent it since this one looked, and then the step is followed, not closed.
 * False when nothing was written.
 */
export async function closeUnsentSweepStep(db: Db, stepId: string, status: 'skipped' | 'failed', reason: string): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    if (!(await lockProcessingStep(trx, stepId))) return false;
    if ((await blockingAttemptIdsOf(trx, SWEEP_STEP_ATTEMPTS, stepId)).length > 0) return false;
    await trx.updateTable('sweep_steps').set({ status, failure_reason: reason, settled_at: sql`now()` }).where('id', '=', stepId).execute();
    return true;
  });
}

/** The step failed (refused, reverted, nothing delivered): its live attempts end with it. */
export async function failSweepStep(db: Db, stepId: string, reason: string): Promise<void> {
  await db.transaction().execute(async (trx) => {
    await trx
      .updateTable('sweep_steps')
      .set({ status: 'failed', failure_reason: reason, settled_at: sql`now()` })
      .where('id', '=', stepId)
      .where('status', 'in', ['pending', 'processing'])
      .execute();
    await trx
      .updateTable('sweep_step_attempts')
      .set({ state: 'failed', settled_at: sql`now()` })
      .where('step_id', '=', stepId)
      .where('state', 'in', ['signed', 'broadcast'])
      .execute();
  });
}

/**
 * Ends a sweep once no step is in flight: steps never started are skipped, sources not swept are released (failed)
 * for a later sweep, and the status says how it went (completed, partial, failed).
 */
export async function finishSweep(db: Db, sweepId: string, reason: string | null): Promise<SweepRow | undefined> {
  return db.transaction().execute(async (trx) => {
    const sweep = await trx
      .selectFrom('sweeps')
      .selectAll()
      .where('id', '=', sweepId)
      .where('status', '=', 'running')
      .forUpdate()
      .executeTakeFirst();
    if (!sweep) return undefined;
    await trx
      .updateTable('sweep_steps')
      .set({ status: 'skipped', failure_reason: reason ?? 'not needed', settled_at: sql`now()` })
      .where('sweep_id', '=', sweepId)
      .where('status', '=', 'pending')
      .execute();
    const released = await trx
      .updateTable('sweep_sources')
      .set({ state: 'failed' })
      .where('sweep_id', '=', sweepId)
      .where('state', '=', 'planned')
      .returning('address')
      .execute();
    const status = released.length === 0 ? 'completed' : sweep.swept_base > 0n ? 'partial' : 'failed';
    return trx
      .updateTable('sweeps')
      .set({ status, failure_reason: reason, finished_at: sql`now()` })
      .where('id', '=', sweepId)
      .returningAll()
      .executeTakeFirst();
  });
}

export async function listSweeps(
  db: Db,
  q: { merchantId?: string; status?: string; limit: number },
): Promise<Array<SweepRow & { steps: SweepStepRow[]; sources: SweepSourceRow[] }>> {
  let query = db.selectFrom('sweeps').selectAll();
  if (q.merchantId) query = query.where('merchant_id', '=', q.merchantId);
  if (q.status) query = query.where('status', '=', q.status as SweepRow['status']);
  const sweeps = await query.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(q.limit).execute();
  const out = [];
  for (const s of sweeps) out.push({ ...s, steps: await sweepSteps(db, s.id), sources: await sweepSources(db, s.id) });
  return out;
}

/**
 * Native base units spent by settled sweep steps in [since, until), per merchant, network and mode: fees, Solana rent
 * locked in accounts the steps created (`rent_paid_base`), and the rent closed deposit token accounts returned
 * (`rent_returned_base`, native_moved of the batch and close steps on `rentNetworks`: default the Solana family's networks). `spent_base` = fees + rent paid; `net_base` = spent − returned.
 */
export async function sweepCosts(
  db: Db,
  q: { since: Date; until: Date; merchantId?: string; rentNetworks?: readonly string[] },
): Promise<
  Array<{
    merchant_id: string;
    network: string;
    mode: string;
    steps: number;
    fee_base: bigint;
    rent_paid_base: bigint;
    rent_returned_base: bigint;
    spent_base: bigint;
    net_base: bigint;
    swept_base_by_token: Record<string, string>;
  }>
> {
  const merchantFilter = q.merchantId ? sql`and s.merchant_id = ${q.merchantId}` : sql``;
  const rentNetworks = [...(q.rentNetworks ?? networksOfFamily('solana'))];
  const { rows } = await sql<{
    merchant_id: string;
    network: string;
    mode: string;
    steps: string;
    fee_base: string;
    rent_paid_base: string;
    rent_returned_base: string;
  }>`
    select s.merchant_id, s.network, s.mode, count(*)::text as steps, coalesce(sum(st.fee), 0)::text as fee_base,
           coalesce(sum(st.rent_paid), 0)::text as rent_paid_base,
           coalesce(sum(st.native_moved) filter (where s.network = any(${rentNetworks}::text[]) and st.purpose in ('batch', 'close')), 0)::text as rent_returned_base
    from sweep_steps st join sweeps s on s.id = st.sweep_id
    where st.status = 'succeeded' and st.settled_at >= ${q.since} and st.settled_at < ${q.until} ${merchantFilter}
    group by s.merchant_id, s.network, s.mode
    order by s.merchant_id, s.network, s.mode`.execute(db);
  const swept = await sql<{ merchant_id: string; network: string; mode: string; token: string; swept: string }>`
    select s.merchant_id, s.network, s.mode, src.token, sum(src.swept_base)::text as swept
    from sweep_sources src join sweeps s on s.id = src.sweep_id
    where src.state = 'swept' and src.swept_at >= ${q.since} and src.swept_at < ${q.until} ${merchantFilter}
    group by s.merchant_id, s.network, s.mode, src.token`.execute(db);
  return rows.map((r) => ({
    merchant_id: r.merchant_id,
    network: r.network,
    mode: r.mode,
    steps: Number(r.steps),
    fee_base: BigInt(r.fee_base),
    rent_paid_base: BigInt(r.rent_paid_base),
    rent_returned_base: BigInt(r.rent_returned_base),
    spent_base: BigInt(r.fee_base) + BigInt(r.rent_paid_base),
    net_base: BigInt(r.fee_base) + BigInt(r.rent_paid_base) - BigInt(r.rent_returned_base),
    swept_base_by_token: Object.fromEntries(
      swept.rows
        .filter((w) => w.merchant_id === r.merchant_id && w.network === r.network && w.mode === r.mode)
        .map((w) => [w.token, w.swept]),
    ),
  }));
}

/**
 * A fingerprint of what a live view of sweeps shows: per sweep its status, amounts and how many steps are in each
 * state. Two reads that return the same text saw no change.
 */
export async function sweepsFingerprint(db: Db, ids: readonly string[]): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  if (ids.length === 0) return out;
  const rows = await db
    .selectFrom('sweeps as s')
    .leftJoin('sweep_steps as st', 'st.sweep_id', 's.id')
    .select(['s.id', 's.status', 's.swept_base', 's.actual_fee', 'st.status as step_status'])
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where('s.id', 'in', ids)
    .groupBy(['s.id', 's.status', 's.swept_base', 's.actual_fee', 'st.status'])
    .orderBy('s.id')
    .orderBy('st.status')
    .execute();
  for (const r of rows) out.set(r.id, `${out.get(r.id) ?? `${r.status}/${r.swept_base}/${r.actual_fee}`}|${r.step_status}:${r.n}`);
  return out;
}

/** The newest sweep's creation and how many run: the fingerprint of the sweeps list. */
export async function sweepListFingerprint(db: Db): Promise<string> {
  const r = await db
    .selectFrom('sweeps')
    .select((eb) => [eb.fn.max('created_at').as('latest'), eb.fn.count<string>('id').filterWhere('status', '=', 'running').as('running')])
    .executeTakeFirst();
  return `${r?.latest instanceof Date ? r.latest.toISOString() : ''}/${r?.running ?? 0}`;
}
