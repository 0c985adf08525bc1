import { invalidRequest, resourceNotFound } from '../domain/errors.js';
import { cancelSession, type SessionRow } from '../ledger/payments/sessions.js';
import type { OperationsContext } from './context.js';

// One payment session for the console: found by id (any merchant: the console checks who may see it), and canceled
// with the public API's rules and errors (POST /checkout/sessions/{id}/cancel, src/api/routes/sessions.ts).

export async function findPayment(ops: Pick<OperationsContext, 'db'>, id: string): Promise<SessionRow> {
  const s = await ops.db.selectFrom('payment_sessions').selectAll().where('id', '=', id).executeTakeFirst();
  if (!s) throw resourceNotFound('id', 'payment session');
  return s;
}

/** Cancels an open session (the ledger's cancelSession, its outbox event); the API's errors for the others. */
export async function cancelPayment(ops: Pick<OperationsContext, 'db'>, s: SessionRow): Promise<SessionRow> {
  const r = await cancelSession(ops.db, s.merchant_id, s.mode, s.id);
  switch (r.kind) {
    case 'canceled':
      return r.session;
    case 'not_found':
      throw resourceNotFound('session_id', 'payment session');
    case 'paid':
      throw invalidRequest('INVALID_SESSION_STATUS', 'A paid payment session cannot be canceled.', 'session_id');
    case 'expired':
      throw invalidRequest('session_expired', 'The payment session has already expired or been canceled.', 'session_id');
  }
}
