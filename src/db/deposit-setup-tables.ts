import type { ColumnType, Generated } from 'kysely';
import type { Mode, NetworkId } from '../../chains/vocabulary.js';

// Kysely types of the tables created by migration 2026_11_26_0100_deposit_setups; src/db/schema.ts's Database includes them.

type NullableBig = ColumnType<bigint | null, bigint | string | null | undefined, bigint | string | null>;
type Ts = ColumnType<Date, Date | string | undefined, Date | string>;
type NullableTs = ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
type Json<T> = ColumnType<T, string, string>;

export type DepositSetupStatus = 'processing' | 'succeeded' | 'skipped' | 'failed';
export type DepositSetupAttemptState = 'signed' | 'broadcast' | 'confirmed' | 'failed' | 'replaced' | 'dropped';

export interface DepositSetupsTable {
  id: Generated<bigint>;
  session_id: string;
  merchant_id: string;
  network: NetworkId;
  mode: Mode;
  token: string;
  deposit_address: string;
  status: ColumnType<DepositSetupStatus, DepositSetupStatus | undefined, DepositSetupStatus>;
  tx_hash: string | null;
  fee: NullableBig;
  rent_paid: NullableBig;
  failure_reason: string | null;
  created_at: Ts;
  settled_at: NullableTs;
}

export interface DepositSetupAttemptsTable {
  id: Generated<bigint>;
  setup_id: ColumnType<bigint, bigint | string, bigint | string>;
  network: NetworkId;
  mode: Mode;
  sender: string;
  nonce: NullableBig;
  tx_hash: string;
  signed: Json<Record<string, string | null>>;
  state: ColumnType<DepositSetupAttemptState, DepositSetupAttemptState | undefined, DepositSetupAttemptState>;
  fee_bump_percent: ColumnType<number, number | undefined, number>;
  detail: string | null;
  created_at: Ts;
  settled_at: NullableTs;
}

export type DepositSetupTables = {
  deposit_setups: DepositSetupsTable;
  deposit_setup_attempts: DepositSetupAttemptsTable;
};
