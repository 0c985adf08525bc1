import type { Migration } from 'kysely';
import * as foundation from './2026_11_21_0000_foundation.js';

// Forward-only, dated migrations in code. Add one line per migration; names sort by date.
export const migrations: Record<string, Migration> = {
  '2026_11_21_0000_foundation': foundation,
  '2026_11_21_0100_deposits': await import('./2026_11_21_0100_deposits.js'),
  '2026_11_21_0200_webhooks': await import('./2026_11_21_0200_webhooks.js'),
  '2026_11_21_0300_refunds': await import('./2026_11_21_0300_refunds.js'),
  '2026_11_21_0400_subscriptions': await import('./2026_11_21_0400_subscriptions.js'),
  '2026_11_22_0100_charge_attempts': await import('./2026_11_22_0100_charge_attempts.js'),
  '2026_11_22_0200_reauthorization': await import('./2026_11_22_0200_reauthorization.js'),
  '2026_11_24_0100_hardening_indexes': await import('./2026_11_24_0100_hardening_indexes.js'),
  '2026_11_24_0200_merchant_session_lifetime': await import('./2026_11_24_0200_merchant_session_lifetime.js'),
  '2026_11_24_0300_underpayment_tolerance': await import('./2026_11_24_0300_underpayment_tolerance.js'),
  '2026_11_24_0400_delivered_amounts': await import('./2026_11_24_0400_delivered_amounts.js'),
  '2026_11_24_0550_wallet_nonce_guard': await import('./2026_11_24_0550_wallet_nonce_guard.js'),
  '2026_11_25_0100_refund_sources': await import('./2026_11_25_0100_refund_sources.js'),
  '2026_11_25_0100_treasury': await import('./2026_11_25_0100_treasury.js'),
  '2026_11_25_0200_journal': await import('./2026_11_25_0200_journal.js'),
  '2026_11_25_0300_sweep_rent': await import('./2026_11_25_0300_sweep_rent.js'),
  '2026_11_26_0100_deposit_setups': await import('./2026_11_26_0100_deposit_setups.js'),
  '2026_11_26_0110_native_reconcile': await import('./2026_11_26_0110_native_reconcile.js'),
  '2026_11_27_0100_journal_write_cost': await import('./2026_11_27_0100_journal_write_cost.js'),
  '2026_11_28_0100_journal_index_cost': await import('./2026_11_28_0100_journal_index_cost.js'),
  '2026_11_29_0100_subscription_hold': await import('./2026_11_29_0100_subscription_hold.js'),
  '2026_11_29_0200_reconcile_slots': await import('./2026_11_29_0200_reconcile_slots.js'),
  '2026_11_29_0300_console': await import('./2026_11_29_0300_console.js'),
  '2026_11_29_0400_console_indexes': await import('./2026_11_29_0400_console_indexes.js'),
  '2026_11_29_0410_console_merchant_lists': await import('./2026_11_29_0410_console_merchant_lists.js'),
  '2026_11_29_0500_console_year_indexes': await import('./2026_11_29_0500_console_year_indexes.js'),
  '2026_11_29_0510_overview_daily': await import('./2026_11_29_0510_overview_daily.js'),
  '2026_11_29_0600_signer': await import('./2026_11_29_0600_signer.js'),
};
