import { sql, type Kysely, type Transaction } from 'kysely';
import type { Selectable } from 'kysely';
import type { Database, PaymentSessionsTable } from '../../db/schema.js';
import type { Mode } from '../../../chains/vocabulary.js';
import { newId } from '../../domain/ids.js';
import { formatBaseUnits, stablecoinMinorToBase } from '../../domain/money.js';
import { SESSION_TRANSITIONS } from '../../domain/session-state.js';
import { decideCredits } from '../../domain/deposit-credit.js';
import { insertOutboxEvents, type OutboxEventInput } from '../core/outbox.js';
import { PAYMENT_EVENT_TYPE, paymentEventObject } from '../../domain/events/payment.js';
import type { UnmatchedReason } from '../../db/deposit-tables.js';
import { UNSUPPORTED_TOKEN_NOTICE } from '../../domain/unmatched-reasons.js';
import type { ChainRef } from '../core/chain-ref.js';
import type { ObservedDeposit } from '../core/observed-deposit.js';
import { receivedPayments } from './session-payments.js';
import { sessionReceivedFields } from '../../domain/events/session-received.js';
import { EXTERNAL_ACCOUNT, addressAccount, journalAsset, transferLegs } from '../journal/accounts.js';
import { recordMovementsAgain, reverseObservedAbove, withDepositEntries, type InsertedDeposit } from '../journal/entries.js';

// The ledger side of deposits. Rules (decisions.md):
// - a deposit is unique by (network, mode, tx hash, log index); observing it again changes nothing, except that an
//   orphaned deposit landing again in a new branch becomes provisional again;
// - only final (confirmed) deposits move money: a session is paid when its confirmed credits reach the amount due;
//   partial payments add up; the excess of an overpayment is recorded in session_settlements; a remainder below one
//   API minor unit (0.01 of the token), or within the merchant's underpayment tolerance, settles as paid with the
//   shortfall recorded (settlement-rule.ts);
// - a transfer in a block timestamped at or before expires_at counts even if it becomes final later; later ones,
//   and transfers to a paid, canceled or re-targeted session, are confirmed as unmatched deposits for the operator;
// - a transfer that can never complete an open session (another token, or another network, than the session's
//   selection), in a block at or before expires_at, also writes payment.failed for that transfer (once: a deposit is
//   confirmed once; never for a zero-value transfer); the session stays open.

/** A deposit row written or revived by recordObservedDeposits (for log lines): what its journal entry is made from. */
export type RecordedDeposit = InsertedDeposit;

/** Inserts provisional deposits (one statement), linking each to the session owning its address. Returns rows new or revived. */
export async function recordObservedDeposits(
  trx: Transaction<Database>,
  chain: ChainRef,
  items: readonly ObservedDeposit[],
): Promise<number> {
  return (await recordObservedDepositRows(trx, chain, items)).length;
}

/** recordObservedDeposits, answering the rows new or revived. */
export async function recordObservedDepositRows(
  trx: Transaction<Database>,
  chain: ChainRef,
  items: readonly ObservedDeposit[],
  /** `journal: false` only for the watcher benchmark's comparison run (scripts/bench/evm-watcher.ts). */
  opts: { journal?: boolean } = {},
): Promise<RecordedDeposit[]> {
  if (items.length === 0) return [];
  const insert = insertDeposits(chain, items, null);
  if (opts.journal === false) return (await insert.execute(trx)).rows;
  // Journal: customer → deposit address, from the block it was seen in; reversed if a reorg removes that block. Written
  // by the same statement; a deposit revived after a reorg (its key taken by the reversed entry) by a second one.
  const result = await withDepositEntries(chain, insert).execute(trx);
  const rows = result.rows.map(({ journaled: _, ...d }) => d);
  const revived = rows.filter((_, i) => !result.rows[i]!.journaled);
  if (revived.length === 0) return rows;
  await recordMovementsAgain(
    trx,
    revived.map((d) => ({
      network: chain.network,
      mode: chain.mode,
      txHash: d.tx_hash,
      legKey: `log:${d.log_index}`,
      kind: 'deposit' as const,
      blockHeight: d.block_number,
      blockHash: d.block_hash,
      merchantId: d.merchant_id,
      sessionId: d.session_id,
      object: { type: 'deposit' as const, id: d.id },
      legs: transferLegs(
        journalAsset(chain.network, chain.mode, d.token),
        EXTERNAL_ACCOUNT,
        addressAccount(chain.network, chain.mode, d.to_address),
        d.amount_base,
      ),
    })),
  );
  return rows;
}

/**
 * Look-alike transfers (USDbC, USDC.e: PollResult.unsupported) to deposit addresses: provisional deposits like any
 * other (same key, same reorg life), with `unmatched_reason = 'unsupported_token'` from the start, so that confirming
 * them never credits (deposit-credit.ts) and readers can leave them out before they are final. `token` is the
 * look-alike's symbol, `token_contract` its address. Not journaled: it is no asset of the books (docs/journal.md).
 */
export async function recordUnsupportedDepositRows(
  trx: Transaction<Database>,
  chain: ChainRef,
  items: readonly ObservedDeposit[],
): Promise<RecordedDeposit[]> {
  if (items.length === 0) return [];
  return (await insertDeposits(chain, items, 'unsupported_token').execute(trx)).rows;
}

/** Readers that show money a session may count (payments[], the hosted page) leave these rows out. */
export const UNSUPPORTED_TOKEN_REASON = 'unsupported_token' satisfies UnmatchedReason;

/** The insert (one statement) of observed deposits, new or revived after a reorg; answers those rows. */
function insertDeposits(chain: ChainRef, items: readonly ObservedDeposit[], reason: UnmatchedReason | null) {
  const col = <T>(f: (d: ObservedDeposit) => T) => items.map(f);
  return sql<RecordedDeposit>`
    insert into deposits (id, network, mode, tx_hash, log_index, block_number, block_hash, block_time, token,
                          token_contract, from_address, to_address, amount_base, session_id, status, unmatched_reason)
    select v.id, ${chain.network}, ${chain.mode}, v.tx_hash, v.log_index, v.block_number, v.block_hash, v.block_time,
           v.token, v.token_contract, v.from_address, v.to_address, v.amount_base, da.session_id, 'provisional', ${reason}::text
    from unnest(${col(() => newId('dep'))}::text[], ${col((d) => d.txHash)}::text[], ${col((d) => d.logIndex)}::int[],
                ${col((d) => d.blockHeight.toString())}::bigint[], ${col((d) => d.blockHash)}::text[],
                ${col((d) => d.blockTime.toISOString())}::timestamptz[], ${col((d) => d.token)}::text[],
                ${col((d) => d.tokenContract)}::text[], ${col((d) => d.from)}::text[], ${col((d) => d.to)}::text[],
                ${col((d) => d.amount.toString())}::numeric[])
         as v(id, tx_hash, log_index, block_number, block_hash, block_time, token, token_contract, from_address, to_address, amount_base)
    left join deposit_addresses da on da.network = ${chain.network} and da.mode = ${chain.mode} and da.address = v.to_address
    on conflict (network, mode, tx_hash, log_index) do update
      set status = 'provisional', block_number = excluded.block_number, block_hash = excluded.block_hash,
          block_time = excluded.block_time, orphaned_at = null
      where deposits.status = 'orphaned'
    returning deposits.id, deposits.session_id, deposits.tx_hash, deposits.log_index, deposits.block_number, deposits.token,
              deposits.amount_base, deposits.to_address, deposits.block_hash,
              -- set by the deposits_set_merchant trigger from the session (a deposit never changes session)
              deposits.merchant_id`;
}

/** Reorg: provisional deposits in blocks above `height` stopped being canonical. Confirmed ones are never touched. */
export async function orphanProvisionalDepositsAbove(trx: Transaction<Database>, chain: ChainRef, height: bigint): Promise<number> {
  const r = await trx
    .updateTable('deposits')
    .set({ status: 'orphaned', orphaned_at: sql`now()` })
    .where('network', '=', chain.network)
    .where('mode', '=', chain.mode)
    .where('status', '=', 'provisional')
    .where('block_number', '>', height)
    .executeTakeFirst();
  // Journal: what the watcher recorded from the removed blocks is reversed by new entries, never deleted.
  await reverseObservedAbove(trx, chain, height);
  return Number(r.numUpdatedRows);
}

export interface ConfirmResult {
  confirmed: number;
  credited: number;
  paidSessionIds: string[];
  /** Each deposit confirmed, in chain order (for log lines). */
  decisions: Array<{
    depositId: string;
    sessionId: string | null;
    txHash: string;
    disposition: 'credited' | 'unmatched';
    reason: UnmatchedReason | null;
    paidSession: boolean;
  }>;
}

/**
 * Confirms every provisional deposit at or below `finalHeight`, in chain order, and applies it to its session.
 * Statement count does not grow with the batch size. Session rows are locked; a session update matching fewer rows
 * than decided is a conflict and aborts the whole transaction (nothing half-applied).
 */
export async function confirmFinalDeposits(
  trx: Transaction<Database>,
  chain: ChainRef,
  finalHeight: bigint,
  tokenDecimals: (token: string) => number,
  /** The form of an address shown to people (TRON base58), for the senders in payment.completed; default: as stored. */
  displayAddress?: (canonical: string) => string,
): Promise<ConfirmResult> {
  const deposits = await trx
    .selectFrom('deposits')
    .select(['id', 'session_id', 'token', 'amount_base', 'block_time', 'tx_hash', 'unmatched_reason'])
    .where('network', '=', chain.network)
    .where('mode', '=', chain.mode)
    .where('status', '=', 'provisional')
    .where('block_number', '<=', finalHeight)
    .orderBy('block_number')
    .orderBy('log_index')
    .forUpdate()
    .execute();
  if (deposits.length === 0) return { confirmed: 0, credited: 0, paidSessionIds: [], decisions: [] };

  const sessions = await lockDepositSessions(trx, deposits);
  const toleranceBps = await merchantTolerances(trx, sessions);
  const batch = decideCredits(
    deposits.map((d) => ({
      id: d.id,
      sessionId: d.session_id,
      token: d.token,
      amountBase: d.amount_base,
      blockTime: d.block_time,
      unsupported: d.unmatched_reason === UNSUPPORTED_TOKEN_REASON,
    })),
    sessions.map((s) => ({
      id: s.id,
      merchantId: s.merchant_id,
      network: s.network,
      token: s.token,
      status: s.status,
      expiresAt: s.expires_at,
      targetAmountMinor: s.target_amount_minor,
      receivedBase: s.received_base,
    })),
    { network: chain.network, tokenDecimals, toleranceBps: (m) => toleranceBps.get(m) ?? 0 },
  );
  const { decisions } = batch;

  await sql`
    update deposits set status = 'confirmed', confirmed_at = now(), disposition = v.disposition, unmatched_reason = v.reason
    from unnest(${decisions.map((x) => x.depositId)}::text[], ${decisions.map((x) => x.disposition)}::text[],
                ${decisions.map((x) => x.reason)}::text[]) as v(id, disposition, reason)
    where deposits.id = v.id and deposits.status = 'provisional'`.execute(trx);

  const sessionById = new Map(sessions.map((s) => [s.id, s]));
  // Written before any payment.completed of this batch: such a transfer is only recorded while its session is unpaid.
  const events: OutboxEventInput[] = batch.failedTransfers.map((f) => {
    const session = sessionById.get(f.sessionId)!;
    return {
      merchantId: session.merchant_id,
      mode: session.mode,
      type: PAYMENT_EVENT_TYPE.failed,
      object: paymentEventObject(session, 'failed', { text: formatBaseUnits(f.amountBase, tokenDecimals(f.token)), currency: f.token }),
      aggregateId: session.id,
    };
  });
  const credited = batch.credited.map((c) => ({ ...c, row: sessionById.get(c.sessionId)! }));
  const paidSessionIds = await creditSessions(trx, chain, credited, tokenDecimals, displayAddress, events);
  await insertOutboxEvents(trx, events);

  const byDeposit = new Map(deposits.map((d) => [d.id, d]));
  const paidBy = new Set(batch.credited.flatMap((s) => (s.paidBy ? [s.paidBy] : [])));
  return {
    confirmed: decisions.length,
    credited: decisions.filter((x) => x.disposition === 'credited').length,
    paidSessionIds,
    decisions: decisions.map((x) => {
      const d = byDeposit.get(x.depositId)!;
      return {
        depositId: x.depositId,
        sessionId: d.session_id,
        txHash: d.tx_hash,
        disposition: x.disposition,
        reason: x.reason,
        paidSession: paidBy.has(x.depositId),
      };
    }),
  };
}

type LockedSession = Selectable<PaymentSessionsTable>;

/** The sessions of these deposits, locked in id order (one lock order for every writer). */
async function lockDepositSessions(
  trx: Transaction<Database>,
  deposits: ReadonlyArray<{ session_id: string | null }>,
): Promise<LockedSession[]> {
  const sessionIds = [...new Set(deposits.flatMap((d) => (d.session_id ? [d.session_id] : [])))];
  if (sessionIds.length === 0) return [];
  return trx
    .selectFrom('payment_sessions')
    .selectAll()
    .where(sql<boolean>`id = any(${sessionIds}::text[])`)
    .orderBy('id')
    .forUpdate()
    .execute();
}

async function merchantTolerances(trx: Transaction<Database>, sessions: readonly LockedSession[]): Promise<Map<string, number>> {
  const merchantIds = [...new Set(sessions.map((x) => x.merchant_id))];
  if (merchantIds.length === 0) return new Map();
  const rows = await trx.selectFrom('merchants').select(['id', 'underpayment_tolerance_bps']).where('id', 'in', merchantIds).execute();
  return new Map(rows.map((m) => [m.id, m.underpayment_tolerance_bps]));
}

/**
 * Writes what the batch credited: each session's running total, and for every session it paid the settlement row and
 * payment.completed (pushed onto `events`). Answers the ids of the sessions paid.
 */
async function creditSessions(
  trx: Transaction<Database>,
  chain: ChainRef,
  credited: ReadonlyArray<{ row: LockedSession; received: bigint; paidBy: string | null }>,
  tokenDecimals: (token: string) => number,
  displayAddress: ((canonical: string) => string) | undefined,
  events: OutboxEventInput[],
): Promise<string[]> {
  if (credited.length === 0) return [];
  const dueOf = (row: LockedSession) => stablecoinMinorToBase(row.target_amount_minor, tokenDecimals(row.token!));
  const shortfallOf = (row: LockedSession, received: bigint): bigint => {
    const due = dueOf(row);
    return due > received ? due - received : 0n;
  };
  const r = await sql<{ id: string }>`
    update payment_sessions p
    set received_base = v.received,
        status = case when v.paid then 'paid' else p.status end,
        paid_at = case when v.paid then now() else p.paid_at end,
        shortfall_base = case when v.paid then v.shortfall else p.shortfall_base end
    from unnest(${credited.map((s) => s.row.id)}::text[], ${credited.map((s) => s.received.toString())}::numeric[],
                ${credited.map((s) => s.paidBy !== null)}::bool[], ${credited.map((s) => shortfallOf(s.row, s.received).toString())}::numeric[])
         as v(id, received, paid, shortfall)
    where p.id = v.id and p.status in (${sql.join([...SESSION_TRANSITIONS.pay])})
    returning p.id`.execute(trx);
  if (r.rows.length !== credited.length) throw new Error('session state changed under a deposit credit (conflict)');

  // Every session paid by this batch: its settlement row and payment.completed, in one statement each (not one
  // round trip per session: the confirming step of a busy block credits thousands; docs/performance.md).
  const paid = credited.filter((s) => s.paidBy !== null);
  if (paid.length === 0) return [];
  const settled = paid.map((s) => {
    const due = dueOf(s.row);
    return { s, due, overpaid: s.received > due ? s.received - due : 0n, shortfall: due > s.received ? due - s.received : 0n };
  });
  const text = (f: (x: (typeof settled)[number]) => bigint) => settled.map((x) => f(x).toString());
  await sql`
    insert into session_settlements (session_id, network, token, due_base, received_base, overpaid_base, shortfall_base, paying_deposit_id)
    select v.session_id, ${chain.network}, v.token, v.due, v.received, v.overpaid, v.shortfall, v.paying
    from unnest(${settled.map((x) => x.s.row.id)}::text[], ${settled.map((x) => x.s.row.token!)}::text[],
                ${text((x) => x.due)}::numeric[], ${text((x) => x.s.received)}::numeric[], ${text((x) => x.overpaid)}::numeric[],
                ${text((x) => x.shortfall)}::numeric[], ${settled.map((x) => x.s.paidBy!)}::text[])
         as v(session_id, token, due, received, overpaid, shortfall, paying)`.execute(trx);
  // Extension (issue 16 item 5): what each session received, transfer by transfer, as it now stands (the
  // deposits just confirmed included), read for all of them in one query.
  const payments = await receivedPayments(
    trx,
    paid.map((s) => s.row.id),
  );
  const display = displayAddress ? memoisedDisplay(displayAddress) : undefined;
  for (const s of paid) {
    const row = { ...s.row, status: 'paid' as const, received_base: s.received };
    events.push({
      merchantId: s.row.merchant_id,
      mode: s.row.mode,
      type: PAYMENT_EVENT_TYPE.completed,
      object: {
        ...paymentEventObject(row, 'completed'),
        ...sessionReceivedFields(
          { status: row.status, token: row.token, targetAmountMinor: row.target_amount_minor, receivedBase: row.received_base },
          payments.get(s.row.id) ?? [],
          (_network, token) => tokenDecimals(token),
          display,
        ),
      },
      aggregateId: s.row.id,
    });
  }
  return paid.map((s) => s.row.id);
}

/**
 * Each sender's display form computed once per step (EVM: a keccak checksum, half this step's CPU for a
 * 1,000-session block in the benchmark's profile; senders such as exchange hot wallets repeat).
 */
function memoisedDisplay(displayAddress: (canonical: string) => string): (network: string, canonical: string) => string {
  const shown = new Map<string, string>();
  return (_network, c) => {
    const known = shown.get(c);
    if (known !== undefined) return known;
    const v = displayAddress(c);
    shown.set(c, v);
    return v;
  };
}

/**
 * Expiry guard: true while money may still count for the session at `expiresAt`: a provisional deposit in a block
 * at or before expiresAt, or a chain of one of its deposit addresses whose watcher has not yet processed a block
 * timestamped after expiresAt (a transfer in such a block may be unseen yet). Sessions without deposit addresses
 * never defer. Call it inside the expiring transaction, after locking the session row.
 */
export async function hasProvisionalDepositsBefore(trx: Transaction<Database>, sessionId: string, expiresAt: Date): Promise<boolean> {
  const r = await sql<{ defer: boolean }>`
    select exists (
             select 1 from deposits
             where session_id = ${sessionId} and status = 'provisional' and block_time <= ${expiresAt}
               and unmatched_reason is distinct from 'unsupported_token')
        or exists (
             select 1 from deposit_addresses da
             left join chain_cursors c on c.chain_key = da.network || ':' || da.mode
             where da.session_id = ${sessionId} and (c.tip_time is null or c.tip_time <= ${expiresAt})) as defer`.execute(trx);
  return r.rows[0]?.defer === true;
}

export interface UnmatchedDeposit {
  id: string;
  network: string;
  mode: Mode;
  txHash: string;
  logIndex: number;
  token: string;
  tokenContract: string;
  from: string | null;
  to: string;
  amountBase: bigint;
  sessionId: string | null;
  reason: string | null;
  /** For an `unsupported_token` deposit (a look-alike), what the operator must know: UNSUPPORTED_TOKEN_NOTICE. */
  notice: string | null;
  blockTime: Date;
  confirmedAt: Date | null;
}

/** Confirmed deposits that paid nothing (late, to closed sessions, surplus after paid, look-alikes): the operator's list. */
export async function listUnmatchedDeposits(
  db: Kysely<Database>,
  opts: { mode?: Mode; network?: string; limit?: number } = {},
): Promise<UnmatchedDeposit[]> {
  let q = db.selectFrom('deposits').selectAll().where('disposition', '=', 'unmatched');
  if (opts.mode) q = q.where('mode', '=', opts.mode);
  if (opts.network) q = q.where('network', '=', opts.network);
  const rows = await q
    .orderBy('confirmed_at', 'desc')
    .limit(opts.limit ?? 100)
    .execute();
  return rows.map((r) => ({
    id: r.id,
    network: r.network,
    mode: r.mode,
    txHash: r.tx_hash,
    logIndex: r.log_index,
    token: r.token,
    tokenContract: r.token_contract,
    from: r.from_address,
    to: r.to_address,
    amountBase: r.amount_base,
    sessionId: r.session_id,
    reason: r.unmatched_reason,
    notice: r.unmatched_reason === UNSUPPORTED_TOKEN_REASON ? UNSUPPORTED_TOKEN_NOTICE : null,
    blockTime: r.block_time,
    confirmedAt: r.confirmed_at,
  }));
}
