import type { ColumnType, Generated } from 'kysely';
import type { Mode, NetworkId, TokenSymbol } from '../../chains/vocabulary.js';

// Kysely types of the tables created by migration 2026_11_25_0100_treasury; src/db/schema.ts's Database includes them.

type Big = ColumnType<bigint, bigint | string, bigint | string>;
type NullableBig = ColumnType<bigint | null, bigint | string | null | undefined, bigint | string | null>;
type Ts = ColumnType<Date, Date | string | undefined, Date | string>;
type NullableTs = ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
type Json<T> = ColumnType<T, string, string>;

export type SweepStatus = 'running' | 'completed' | 'partial' | 'failed';
export type SweepSourceState = 'planned' | 'swept' | 'failed';
export type SweepStepStatus = 'pending' | 'processing' | 'succeeded' | 'skipped' | 'failed';
export type SweepAttemptState = 'signed' | 'broadcast' | 'confirmed' | 'failed' | 'replaced' | 'dropped';

export interface TreasuryDestinationsTable {
  merchant_id: string;
  network: NetworkId;
  mode: Mode;
  treasury_address: string | null;
  hot_float_minor: ColumnType<bigint, bigint | number | undefined, bigint | number>;
  updated_by: string;
  updated_at: Ts;
}

export interface TreasuryDestinationChangesTable {
  id: Generated<bigint>;
  merchant_id: string;
  network: NetworkId;
  mode: Mode;
  actor: string;
  old_treasury_address: string | null;
  new_treasury_address: string | null;
  old_hot_float_minor: ColumnType<bigint | null, bigint | number | null, bigint | number | null>;
  new_hot_float_minor: ColumnType<bigint, bigint | number, bigint | number>;
  changed_at: Ts;
}

export interface SweepPoliciesTable {
  network: NetworkId;
  mode: Mode;
  token: TokenSymbol;
  min_amount_base: Big;
  max_fee_bps: number;
  updated_by: string;
  updated_at: Ts;
}

export interface SweepsTable {
  id: string;
  merchant_id: string;
  network: NetworkId;
  mode: Mode;
  token: TokenSymbol;
  method: string;
  destination_kind: 'hot_wallet' | 'treasury';
  destination: string;
  status: ColumnType<SweepStatus, SweepStatus | undefined, SweepStatus>;
  request: Json<Record<string, unknown>>;
  planned_base: Big;
  swept_base: ColumnType<bigint, bigint | string | undefined, bigint | string>;
  estimated_fee: Big;
  actual_fee: ColumnType<bigint, bigint | string | undefined, bigint | string>;
  fee_share_bps: number | null;
  failure_reason: string | null;
  created_at: Ts;
  finished_at: NullableTs;
}

export interface SweepSourcesTable {
  sweep_id: string;
  network: NetworkId;
  mode: Mode;
  token: TokenSymbol;
  address: string;
  /** The deposit key's HD position (chains' KeyPath). */
  key: Json<{ curve: string; path: string }>;
  planned_base: Big;
  swept_base: NullableBig;
  state: ColumnType<SweepSourceState, SweepSourceState | undefined, SweepSourceState>;
  tx_hash: string | null;
  swept_at: NullableTs;
}

export interface SweepStepsTable {
  id: string;
  sweep_id: string;
  seq: number;
  group_no: number;
  purpose: string;
  from_address: string;
  step: Json<Record<string, unknown>>;
  status: ColumnType<SweepStepStatus, SweepStepStatus | undefined, SweepStepStatus>;
  tx_hash: string | null;
  estimated_fee: Big;
  fee: NullableBig;
  native_moved: NullableBig;
  /** Solana: lamports locked as rent in an account the step created (2026_11_25_0300_sweep_rent). */
  rent_paid: NullableBig;
  failure_reason: string | null;
  created_at: Ts;
  signed_at: NullableTs;
  settled_at: NullableTs;
}

export interface SweepStepAttemptsTable {
  id: Generated<bigint>;
  step_id: string;
  network: NetworkId;
  mode: Mode;
  sender: string;
  nonce: ColumnType<bigint | null, bigint | string | null, bigint | string | null>;
  tx_hash: string;
  signed: Json<Record<string, string | null>>;
  state: ColumnType<SweepAttemptState, SweepAttemptState | undefined, SweepAttemptState>;
  fee_bump_percent: ColumnType<number, number | undefined, number>;
  detail: string | null;
  created_at: Ts;
  broadcast_at: NullableTs;
  settled_at: NullableTs;
}

export type TreasuryTables = {
  treasury_destinations: TreasuryDestinationsTable;
  treasury_destination_changes: TreasuryDestinationChangesTable;
  sweep_policies: SweepPoliciesTable;
  sweeps: SweepsTable;
  sweep_sources: SweepSourcesTable;
  sweep_steps: SweepStepsTable;
  sweep_step_attempts: SweepStepAttemptsTable;
};
