import { sql, type Kysely, type Transaction } from 'kysely';
import type { Selectable } from 'kysely';
import { isUniqueViolation } from '../../db/errors.js';
import type { Database } from '../../db/schema.js';
import type { SignerAuditOutcome, SignerAuditTable } from '../../db/signer-tables.js';

// The signer's audit (migration 2026_11_29_0600_signer, docs/signer.md "Audit"): one row per signature asked of the
// signer role (signed or refused) and per pause or resume. Append-only: the table's trigger refuses every UPDATE,
// DELETE and TRUNCATE. Never key material: a key's path, the digest and what the transaction does.

export interface SignerAuditEntry {
  outcome: SignerAuditOutcome;
  requestId?: string | null;
  purpose?: string | null;
  intent?: unknown;
  merchantId?: string | null;
  network?: string | null;
  mode?: string | null;
  keyPath?: string | null;
  code?: string | null;
  reason?: string | null;
  digest?: string | null;
  summary?: unknown;
  amountBase?: bigint | null;
}

export type SignerAuditRow = Omit<Selectable<SignerAuditTable>, 'id'> & { id: string };

const json = (v: unknown): string | null =>
  v === undefined || v === null ? null : JSON.stringify(v, (_k, x) => (typeof x === 'bigint' ? x.toString() : x));

/** Appends one row; false when its request_id was already answered (a concurrent twin won). */
export async function appendSignerAudit(db: Kysely<Database> | Transaction<Database>, e: SignerAuditEntry): Promise<boolean> {
  try {
    await db
      .insertInto('signer_audit')
      .values({
        outcome: e.outcome,
        request_id: e.requestId ?? null,
        purpose: e.purpose ?? null,
        intent: json(e.intent),
        merchant_id: e.merchantId ?? null,
        network: e.network ?? null,
        mode: e.mode ?? null,
        key_path: e.keyPath ?? null,
        code: e.code ?? null,
        reason: e.reason ?? null,
        digest: e.digest ?? null,
        summary: json(e.summary),
        amount_base: e.amountBase ?? null,
      })
      .execute();
    return true;
  } catch (err) {
    if (isUniqueViolation(err, 'signer_audit_request')) return false;
    throw err;
  }
}

/** Whether a request with this id was already answered (signed or refused). */
export async function isRequestIdSeen(db: Kysely<Database>, requestId: string): Promise<boolean> {
  const row = await db.selectFrom('signer_audit').select('id').where('request_id', '=', requestId).limit(1).executeTakeFirst();
  return row !== undefined;
}

/** What the signer's limits count: refund payouts, and sweep steps sending tokens to a recently changed treasury. */
export type LimitedPurpose = 'refund_payout' | 'sweep_step';

/**
 * What the limits count of one token: over the signed sends of the window, each object once (a refund or a sweep step,
 * at the largest amount signed for it), summed.
 */
export interface SignedTotal {
  token: string;
  /** Sum over the objects signed in the last hour of the largest amount signed for each in that hour. */
  lastHour: bigint;
  /** The same over the last day. */
  lastDay: bigint;
}

/** The intent field naming the object a limited send is for. */
const OBJECT_FIELD: Record<LimitedPurpose, string> = { refund_payout: 'refund_id', sweep_step: 'step_id' };

/**
 * The sends of `purpose` signed for a merchant on one network and mode in the last 24 hours that the limits count, each
 * object once (a fee-bumped replacement of the same refund or step is the same money), `except` one object (the one
 * being asked for), summed per token in SQL: one row per token whatever the merchant's number of sends (the per-object
 * rows once went to the signer, 10,000 of them per signature for a merchant paying 10,000 refunds a day; docs/signer.md
 * "Limits"). Sweep steps count only when their summary says `limited` (tokens to a recently changed treasury).
 */
export async function signedLimitedTotals(
  db: Kysely<Database> | Transaction<Database>,
  o: { purpose: LimitedPurpose; merchantId: string; network: string; mode: string; except: string; now: Date },
): Promise<SignedTotal[]> {
  const hourAgo = new Date(o.now.getTime() - 3600_000);
  const dayAgo = new Date(o.now.getTime() - 86_400_000);
  // A literal (not a parameter): the select and the group by must name the same expression.
  const field = sql.lit(OBJECT_FIELD[o.purpose]);
  const sweepOnlyLimited = o.purpose === 'sweep_step' ? sql`and summary->>'limited' = 'true'` : sql``;
  const { rows } = await sql<{ token: string; last_hour: string | null; last_day: string }>`
    select per_object.token, sum(per_object.last_hour)::text as last_hour, sum(per_object.last_day)::text as last_day
    from (
      select summary->>'token' as token, max(amount_base) filter (where at > ${hourAgo}) as last_hour,
             max(amount_base) as last_day
      from signer_audit
      where merchant_id = ${o.merchantId} and network = ${o.network} and mode = ${o.mode} and outcome = 'signed'
        and purpose = ${o.purpose} and at > ${dayAgo} and intent->>${field} is distinct from ${o.except} ${sweepOnlyLimited}
      group by intent->>${field}, summary->>'token'
    ) per_object
    group by per_object.token`.execute(db);
  return rows.map((r) => ({ token: r.token, lastHour: BigInt(r.last_hour ?? '0'), lastDay: BigInt(r.last_day) }));
}

/** Serialises limit checks of one merchant, network and mode until the transaction ends. */
export async function lockSignerLimits(trx: Transaction<Database>, key: string): Promise<void> {
  await sql`select pg_advisory_xact_lock(hashtextextended(${`signer-limits:${key}`}, 0))`.execute(trx);
}

/** Newest first (operators, tests). */
export async function listSignerAudit(db: Kysely<Database>, o: { limit: number; requestId?: string }): Promise<SignerAuditRow[]> {
  let q = db.selectFrom('signer_audit').selectAll();
  if (o.requestId !== undefined) q = q.where('request_id', '=', o.requestId);
  const rows = await q.orderBy('id', 'desc').limit(o.limit).execute();
  return rows.map((r) => ({ ...r, id: String(r.id) }));
}
