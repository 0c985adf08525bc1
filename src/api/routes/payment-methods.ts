import type { FastifyInstance } from 'fastify';
import type { Db } from '../../db/database.js';
import type { Mode } from '../../../chains/vocabulary.js';
import { resourceNotFound } from '../../domain/errors.js';
import { hasIdShape } from '../../domain/ids.js';
import { findPaymentMethod } from '../../ledger/subscriptions/payment-methods.js';
import { serializePaymentMethod } from '../serializers/payment-method.js';

export function registerPaymentMethodRoutes(
  app: FastifyInstance,
  deps: { db: Db; displayAddress?: (network: string, mode: Mode, canonical: string) => string },
): void {
  app.get('/payment_method/:payment_method_id', async (req) => {
    const auth = req.auth!;
    const id = (req.params as { payment_method_id?: string }).payment_method_id ?? '';
    const pm = hasIdShape(id, 'pm') ? await findPaymentMethod(deps.db, auth.merchantId, auth.mode, id) : undefined;
    if (!pm) throw resourceNotFound('payment_method_id', 'payment method');
    return serializePaymentMethod(pm, deps.displayAddress ?? ((_n, _m, c) => c));
  });
}
