import { sql, type Transaction } from 'kysely';
import type { Db } from '../../db/database.js';
import type { Database } from '../../db/schema.js';
import type { Mode, NetworkId } from '../../../chains/vocabulary.js';
import { journalBurntFee } from '../journal/entries.js';
import { walletHistoryLedger } from './wallet-history.js';
import type { ClaimResult, NonceRef, OutboundAttempt, OutboundStore, TakenNonce } from './outbound-store.js';

// The one store of outbound attempts (docs/outbound.md "The attempt store"): every kind whose attempts live in a table
// of their own with the same shape (refund payouts: payout_attempts; sweep steps: sweep_step_attempts; deposit setups:
// deposit_setup_attempts; gas-station drains: gas_station_drain_attempts) is read and written here, parametrised by its table, and served to the outbound engine as an
// OutboundStore by `attemptOutboundStore`. What is written once for all of them:
// - the state guard: an attempt leaves `signed`/`broadcast` (live) only forward (to broadcast, or to a settled state:
//   confirmed, failed, replaced, dropped) and never comes back: a setter that finds it settled changes nothing, so a
//   driver that read it live before another driver settled it (a receipt landed, its expiry proven) cannot write it
//   back to `broadcast`, nor drop a confirmed one;
// - the one way back: identical bytes signed again (same nonce, same fees: deterministic signatures give the same
//   hash) revive the job's own DROPPED attempt with that hash, one row, never a unique-key violation; the same hash on
//   any other row (live, settled, another job's) is refused and nothing is stored;
// - the live filter, the lock-then-race check of `sign`, and the row → OutboundAttempt mapping.
// Subscription charges keep their own model (the charge row carries signed/broadcast; attempts are live or dropped,
// src/ledger/subscriptions/charges.ts) and share only `toAttempt`.

export type AttemptState = 'signed' | 'broadcast' | 'confirmed' | 'failed' | 'replaced' | 'dropped';

/** One kind's attempts table and the job row it belongs to. */
export interface AttemptTable {
  table: 'payout_attempts' | 'sweep_step_attempts' | 'deposit_setup_attempts' | 'gas_station_drain_attempts';
  /** The column naming the job. */
  jobColumn: 'refund_id' | 'step_id' | 'setup_id' | 'drain_id';
  /** Whether the table keeps broadcast_at (deposit_setup_attempts does not). */
  broadcastAt: boolean;
  /** The job's table, and what a signature notes on its row: signed_at (the first), the newest tx_hash. */
  job: { table: 'refunds' | 'sweep_steps' | 'deposit_setups' | 'gas_station_drains'; signedAt: boolean; txHash: boolean; noun: string };
}

export const PAYOUT_ATTEMPTS: AttemptTable = {
  table: 'payout_attempts',
  jobColumn: 'refund_id',
  broadcastAt: true,
  job: { table: 'refunds', signedAt: true, txHash: false, noun: 'refund' },
};
export const SWEEP_STEP_ATTEMPTS: AttemptTable = {
  table: 'sweep_step_attempts',
  jobColumn: 'step_id',
  broadcastAt: true,
  job: { table: 'sweep_steps', signedAt: true, txHash: true, noun: 'sweep step' },
};
export const DEPOSIT_SETUP_ATTEMPTS: AttemptTable = {
  table: 'deposit_setup_attempts',
  jobColumn: 'setup_id',
  broadcastAt: false,
  job: { table: 'deposit_setups', signedAt: false, txHash: false, noun: 'deposit setup' },
};
export const GAS_STATION_DRAIN_ATTEMPTS: AttemptTable = {
  table: 'gas_station_drain_attempts',
  jobColumn: 'drain_id',
  broadcastAt: true,
  job: { table: 'gas_station_drains', signedAt: false, txHash: true, noun: 'gas-station drain' },
};

/** The columns every attempts table has (plus its job column, and broadcast_at where kept). */
export interface AttemptRow {
  id: bigint;
  network: NetworkId;
  mode: Mode;
  sender: string;
  nonce: bigint | null;
  tx_hash: string;
  signed: Record<string, string | null>;
  state: AttemptState;
  fee_bump_percent: number;
  detail: string | null;
  created_at: Date;
  settled_at: Date | null;
}

export type JobId = string | bigint;
type Executor = Db | Transaction<Database>;

/** The states an attempt may be left from: the live ones. Settled states are final. */
const LIVE: readonly AttemptState[] = ['signed', 'broadcast'];
/** The states that block a new signature: live, or landed. */
const BLOCKING: readonly AttemptState[] = ['signed', 'broadcast', 'confirmed'];

/** The note a revived attempt carries: why it was dropped before. */
export const REVIVED_DETAIL = 'signed again with identical bytes after it was dropped: ';
/** Why a first offer refused by the network was dropped when its nonce was given back. */
export const NONCE_GIVEN_BACK = 'refused by the network before landing; nonce given back';

const inList = (states: readonly AttemptState[]) =>
  sql.join(
    states.map((s) => sql.lit(s)),
    sql`, `,
  );

/** Every attempt of a job, oldest first. */
export async function attemptsOf<R extends AttemptRow = AttemptRow>(db: Executor, t: AttemptTable, jobId: JobId): Promise<R[]> {
  const r = await sql<R>`select * from ${sql.table(t.table)} where ${sql.ref(t.jobColumn)} = ${String(jobId)} order by id`.execute(db);
  return r.rows;
}

/** The attempts of a job that may still land (signed or broadcast), oldest first. */
export async function liveAttemptsOf(db: Executor, t: AttemptTable, jobId: JobId): Promise<OutboundAttempt[]> {
  const rows = await attemptsOf(db, t, jobId);
  return rows.filter((a) => LIVE.includes(a.state)).map((a) => toAttempt(a, a.state !== 'signed'));
}

/** Under the job row's lock: the attempts that block a new signature (signed, broadcast or confirmed), newest first. */
export async function blockingAttemptIdsOf(trx: Transaction<Database>, t: AttemptTable, jobId: JobId): Promise<bigint[]> {
  const r = await sql<{ id: bigint }>`
    select id from ${sql.table(t.table)}
    where ${sql.ref(t.jobColumn)} = ${String(jobId)} and state in (${inList(BLOCKING)})
    order by id desc`.execute(trx);
  return r.rows.map((x) => x.id);
}

/**
 * Under the job row's lock: whether the attempts are still as the caller saw them (none blocking for a first
 * attempt; `replacing` still the newest blocking one for a replacement). False when another run signed meanwhile.
 */
export async function attemptsAsSeen(
  trx: Transaction<Database>,
  t: AttemptTable,
  jobId: JobId,
  replacing: Pick<OutboundAttempt, 'id'> | null,
): Promise<boolean> {
  const blocking = await blockingAttemptIdsOf(trx, t, jobId);
  return replacing ? String(blocking[0]) === String(replacing.id) : blocking.length === 0;
}

/** What a signature stores. */
export interface SignedAttempt {
  sender: string;
  nonce: bigint | null;
  txHash: string;
  signed: Record<string, string | null>;
  feeBumpPercent: number;
}

/**
 * Stores a signed attempt of the job (and notes it on the job's row: signed_at, the newest tx_hash), in one statement:
 * this runs inside the wallet's nonce lock, so every round trip saved here is one less that every transfer of the
 * wallet waits for. Identical bytes signed again revive the job's dropped attempt with that hash (one row, live from
 * now: the stuck-replacement clock too, never broadcast, not settled; its detail keeps why it was dropped); the same
 * hash on any other row (live, settled, or another job's) is refused: this throws, rolling the signing transaction
 * back, and nothing is stored or sent.
 */
export async function recordAttempt<R extends AttemptRow = AttemptRow>(
  trx: Transaction<Database>,
  t: AttemptTable,
  job: { id: JobId; network: NetworkId; mode: Mode },
  a: SignedAttempt,
): Promise<R> {
  const jobId = String(job.id);
  const table = sql.table(t.table);
  const noted = [
    ...(t.job.signedAt ? [sql`signed_at = coalesce(signed_at, now())`] : []),
    ...(t.job.txHash ? [sql`tx_hash = ${a.txHash}`] : []),
  ];
  const noteJob =
    noted.length > 0
      ? sql`with signed_job as (update ${sql.table(t.job.table)} set ${sql.join(noted, sql`, `)} where id = ${jobId} returning id) `
      : sql``;
  const r = await sql<R>`${noteJob}
    insert into ${table} (${sql.ref(t.jobColumn)}, network, mode, sender, nonce, tx_hash, signed, fee_bump_percent)
    values (${jobId}, ${job.network}, ${job.mode}, ${a.sender}, ${a.nonce === null ? null : a.nonce.toString()}, ${a.txHash},
            ${JSON.stringify(a.signed)}::jsonb, ${a.feeBumpPercent})
    on conflict (network, mode, tx_hash) do update
      set state = 'signed', detail = ${REVIVED_DETAIL} || coalesce(${sql.ref(`${t.table}.detail`)}, ''), created_at = now(),
          settled_at = null${t.broadcastAt ? sql`, broadcast_at = null` : sql``}
      where ${sql.ref(`${t.table}.${t.jobColumn}`)} = ${jobId} and ${sql.ref(`${t.table}.state`)} = 'dropped'
    returning *`.execute(trx);
  const row = r.rows[0];
  if (!row) throw new Error(`transaction ${a.txHash} is already recorded and not a dropped attempt of ${t.job.noun} ${jobId}`);
  return row;
}

/**
 * The state guard, for every kind: a live attempt (signed or broadcast) moves to `state`; a settled one (confirmed,
 * failed, replaced, dropped) is final and nothing changes (false). `broadcast` notes broadcast_at the first time; a
 * settled state notes settled_at. `detail`, when given, replaces the note.
 */
export async function setAttemptStateOf(
  db: Executor,
  t: AttemptTable,
  attemptId: bigint,
  state: Exclude<AttemptState, 'signed'>,
  detail?: string,
): Promise<boolean> {
  const sets = [
    sql`state = ${state}`,
    ...(detail !== undefined ? [sql`detail = ${detail}`] : []),
    ...(state === 'broadcast' && t.broadcastAt ? [sql`broadcast_at = coalesce(broadcast_at, now())`] : []),
    ...(state !== 'broadcast' ? [sql`settled_at = now()`] : []),
  ];
  const r = await sql`update ${sql.table(t.table)} set ${sql.join(sets, sql`, `)}
    where id = ${attemptId} and state in (${inList(LIVE)})`.execute(db);
  return (r.numAffectedRows ?? 0n) > 0n;
}

/** A stored attempt as the engine sees it; `broadcast`: whether a node took the bytes at least once. */
export function toAttempt(
  a: Pick<AttemptRow, 'id' | 'tx_hash' | 'nonce' | 'signed' | 'fee_bump_percent' | 'created_at'>,
  broadcast: boolean,
): OutboundAttempt {
  return {
    id: a.id,
    txHash: a.tx_hash,
    nonce: a.nonce,
    signed: a.signed,
    feeBumpPercent: a.fee_bump_percent,
    createdAt: a.created_at,
    broadcast,
  };
}

/** Gives a wallet's nonce back when it is the last handed out, running `drop` in the same transaction (payouts.ts). */
export type ReleaseNonceIfLast = (
  db: Db,
  ref: NonceRef,
  attempt: { nonce: bigint | null },
  drop: (trx: Transaction<Database>) => Promise<unknown>,
) => Promise<boolean>;

/** One kind of job over an attempts table: what differs between kinds. */
export interface AttemptJobKind<J, L> {
  attempts: AttemptTable;
  /** Takes the job up for processing; `done` when it is settled, canceled or missing. */
  claim(id: string): Promise<ClaimResult<J>>;
  jobId(job: J): JobId;
  /** Locks the job's row for signing; undefined unless it may still be signed for (canceled or settled meanwhile). */
  lock(trx: Transaction<Database>, job: J): Promise<L | undefined>;
  /** Where the job's attempts are sent (the locked row's network and mode). */
  chain(locked: L, job: J): { network: NetworkId; mode: Mode };
  /**
   * The wallet's nonce allocator (payouts.ts takeNextNonce) and its give-back, for kinds that sign with account
   * nonces; absent for kinds sent only on chains without them (the nonce calls then refuse, so that a nonce family
   * added later cannot silently share a wallet's nonce row without a proper policy).
   */
  nonces?: {
    take(trx: Transaction<Database>, ref: NonceRef, chainNonce: bigint): Promise<TakenNonce>;
    releaseIfLast: ReleaseNonceIfLast;
  };
  /** The journal link of a fee burnt by a landed, failed transaction of the job. */
  burnt(job: J): Parameters<typeof journalBurntFee>[2];
}

/**
 * The OutboundStore of a kind over its attempts table (src/ledger/outbound/outbound-store.ts). A job stays processing while its
 * attempts are followed: nothing to reopen.
 */
export function attemptOutboundStore<J, L>(db: Db, k: AttemptJobKind<J, L>): OutboundStore<J> {
  const t = k.attempts;
  return {
    wallets: walletHistoryLedger(db),
    claim: (id) => k.claim(id),
    liveAttempts: (job) => liveAttemptsOf(db, t, k.jobId(job)),
    async sign(job, replacing, fn) {
      return db.transaction().execute(async (trx) => {
        const locked = await k.lock(trx, job);
        if (!locked) return 'closed' as const;
        // Another run of this job (a duplicate job, the CLI beside the worker) may have signed since the caller
        // looked: sign only if the attempts are still as seen.
        if (!(await attemptsAsSeen(trx, t, k.jobId(job), replacing))) return 'raced' as const;
        const chain = k.chain(locked, job);
        return fn({
          takeNonce: (ref, chainNonce) =>
            k.nonces
              ? k.nonces.take(trx, ref, chainNonce)
              : Promise.reject(new Error(`${t.job.noun}s are sent only on chains without account nonces`)),
          record: async (a) => {
            const row = await recordAttempt(trx, t, { id: k.jobId(job), ...chain }, a);
            return toAttempt(row, false);
          },
        });
      });
    },
    markBroadcast: async (_job, a) => {
      await setAttemptStateOf(db, t, a.id, 'broadcast');
    },
    dropAttempt: async (_job, a, reason) => {
      await setAttemptStateOf(db, t, a.id, 'dropped', reason);
    },
    // Without a nonce to give back (Solana), the same bytes are offered until they land or are proven expired.
    releaseNonceIfLast: (_job, ref, a) =>
      k.nonces
        ? k.nonces.releaseIfLast(db, ref, a, (trx) => setAttemptStateOf(trx, t, a.id, 'dropped', NONCE_GIVEN_BACK))
        : Promise.resolve(false),
    reopen: async () => true,
    recordBurntFee: (job, b) => journalBurntFee(db, b, k.burnt(job)),
  };
}
