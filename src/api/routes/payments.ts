import type { FastifyInstance } from 'fastify';
import type { Db } from '../../db/database.js';
import { resourceNotFound } from '../../domain/errors.js';
import { hasIdShape } from '../../domain/ids.js';
import { findSession } from '../../ledger/payments/sessions.js';
import { serializePayment } from '../serializers/payment.js';

// GET /payment/{payment_id}: a subscription payment (pay_), the payment-session record behind one invoice.
export function registerPaymentRoutes(app: FastifyInstance, deps: { db: Db }): void {
  app.get('/payment/:payment_id', async (req) => {
    const auth = req.auth!;
    const id = (req.params as { payment_id?: string }).payment_id ?? '';
    if (!hasIdShape(id, 'pay')) throw resourceNotFound('payment_id', 'payment');
    const p = await findSession(deps.db, auth.merchantId, auth.mode, id);
    if (!p) throw resourceNotFound('payment_id', 'payment');
    const charge = await deps.db
      .selectFrom('subscription_charges')
      .select(['subscription_id', 'invoice_id', 'tx_hash'])
      .where('payment_id', '=', id)
      .executeTakeFirst();
    if (!charge) throw resourceNotFound('payment_id', 'payment');
    return serializePayment(p, { subscriptionId: charge.subscription_id, invoiceId: charge.invoice_id, transactionHash: charge.tx_hash });
  });
}
