import type { ColumnType, Generated } from 'kysely';

// Kysely table types for the foundation schema. int8 and numeric columns are parsed to bigint (src/db/database.ts).
export type Mode = 'test' | 'live';
type Timestamp = ColumnType<Date, Date | string | undefined, Date | string>;
type NullableTimestamp = ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
type Json<T> = ColumnType<T, string, string>;

export interface MerchantsTable {
  id: string;
  name: string;
  webhook_url: string | null;
  webhook_secret_enc: string;
  session_lifetime_seconds: Generated<number>;
  refund_window_days: Generated<number>;
  daily_refund_count_limit: Generated<number>;
  daily_refund_amount_limit_minor: ColumnType<bigint, bigint | number | undefined, bigint | number>;
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

export type SessionStatus = 'open' | 'paid' | 'expired' | 'canceled';

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
  network: string | null;
  token: string | null;
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

export type RefundStatus = 'pending' | 'processing' | 'completed' | 'failed' | 'canceled';
type Numeric = ColumnType<bigint, bigint | string, bigint | string>;

export interface RefundsTable {
  id: string;
  merchant_id: string;
  mode: Mode;
  refund_id: string;
  session_id: string;
  order_id: string;
  amount_minor: ColumnType<bigint, bigint, bigint>;
  currency: string;
  reason: string | null;
  description: string | null;
  metadata: Json<Record<string, string>>;
  status: ColumnType<RefundStatus, RefundStatus | undefined, RefundStatus>;
  failure_reason: string | null;
  network: string;
  token: string;
  destination_address: string;
  amount_base: Numeric;
  request_fingerprint: string;
  transaction_hash: string | null;
  receipt_number: string | null;
  created_at: Timestamp;
  signed_at: NullableTimestamp;
  processed_at: NullableTimestamp;
  canceled_at: NullableTimestamp;
}

export type PayoutAttemptState = 'signed' | 'broadcast' | 'confirmed' | 'failed' | 'replaced' | 'dropped';

export interface PayoutAttemptsTable {
  id: Generated<bigint>;
  refund_id: string;
  network: string;
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
  network: string;
  mode: Mode;
  address: string;
  next_nonce: Numeric;
}

export interface ReceiptCountersTable {
  merchant_id: string;
  day: string;
  last: number;
}

// Tables added by later migrations declare themselves here too (see each migration's header).
export interface Database {
  merchants: MerchantsTable;
  merchant_hd_accounts: MerchantHdAccountsTable;
  api_keys: ApiKeysTable;
  payment_sessions: PaymentSessionsTable;
  idempotency_keys: IdempotencyKeysTable;
  outbox_events: OutboxEventsTable;
  refunds: RefundsTable;
  payout_attempts: PayoutAttemptsTable;
  hot_wallet_nonces: HotWalletNoncesTable;
  receipt_counters: ReceiptCountersTable;
}
