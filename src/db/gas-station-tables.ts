import type { ColumnType, Generated } from 'kysely';
import type { Mode, NetworkId } from '../../chains/vocabulary.js';

// Kysely types of the tables created by migration 2026_11_30_0200_gas_station_rotation; src/db/schema.ts's Database
// includes them.

type NullableBig = ColumnType<bigint | null, bigint | string | null | undefined, bigint | string | null>;
type Ts = ColumnType<Date, Date | string | undefined, Date | string>;
type NullableTs = ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
type Json<T> = ColumnType<T, string, string>;

export type GasStationDrainStatus = 'processing' | 'succeeded' | 'skipped' | 'failed';
export type GasStationDrainAttemptState = 'signed' | 'broadcast' | 'confirmed' | 'failed' | 'replaced' | 'dropped';

export interface GasStationGenerationsTable {
  network: NetworkId;
  mode: Mode;
  generation: number;
  slot: number;
  address: string;
  previous_address: string;
  actor: string;
  note: string | null;
  created_at: Ts;
}

export interface GasStationDrainsTable {
  id: Generated<bigint>;
  network: NetworkId;
  mode: Mode;
  from_generation: number;
  from_address: string;
  to_generation: number;
  to_address: string;
  actor: string;
  status: ColumnType<GasStationDrainStatus, GasStationDrainStatus | undefined, GasStationDrainStatus>;
  tx_hash: string | null;
  amount: NullableBig;
  fee: NullableBig;
  failure_reason: string | null;
  created_at: Ts;
  settled_at: NullableTs;
}

export interface GasStationDrainAttemptsTable {
  id: Generated<bigint>;
  drain_id: ColumnType<bigint, bigint | string, bigint | string>;
  network: NetworkId;
  mode: Mode;
  sender: string;
  nonce: NullableBig;
  tx_hash: string;
  signed: Json<Record<string, string | null>>;
  state: ColumnType<GasStationDrainAttemptState, GasStationDrainAttemptState | undefined, GasStationDrainAttemptState>;
  fee_bump_percent: ColumnType<number, number | undefined, number>;
  detail: string | null;
  created_at: Ts;
  broadcast_at: NullableTs;
  settled_at: NullableTs;
}

export type GasStationTables = {
  gas_station_generations: GasStationGenerationsTable;
  gas_station_drains: GasStationDrainsTable;
  gas_station_drain_attempts: GasStationDrainAttemptsTable;
};
