import { z } from 'zod';
import { maskAddress, type PaymentMethodRow } from '../../ledger/subscriptions/payment-methods.js';
import type { Mode } from '../../../chains/vocabulary.js';
import { unix } from './session.js';
import { networkId, tokenSymbol, unixTime } from './schema-parts.js';

/** The PaymentMethod object serializePaymentMethod answers with (the OpenAPI document's `PaymentMethod`). */
export const paymentMethodSchema = z.strictObject({
  id: z.string(),
  object: z.literal('payment_method'),
  customer_id: z.string(),
  merchant_id: z.string(),
  type: z.string(),
  address: z.string().meta({ description: 'The payer wallet, masked (head…tail).' }),
  status: z.enum(['active', 'revoked']),
  metadata: z.strictObject({ network: networkId, token: tokenSymbol }),
  created_at: unixTime,
  updated_at: unixTime,
});

// PaymentMethod (interface.md): masked address, network and token in metadata.
export function serializePaymentMethod(
  p: PaymentMethodRow,
  display: (network: string, mode: Mode, canonical: string) => string,
): Record<string, unknown> {
  return {
    id: p.id,
    object: 'payment_method',
    customer_id: p.customer,
    merchant_id: p.merchant_id,
    type: p.type,
    address: maskAddress(display(p.network, p.mode, p.owner_address)),
    status: p.status,
    metadata: { network: p.network, token: p.token },
    created_at: unix(p.created_at),
    updated_at: unix(p.updated_at),
  };
}
