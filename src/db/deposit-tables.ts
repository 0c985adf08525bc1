import type { ColumnType, Generated } from 'kysely';
import type { UnmatchedReason } from '../domain/unmatched-reasons.js';

// Kysely types of the tables created by migration 2026_11_21_0100_deposits; src/db/schema.ts's Database includes them.

type Big = ColumnType<bigint, bigint | string, bigint | string>;
type Ts = ColumnType<Date, Date | string | undefined, Date | string>;
type NullableTs = ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;

export type DepositStatus = 'provisional' | 'confirmed' | 'orphaned';
export type DepositDisposition = 'credited' | 'unmatched';
export type { UnmatchedReason };

export interface DepositAddressesTable {
  id: Generated<bigint>;
  network: string;
  mode: 'test' | 'live';
  address: string;
  session_id: string;
  created_at: Ts;
}

export interface DepositsTable {
  id: string;
  network: string;
  mode: 'test' | 'live';
  tx_hash: string;
  log_index: number;
  block_number: Big;
  block_hash: string;
  block_time: Ts;
  token: string;
  token_contract: string;
  from_address: string | null;
  to_address: string;
  amount_base: Big;
  session_id: string | null;
  /** The session's merchant, set by a trigger when the row is inserted (migration 2026_12_01_0200); null without a session. */
  merchant_id: Generated<string | null>;
  status: DepositStatus;
  disposition: DepositDisposition | null;
  unmatched_reason: UnmatchedReason | null;
  observed_at: Ts;
  confirmed_at: NullableTs;
  orphaned_at: NullableTs;
}

export interface ChainCursorsTable {
  chain_key: string;
  cursor: ColumnType<Record<string, unknown>, string, string>;
  tip_height: Big;
  tip_time: Ts;
  final_height: Big;
  version: ColumnType<bigint, bigint | string | undefined, bigint | string>;
  updated_at: Ts;
}

export interface SessionSettlementsTable {
  session_id: string;
  network: string;
  token: string;
  due_base: Big;
  received_base: Big;
  overpaid_base: Big;
  /** Accepted shortfall (sub-unit dust or the merchant's tolerance), base units; 0 when paid in full. */
  shortfall_base: ColumnType<bigint, bigint | string | undefined, bigint | string>;
  paying_deposit_id: string;
  paid_at: Ts;
}

export type DepositTables = {
  deposit_addresses: DepositAddressesTable;
  deposits: DepositsTable;
  chain_cursors: ChainCursorsTable;
  session_settlements: SessionSettlementsTable;
};
