import type { ColumnType, Generated } from 'kysely';
import type { DepositTables } from './deposit-tables.js';
import type { TreasuryTables } from './treasury-tables.js';
import type { JournalTables } from './journal-tables.js';
import type { DepositSetupTables } from './deposit-setup-tables.js';
import type { ConsoleTables } from './console-tables.js';
import type { SignerTables } from './signer-tables.js';
import type { GasStationTables } from './gas-station-tables.js';
import type { WalletHistoryTables } from './wallet-history-tables.js';
import type { WebhookDeliveriesTable, WebhookDeliveryAttemptsTable } from './webhook-tables.js';
import type { RefundStatus } from '../domain/refund-state.js';
import type { SessionStatus } from '../domain/session-state.js';
import type { SubscriptionInterval } from '../domain/subscription-periods.js';

// Kysely table types for the foundation schema. int8 and numeric columns are parsed to bigint (src/db/database.ts).
import type { Mode, NetworkId, TokenSymbol } from '../../chains/vocabulary.js';

export type { Mode };
type Timestamp = ColumnType<Date, Date | string | undefined, Date | string>;
type NullableTimestamp = ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
type Json<T> = ColumnType<T, string, string>;

export interface MerchantsTable {
  id: string;
  name: string;
  webhook_url: string | null;
  webhook_secret_enc: string;
  /** null: the deployment's SESSION_LIFETIME_SECONDS (migration 2026_11_24_0200). */
  session_lifetime_seconds: ColumnType<number | null, number | null | undefined, number | null>;
  /** Shortfall accepted as paid, in basis points of the amount due (0..10000). */
  underpayment_tolerance_bps: Generated<number>;
  refund_window_days: Generated<number>;
  daily_refund_count_limit: Generated<number>;
  daily_refund_amount_limit_minor: ColumnType<bigint, bigint | number | undefined, bigint | number>;
  /** The previous webhook secret during a rotation overlap (migration 2026_11_21_0200_webhooks). */
  webhook_secret_prev_enc: ColumnType<string | null, string | null | undefined, string | null>;
  webhook_secret_prev_expires_at: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
  created_at: Timestamp;
}

export interface MerchantHdAccountsTable {
  merchant_id: string;
  mode: Mode;
  account_index: Generated<number>;
}

export interface ApiKeysTable {
  id: string;
  merchant_id: string;
  mode: Mode;
  key_prefix: string;
  key_hash: string;
  secret_enc: string;
  created_at: Timestamp;
  revoked_at: NullableTimestamp;
  last_used_at: NullableTimestamp;
}

export type { SessionStatus };

export interface LineItemRecord {
  price_data: {
    currency: string;
    unit_amount_minor: string; // bigint as decimal digits (jsonb has no bigint)
    product_data: { name: string; description?: string };
  };
  quantity: number;
}

export interface PaymentSessionsTable {
  id: string;
  merchant_id: string;
  mode: Mode;
  order_id: string;
  amount_minor: ColumnType<bigint, bigint, bigint>;
  currency: string;
  description: string | null;
  merchant_domain_id: string | null;
  line_items: ColumnType<LineItemRecord[] | null, string | null, string | null>;
  tax_minor: ColumnType<bigint | null, bigint | null | undefined, bigint | null>;
  shipping_minor: ColumnType<bigint | null, bigint | null | undefined, bigint | null>;
  success_url: string | null;
  cancel_url: string | null;
  metadata: Json<Record<string, string>>;
  target_currency: string;
  target_amount_minor: ColumnType<bigint, bigint, bigint>;
  exchange_rate: string | null;
  rate_locked_at: NullableTimestamp;
  network: NetworkId | null;
  token: TokenSymbol | null;
  hd_account: number;
  address_index: ColumnType<bigint, bigint | undefined, never>;
  deposit_address: string | null;
  status: ColumnType<SessionStatus, SessionStatus | undefined, SessionStatus>;
  received_base: ColumnType<bigint, bigint | undefined, bigint>;
  created_at: Timestamp;
  expires_at: Timestamp;
  paid_at: NullableTimestamp;
  canceled_at: NullableTimestamp;
  expired_at: NullableTimestamp;
  /** Locked quote per stablecoin (migration 2026_11_24_0300): API minor units, null = not offered. */
  quote_usdt_minor: ColumnType<bigint | null, bigint | null | undefined, bigint | null>;
  quote_usdt_rate: ColumnType<string | null, string | null | undefined, string | null>;
  quote_usdc_minor: ColumnType<bigint | null, bigint | null | undefined, bigint | null>;
  quote_usdc_rate: ColumnType<string | null, string | null | undefined, string | null>;
  /** Base units of the paid token a paid session fell short by (dust or tolerance); null until paid. */
  shortfall_base: ColumnType<bigint | null, bigint | null | undefined, bigint | null>;
}

export interface IdempotencyKeysTable {
  merchant_id: string;
  mode: Mode;
  scope: string;
  key: string;
  request_hash: string;
  response_status: number;
  response_body: string;
  created_at: Timestamp;
}

export interface OutboxEventsTable {
  seq: Generated<bigint>;
  id: string;
  merchant_id: string;
  mode: Mode;
  type: string;
  aggregate_id: string | null;
  payload: Json<unknown>;
  created_at: Timestamp;
  relayed_at: NullableTimestamp;
}

export type { RefundStatus };
type Numeric = ColumnType<bigint, bigint | string, bigint | string>;

export interface RefundsTable {
  id: string;
  merchant_id: string;
  mode: Mode;
  refund_id: string;
  session_id: string;
  order_id: string;
  amount_minor: ColumnType<bigint, bigint, bigint>;
  currency: TokenSymbol;
  reason: string | null;
  description: string | null;
  metadata: Json<Record<string, string>>;
  status: ColumnType<RefundStatus, RefundStatus | undefined, RefundStatus>;
  failure_reason: string | null;
  network: NetworkId;
  token: TokenSymbol;
  destination_address: string;
  amount_base: Numeric;
  request_fingerprint: string;
  transaction_hash: string | null;
  receipt_number: string | null;
  created_at: Timestamp;
  signed_at: NullableTimestamp;
  processed_at: NullableTimestamp;
  canceled_at: NullableTimestamp;
  /** Base units the destination received (migration 2026_11_24_0400); null until completed. */
  delivered_base: ColumnType<bigint | null, bigint | string | null | undefined, bigint | string | null>;
  /** The unmatched deposit this refund pays back (migration 2026_11_25_0100); null for a refund of the session. */
  deposit_id: ColumnType<string | null, string | null | undefined, string | null>;
}

export type PayoutAttemptState = 'signed' | 'broadcast' | 'confirmed' | 'failed' | 'replaced' | 'dropped';

export interface PayoutAttemptsTable {
  id: Generated<bigint>;
  refund_id: string;
  network: NetworkId;
  mode: Mode;
  sender: string;
  nonce: ColumnType<bigint | null, bigint | string | null, bigint | string | null>;
  tx_hash: string;
  signed: Json<Record<string, string | null>>;
  state: ColumnType<PayoutAttemptState, PayoutAttemptState | undefined, PayoutAttemptState>;
  fee_bump_percent: ColumnType<number, number | undefined, number>;
  detail: string | null;
  created_at: Timestamp;
  broadcast_at: NullableTimestamp;
  settled_at: NullableTimestamp;
}

export interface HotWalletNoncesTable {
  network: NetworkId;
  mode: Mode;
  address: string;
  next_nonce: Numeric;
  /** The chain's pending nonce last seen AHEAD of next_nonce (transactions the ledger does not know); null when not. */
  unknown_chain_nonce: ColumnType<bigint | null, bigint | string | null | undefined, bigint | string | null>;
  /** When the engine first refused to sign from this wallet for it; null when not. */
  unknown_seen_at: NullableTimestamp;
}

/** Audit of `payouts wallet-accept-nonce`: an operator accepted a wallet's chain nonce after checking the chain. */
export interface HotWalletNonceAcceptancesTable {
  id: Generated<bigint>;
  network: NetworkId;
  mode: Mode;
  address: string;
  previous_next_nonce: Numeric;
  accepted_next_nonce: Numeric;
  actor: string;
  note: string | null;
  created_at: Generated<Date>;
}

export interface ReceiptCountersTable {
  merchant_id: string;
  day: string;
  last: number;
}

// Subscriptions (migration 2026_11_21_0400_subscriptions; issue 9).
export type SubscriptionStatusValue = 'incomplete' | 'incomplete_expired' | 'trialing' | 'active' | 'past_due' | 'canceled';
export type { SubscriptionInterval };
export type SubscriptionNextAction = 'expire' | 'renew' | 'retry' | 'cancel';
/** Why a subscription waits for an operator (docs/subscriptions.md "Operator hold"). */
export type SubscriptionHoldReason = 'wrong_recipient';
export type ChargeState = 'pending' | 'signed' | 'broadcast' | 'succeeded' | 'failed';

export interface SubscriptionsTable {
  id: string;
  merchant_id: string;
  mode: Mode;
  customer: string;
  customer_email: string | null;
  customer_phone: string | null;
  customer_name: string | null;
  currency: string;
  description: string | null;
  price_id: string;
  product: string;
  unit_amount_minor: ColumnType<bigint, bigint, bigint>;
  interval: SubscriptionInterval;
  quantity: number;
  item_metadata: Json<Record<string, string>>;
  success_url: string | null;
  cancel_url: string | null;
  trial_end: NullableTimestamp;
  billing_cycle_anchor: NullableTimestamp;
  cancel_at: NullableTimestamp;
  cancel_at_period_end: Generated<boolean>;
  iterations: number | null;
  paid_periods: Generated<number>;
  period_number: Generated<number>;
  status: ColumnType<SubscriptionStatusValue, SubscriptionStatusValue | undefined, SubscriptionStatusValue>;
  payment_method_id: string | null;
  current_period_start: NullableTimestamp;
  current_period_end: NullableTimestamp;
  latest_invoice_id: string | null;
  canceled_at: NullableTimestamp;
  cancellation_reason: string | null;
  cancellation_comment: string | null;
  metadata: Json<Record<string, string>>;
  auth_network: NetworkId | null;
  auth_token: TokenSymbol | null;
  auth_owner: string | null;
  auth_allowance_base: ColumnType<bigint | null, bigint | string | null | undefined, bigint | string | null>;
  auth_requested_at: NullableTimestamp;
  next_action: SubscriptionNextAction | null;
  next_action_at: NullableTimestamp;
  /** Operator hold (migration 2026_11_29_0100_subscription_hold): why nothing is charged until an operator resolves it. */
  hold_reason: ColumnType<SubscriptionHoldReason | null, SubscriptionHoldReason | null | undefined, SubscriptionHoldReason | null>;
  hold_charge_id: ColumnType<bigint | null, bigint | null | undefined, bigint | null>;
  hold_tx_hash: string | null;
  held_at: NullableTimestamp;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface InvoicesTable {
  id: string;
  merchant_id: string;
  mode: Mode;
  subscription_id: string;
  customer: string;
  period_number: number;
  amount_due_minor: ColumnType<bigint, bigint, bigint>;
  amount_paid_minor: ColumnType<bigint, bigint | undefined, bigint>;
  currency: string;
  status: ColumnType<
    'draft' | 'open' | 'paid' | 'void' | 'uncollectible',
    'draft' | 'open' | 'paid' | 'void' | 'uncollectible' | undefined,
    'draft' | 'open' | 'paid' | 'void' | 'uncollectible'
  >;
  payment_status: ColumnType<'unpaid' | 'paid' | 'failed', 'unpaid' | 'paid' | 'failed' | undefined, 'unpaid' | 'paid' | 'failed'>;
  billing_reason: string;
  period_start: Timestamp;
  period_end: Timestamp;
  due_date: Timestamp;
  payment_id: string | null;
  paid_at: NullableTimestamp;
  attempt_count: Generated<number>;
  first_failed_at: NullableTimestamp;
  metadata: Json<Record<string, string>>;
  created_at: Timestamp;
}

export interface PaymentMethodsTable {
  id: string;
  merchant_id: string;
  mode: Mode;
  customer: string;
  type: Generated<string>;
  status: ColumnType<'active' | 'revoked', 'active' | 'revoked' | undefined, 'active' | 'revoked'>;
  network: NetworkId;
  token: TokenSymbol;
  owner_address: string;
  spender_address: string;
  allowance_base: Numeric;
  approval_tx_hash: string;
  approval_log_index: number;
  revoked_at: NullableTimestamp;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface SubscriptionChargesTable {
  id: Generated<bigint>;
  invoice_id: string;
  subscription_id: string;
  merchant_id: string;
  mode: Mode;
  network: NetworkId;
  token: TokenSymbol;
  owner_address: string;
  charger_address: string;
  destination_address: string;
  amount_base: Numeric;
  state: ColumnType<ChargeState, ChargeState | undefined, ChargeState>;
  failure_reason: string | null;
  nonce: ColumnType<bigint | null, bigint | string | null | undefined, bigint | string | null>;
  tx_hash: string | null;
  signed: ColumnType<Record<string, string | null> | null, string | null | undefined, string | null>;
  payment_id: string | null;
  created_at: Timestamp;
  signed_at: NullableTimestamp;
  settled_at: NullableTimestamp;
  /** Base units the destination received (migration 2026_11_24_0400); null until succeeded. */
  delivered_base: ColumnType<bigint | null, bigint | string | null | undefined, bigint | string | null>;
}

export interface SubscriptionChargeAttemptsTable {
  id: Generated<bigint>;
  charge_id: ColumnType<bigint, bigint | string, bigint | string>;
  nonce: ColumnType<bigint | null, bigint | string | null | undefined, bigint | string | null>;
  tx_hash: string;
  signed: ColumnType<Record<string, string | null>, string, string>;
  fee_bump_percent: ColumnType<number, number | undefined, number>;
  state: ColumnType<'live' | 'dropped', 'live' | 'dropped' | undefined, 'live' | 'dropped'>;
  dropped_reason: string | null;
  created_at: Timestamp;
}

export interface ApprovalScanCursorsTable {
  chain_key: string;
  last_block: ColumnType<bigint, bigint | string, bigint | string>;
  updated_at: Timestamp;
}

// Tables added by later migrations declare themselves here too (see each migration's header).
// Tables of later migrations are declared beside the code that owns them and joined here, so every module uses the one
// Database type (no per-module widening casts).
export interface Database
  extends DepositTables,
    TreasuryTables,
    JournalTables,
    DepositSetupTables,
    ConsoleTables,
    SignerTables,
    WalletHistoryTables,
    GasStationTables {
  webhook_deliveries: WebhookDeliveriesTable;
  webhook_delivery_attempts: WebhookDeliveryAttemptsTable;
  merchants: MerchantsTable;
  merchant_hd_accounts: MerchantHdAccountsTable;
  api_keys: ApiKeysTable;
  payment_sessions: PaymentSessionsTable;
  idempotency_keys: IdempotencyKeysTable;
  outbox_events: OutboxEventsTable;
  refunds: RefundsTable;
  payout_attempts: PayoutAttemptsTable;
  hot_wallet_nonces: HotWalletNoncesTable;
  hot_wallet_nonce_acceptances: HotWalletNonceAcceptancesTable;
  receipt_counters: ReceiptCountersTable;
  subscriptions: SubscriptionsTable;
  invoices: InvoicesTable;
  payment_methods: PaymentMethodsTable;
  subscription_charges: SubscriptionChargesTable;
  subscription_charge_attempts: SubscriptionChargeAttemptsTable;
  approval_scan_cursors: ApprovalScanCursorsTable;
}
