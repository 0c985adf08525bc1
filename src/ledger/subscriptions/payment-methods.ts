import type { Selectable } from 'kysely';
import type { Db } from '../../db/database.js';
import type { Mode, PaymentMethodsTable } from '../../db/schema.js';

// Payment methods: a customer's observed wallet authorization (an allowance to the merchant's charger).
// Created by the ledger's authorization transition (subscriptions-lifecycle.ts), read here.

export type PaymentMethodRow = Selectable<PaymentMethodsTable>;

export async function findPaymentMethod(db: Db, merchantId: string, mode: Mode, id: string): Promise<PaymentMethodRow | undefined> {
  return db
    .selectFrom('payment_methods')
    .selectAll()
    .where('id', '=', id)
    .where('merchant_id', '=', merchantId)
    .where('mode', '=', mode)
    .executeTakeFirst();
}

/** 0x1234…abcd: enough to recognise a wallet, not to copy it. */
export function maskAddress(display: string): string {
  if (display.length <= 12) return display;
  const head = display.startsWith('0x') ? 6 : 4;
  return `${display.slice(0, head)}…${display.slice(-4)}`;
}
