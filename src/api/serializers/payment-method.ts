import { maskAddress, type PaymentMethodRow } from '../../ledger/payment-methods.js';
import type { Mode } from '../../domain/vocabulary.js';
import { unix } from './session.js';

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
