import { currencyExponent } from '../domain/currency.js';
import type { TokenDecimals } from '../domain/chain-lookup.js';
import { formatBaseUnits, formatMinor } from '../domain/money.js';
import type { SessionRow } from '../ledger/payments/sessions.js';

// A payment session as a row of the console's payments list (src/console/contract/payments.ts PaymentRow).

export interface PaymentRowView {
  id: string;
  merchant_id: string;
  mode: 'test' | 'live';
  order_id: string;
  status: SessionRow['status'];
  amount: string;
  currency: string;
  network: string | null;
  token: string | null;
  deposit_address: string | null;
  received: string | null;
  created_at: string;
  paid_at: string | null;
  expires_at: string;
}

export const iso = (d: Date | null): string | null => (d ? d.toISOString() : null);

export function paymentRowView(s: SessionRow, tokenDecimals: TokenDecimals): PaymentRowView {
  const decimals = s.network && s.token ? tokenDecimals(s.network, s.mode, s.token) : undefined;
  return {
    id: s.id,
    merchant_id: s.merchant_id,
    mode: s.mode,
    order_id: s.order_id,
    status: s.status,
    amount: formatMinor(s.amount_minor, currencyExponent(s.currency) ?? 2),
    currency: s.currency.toUpperCase(),
    network: s.network,
    token: s.token,
    deposit_address: s.deposit_address,
    received: decimals === undefined ? null : formatBaseUnits(s.received_base, decimals),
    created_at: s.created_at.toISOString(),
    paid_at: iso(s.paid_at),
    expires_at: s.expires_at.toISOString(),
  };
}
