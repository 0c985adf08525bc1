import { sql, type Kysely, type Transaction } from 'kysely';
import type { Database } from '../db/schema.js';
import { sessionReceivedFields, type ReceivedPayment } from '../domain/events/session-received.js';
import type { SessionRow } from './payment-events.js';

/**
 * The final deposits to each of these sessions' addresses, in chain order (issue 16 item 5): credited ones and
 * unmatched ones alike. Provisional and orphaned transfers are not money yet and are left out. One query.
 */
export async function receivedPayments(
  db: Kysely<Database> | Transaction<Database>,
  sessionIds: readonly string[],
): Promise<Map<string, ReceivedPayment[]>> {
  const out = new Map<string, ReceivedPayment[]>(sessionIds.map((id) => [id, []]));
  if (sessionIds.length === 0) return out;
  const rows = await db
    .selectFrom('deposits')
    .select([
      'id',
      'session_id',
      'network',
      'token',
      'tx_hash',
      'amount_base',
      'from_address',
      'confirmed_at',
      'disposition',
      'unmatched_reason',
    ])
    .where(sql<boolean>`session_id = any(${[...new Set(sessionIds)]}::text[])`) // one parameter, however many sessions
    .where('status', '=', 'confirmed')
    .orderBy('block_number')
    .orderBy('log_index')
    .execute();
  for (const r of rows) {
    out.get(r.session_id!)?.push({
      id: r.id,
      network: r.network,
      token: r.token,
      txHash: r.tx_hash,
      amountBase: r.amount_base,
      from: r.from_address,
      confirmedAt: r.confirmed_at,
      disposition: r.disposition ?? 'unmatched',
      unmatchedReason: r.unmatched_reason,
    });
  }
  return out;
}

/**
 * The extension fields of payment.completed / payment.expired for one session as it now stands (inside the
 * transaction that writes the event, so the deposits just confirmed are included).
 */
export async function receivedEventFields(
  trx: Transaction<Database>,
  s: Pick<SessionRow, 'id' | 'status' | 'token' | 'target_amount_minor' | 'received_base'>,
  decimals: (network: string, token: string) => number | undefined,
  display?: (network: string, canonical: string) => string,
): Promise<Record<string, unknown>> {
  const payments = (await receivedPayments(trx, [s.id])).get(s.id) ?? [];
  return sessionReceivedFields(
    { status: s.status, token: s.token, targetAmountMinor: s.target_amount_minor, receivedBase: s.received_base },
    payments,
    decimals,
    display,
  );
}
