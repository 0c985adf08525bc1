import type { Db } from '../../db/database.js';
import { loadCharge, type ChargeRow } from './charges.js';

// What the signer role reads to justify a subscription charge (docs/signer.md): the charge, its invoice's state, and
// whether the customer's payment method (the owner's approval of the charger, for this network and token) is active.

export interface ChargeFacts {
  charge: ChargeRow;
  invoice: { status: string; paymentStatus: string } | null;
  paymentMethodActive: boolean;
}

export async function chargeFacts(db: Db, chargeId: string): Promise<ChargeFacts | undefined> {
  if (!/^\d{1,18}$/.test(chargeId)) return undefined;
  const charge = await loadCharge(db, BigInt(chargeId));
  if (!charge) return undefined;
  const invoice = await db
    .selectFrom('invoices')
    .select(['status', 'payment_status'])
    .where('id', '=', charge.invoice_id)
    .executeTakeFirst();
  const method = await db
    .selectFrom('payment_methods')
    .select('id')
    .where('merchant_id', '=', charge.merchant_id)
    .where('mode', '=', charge.mode)
    .where('network', '=', charge.network)
    .where('token', '=', charge.token)
    .where('owner_address', '=', charge.owner_address)
    .where('spender_address', '=', charge.charger_address)
    .where('status', '=', 'active')
    .executeTakeFirst();
  return {
    charge,
    invoice: invoice ? { status: invoice.status, paymentStatus: invoice.payment_status } : null,
    paymentMethodActive: method !== undefined,
  };
}
