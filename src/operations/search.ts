import type { OperationsContext } from './context.js';

// The console's one search box (GET /search?q=): exact lookups only, each on an index (migration
// 2026_11_29_0400_console_indexes and earlier): a session by id, order id or deposit address; a refund by id,
// refund_id or transaction hash; a deposit by id or transaction hash. A merchant user sees its own merchant's hits.

export interface SearchHit {
  kind: 'session' | 'refund' | 'deposit';
  id: string;
  session_id: string | null;
  label: string;
}

const MAX = 20;

export async function search(ops: Pick<OperationsContext, 'db'>, q: string, merchantId: string | undefined): Promise<SearchHit[]> {
  const { db } = ops;
  let sessions = db
    .selectFrom('payment_sessions')
    .select(['id', 'order_id', 'status', 'merchant_id', 'deposit_address'])
    .where((eb) => eb.or([eb('id', '=', q), eb('order_id', '=', q), eb('deposit_address', '=', q)]));
  let refunds = db
    .selectFrom('refunds')
    .select(['id', 'refund_id', 'status', 'session_id', 'transaction_hash'])
    .where((eb) => eb.or([eb('id', '=', q), eb('refund_id', '=', q), eb('transaction_hash', '=', q)]));
  let deposits = db
    .selectFrom('deposits as d')
    .leftJoin('payment_sessions as s', 's.id', 'd.session_id')
    .select(['d.id', 'd.session_id', 'd.network', 'd.token', 'd.tx_hash', 'd.disposition'])
    .where((eb) => eb.or([eb('d.id', '=', q), eb('d.tx_hash', '=', q)]));
  if (merchantId !== undefined) {
    sessions = sessions.where('merchant_id', '=', merchantId);
    refunds = refunds.where('merchant_id', '=', merchantId);
    deposits = deposits.where('s.merchant_id', '=', merchantId);
  }
  const [s, r, d] = await Promise.all([sessions.limit(MAX).execute(), refunds.limit(MAX).execute(), deposits.limit(MAX).execute()]);
  return [
    ...s.map(
      (x): SearchHit => ({
        kind: 'session',
        id: x.id,
        session_id: x.id,
        label: `${x.id} · order ${x.order_id} · ${x.status}${x.deposit_address === q ? ` · pays to ${q}` : ''}`,
      }),
    ),
    ...r.map(
      (x): SearchHit => ({
        kind: 'refund',
        id: x.id,
        session_id: x.session_id,
        label: `refund ${x.refund_id} · ${x.status}${x.transaction_hash === q ? ' · by transaction hash' : ''}`,
      }),
    ),
    ...d.map(
      (x): SearchHit => ({
        kind: 'deposit',
        id: x.id,
        session_id: x.session_id,
        label: `deposit ${x.token} on ${x.network} · ${x.disposition ?? 'not final'} · ${x.tx_hash}`,
      }),
    ),
  ];
}
