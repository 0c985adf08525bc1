import { sql, type Kysely, type Transaction } from 'kysely';
import type { Database } from '../db/schema.js';
import type { Mode } from '../domain/vocabulary.js';
import { newId } from '../domain/ids.js';
import { formatBaseUnits, stablecoinMinorToBase } from '../domain/money.js';
import { SESSION_TRANSITIONS } from '../domain/session-state.js';
import { insertOutboxEvents, type OutboxEventInput } from './outbox.js';
import { PAYMENT_EVENT_TYPE, paymentEventObject } from './payment-events.js';
import type { UnmatchedReason } from '../db/deposit-tables.js';
import type { ChainRef } from './deposit-schema.js';
import { settlesAsPaid } from './settlement-rule.js';
import { receivedPayments } from './session-payments.js';
import { sessionReceivedFields } from '../domain/events/session-received.js';
import {
  EXTERNAL_ACCOUNT,
  addressAccount,
  journalAsset,
  recordMovementsAgain,
  reverseObservedAbove,
  transferLegs,
  withDepositEntries,
  type InsertedDeposit,
} from './journal.js';

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

export interface ObservedDeposit {
  txHash: string;
  logIndex: number;
  blockHeight: bigint;
  blockHash: string;
  blockTime: Date;
  token: string;
  tokenContract: string;
  from: string | null;
  to: string;
  amount: bigint;
}

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
  const col = <T>(f: (d: ObservedDeposit) => T) => items.map(f);
  const insert = sql<RecordedDeposit>`
    insert into deposits (id, network, mode, tx_hash, log_index, block_number, block_hash, block_time, token,
                          token_contract, from_address, to_address, amount_base, session_id, status)
    select v.id, ${chain.network}, ${chain.mode}, v.tx_hash, v.log_index, v.block_number, v.block_hash, v.block_time,
           v.token, v.token_contract, v.from_address, v.to_address, v.amount_base, da.session_id, 'provisional'
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
              (select p.merchant_id from payment_sessions p where p.id = deposits.session_id) as merchant_id`;
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
  const t = trx;
  const deposits = await t
    .selectFrom('deposits')
    .select(['id', 'session_id', 'token', 'amount_base', 'block_time', 'tx_hash'])
    .where('network', '=', chain.network)
    .where('mode', '=', chain.mode)
    .where('status', '=', 'provisional')
    .where('block_number', '<=', finalHeight)
    .orderBy('block_number')
    .orderBy('log_index')
    .forUpdate()
    .execute();
  if (deposits.length === 0) return { confirmed: 0, credited: 0, paidSessionIds: [], decisions: [] };

  const sessionIds = [...new Set(deposits.flatMap((d) => (d.session_id ? [d.session_id] : [])))];
  const sessions = sessionIds.length
    ? await trx
        .selectFrom('payment_sessions')
        .selectAll()
        .where(sql<boolean>`id = any(${sessionIds}::text[])`)
        .orderBy('id')
        .forUpdate()
        .execute()
    : [];
  const merchantIds = [...new Set(sessions.map((x) => x.merchant_id))];
  const toleranceBps = new Map(
    merchantIds.length
      ? (await trx.selectFrom('merchants').select(['id', 'underpayment_tolerance_bps']).where('id', 'in', merchantIds).execute()).map(
          (m) => [m.id, m.underpayment_tolerance_bps],
        )
      : [],
  );
  const failedTransfers: Array<{ session: (typeof sessions)[number]; token: string; amount: bigint }> = [];
  const byId = new Map(sessions.map((s) => [s.id, { row: s, received: s.received_base, paidBy: null as string | null, credited: false }]));
  const payable = new Set<string>(SESSION_TRANSITIONS.pay);

  const decisions: Array<{ id: string; disposition: 'credited' | 'unmatched'; reason: UnmatchedReason | null }> = [];
  for (const d of deposits) {
    const s = d.session_id ? byId.get(d.session_id) : undefined;
    const unmatched = (reason: UnmatchedReason) => decisions.push({ id: d.id, disposition: 'unmatched', reason });
    if (!s) {
      unmatched('no_session');
      continue;
    }
    const row = s.row;
    if (row.network !== chain.network || row.token !== d.token) {
      unmatched('not_selected');
      // A zero-value transfer moves no money (address-poisoning spam): no event.
      if (row.status === 'open' && s.paidBy === null && d.amount_base > 0n && d.block_time.getTime() <= row.expires_at.getTime()) {
        failedTransfers.push({ session: row, token: d.token, amount: d.amount_base });
      }
    } else if (d.block_time.getTime() > row.expires_at.getTime()) unmatched('late');
    else if (s.paidBy !== null || row.status === 'paid') unmatched('session_paid');
    // Payable: open, or expired for a block at or before expires_at (a later block is `late` above); so only canceled.
    else if (!payable.has(row.status)) unmatched('session_canceled');
    else {
      s.received += d.amount_base;
      s.credited = true;
      decisions.push({ id: d.id, disposition: 'credited', reason: null });
      const due = stablecoinMinorToBase(row.target_amount_minor, tokenDecimals(d.token));
      if (settlesAsPaid(due, s.received, tokenDecimals(d.token), toleranceBps.get(row.merchant_id) ?? 0)) s.paidBy = d.id;
    }
  }

  await sql`
    update deposits set status = 'confirmed', confirmed_at = now(), disposition = v.disposition, unmatched_reason = v.reason
    from unnest(${decisions.map((x) => x.id)}::text[], ${decisions.map((x) => x.disposition)}::text[],
                ${decisions.map((x) => x.reason)}::text[]) as v(id, disposition, reason)
    where deposits.id = v.id and deposits.status = 'provisional'`.execute(trx);

  // Written before any payment.completed of this batch: such a transfer is only recorded while its session is unpaid.
  const events: OutboxEventInput[] = failedTransfers.map((f) => ({
    merchantId: f.session.merchant_id,
    mode: f.session.mode,
    type: PAYMENT_EVENT_TYPE.failed,
    object: paymentEventObject(f.session, 'failed', { text: formatBaseUnits(f.amount, tokenDecimals(f.token)), currency: f.token }),
    aggregateId: f.session.id,
  }));

  const shortfallOf = (row: (typeof sessions)[number], received: bigint): bigint => {
    const due = stablecoinMinorToBase(row.target_amount_minor, tokenDecimals(row.token!));
    return due > received ? due - received : 0n;
  };

  const touched = [...byId.values()].filter((s) => s.credited);
  const paidSessionIds: string[] = [];
  if (touched.length) {
    const r = await sql<{ id: string }>`
      update payment_sessions p
      set received_base = v.received,
          status = case when v.paid then 'paid' else p.status end,
          paid_at = case when v.paid then now() else p.paid_at end,
          shortfall_base = case when v.paid then v.shortfall else p.shortfall_base end
      from unnest(${touched.map((s) => s.row.id)}::text[], ${touched.map((s) => s.received.toString())}::numeric[],
                  ${touched.map((s) => s.paidBy !== null)}::bool[], ${touched.map((s) => shortfallOf(s.row, s.received).toString())}::numeric[])
           as v(id, received, paid, shortfall)
      where p.id = v.id and p.status in (${sql.join([...payable])})
      returning p.id`.execute(trx);
    if (r.rows.length !== touched.length) throw new Error('session state changed under a deposit credit (conflict)');

    // Every session paid by this batch: its settlement row and payment.completed, in one statement each (not one
    // round trip per session: the confirming step of a busy block credits thousands; docs/performance.md).
    const paid = touched.filter((s) => s.paidBy !== null);
    if (paid.length) {
      const settled = paid.map((s) => {
        const due = stablecoinMinorToBase(s.row.target_amount_minor, tokenDecimals(s.row.token!));
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
      // Each sender's display form computed once per step (EVM: a keccak checksum, half this step's CPU for a
      // 1,000-session block in the benchmark's profile; senders such as exchange hot wallets repeat).
      const shown = new Map<string, string>();
      const display = displayAddress
        ? (_network: string, c: string) => {
            const known = shown.get(c);
            if (known !== undefined) return known;
            const v = displayAddress(c);
            shown.set(c, v);
            return v;
          }
        : undefined;
      const payments = await receivedPayments(
        trx,
        paid.map((s) => s.row.id),
      );
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
        paidSessionIds.push(s.row.id);
      }
    }
  }
  await insertOutboxEvents(trx, events);
  const byDeposit = new Map(deposits.map((d) => [d.id, d]));
  const paidBy = new Set([...byId.values()].flatMap((s) => (s.paidBy ? [s.paidBy] : [])));
  return {
    confirmed: decisions.length,
    credited: decisions.filter((x) => x.disposition === 'credited').length,
    paidSessionIds,
    decisions: decisions.map((x) => {
      const d = byDeposit.get(x.id)!;
      return {
        depositId: x.id,
        sessionId: d.session_id,
        txHash: d.tx_hash,
        disposition: x.disposition,
        reason: x.reason,
        paidSession: paidBy.has(x.id),
      };
    }),
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
             where session_id = ${sessionId} and status = 'provisional' and block_time <= ${expiresAt})
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
  from: string | null;
  to: string;
  amountBase: bigint;
  sessionId: string | null;
  reason: string | null;
  blockTime: Date;
  confirmedAt: Date | null;
}

/** Confirmed deposits that paid nothing (late, to closed sessions, surplus after paid): the operator's list. */
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
    from: r.from_address,
    to: r.to_address,
    amountBase: r.amount_base,
    sessionId: r.session_id,
    reason: r.unmatched_reason,
    blockTime: r.block_time,
    confirmedAt: r.confirmed_at,
  }));
}
