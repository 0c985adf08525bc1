import type { ColumnType, Generated } from 'kysely';

// Kysely types of the tables created by migration 2026_11_25_0200_journal; src/db/schema.ts's Database includes them.

type Big = ColumnType<bigint, bigint | string, bigint | string>;
type Ts = ColumnType<Date, Date | string | undefined, Date | string>;

/** What an entry records (docs/journal.md). A reversal keeps its original's kind and names it in `reverses_id`. */
export type JournalKind = 'deposit' | 'refund_payout' | 'charge' | 'deposit_setup' | 'sweep' | 'top_up' | 'unexplained' | 'opening_balance';

/** The business object an entry belongs to. */
export type JournalObjectType = 'deposit' | 'session' | 'refund' | 'charge' | 'invoice' | 'sweep' | 'wallet';

export interface JournalEntriesTable {
  id: Generated<bigint>;
  network: string;
  mode: 'test' | 'live';
  tx_hash: string;
  leg_key: string;
  revision: ColumnType<number, number | undefined, number>;
  kind: JournalKind;
  block_height: Big;
  block_hash: string | null;
  merchant_id: string | null;
  session_id: string | null;
  object_type: JournalObjectType | null;
  object_id: string | null;
  reverses_id: ColumnType<bigint | null, bigint | string | null | undefined, never>;
  created_at: Ts;
}

export interface JournalLegsTable {
  entry_id: Big;
  account: string;
  asset: string;
  /** Signed base units: positive into `account`, negative out of it. */
  amount: Big;
}

export interface JournalAcknowledgementsTable {
  entry_id: Big;
  note: string;
  acknowledged_at: Ts;
}

export interface JournalWalletsTable {
  network: string;
  mode: 'test' | 'live';
  address: string;
  merchant_id: string | null;
  role: string;
  registered_at: Ts;
  /** The watcher's scanned height when the wallet was registered (null before the watcher ran, or registered earlier). */
  registered_height: ColumnType<bigint | null, bigint | string | null | undefined, bigint | string | null>;
}

export interface ReconcileRunsTable {
  id: Generated<bigint>;
  network: string;
  mode: 'test' | 'live';
  height: Big;
  addresses: number;
  balances: number;
  differences: number;
  rpc_calls: number;
  duration_ms: number;
  started_at: Ts;
  finished_at: Ts;
}

/** A scheduled reconcile slot claimed by one worker (migration 2026_11_29_0200_reconcile_slots). */
export interface ReconcileSlotsTable {
  network: string;
  mode: string;
  slot: Big;
  claimed_at: Ts;
}

export interface ReconcileDifferencesTable {
  run_id: Big;
  account: string;
  asset: string;
  merchant_id: string | null;
  journal_base: Big;
  chain_base: Big;
  difference_base: Big;
  unexplained_base: Big;
}

export type JournalTables = {
  journal_entries: JournalEntriesTable;
  journal_legs: JournalLegsTable;
  journal_acknowledgements: JournalAcknowledgementsTable;
  journal_wallets: JournalWalletsTable;
  reconcile_runs: ReconcileRunsTable;
  reconcile_differences: ReconcileDifferencesTable;
  reconcile_slots: ReconcileSlotsTable;
};
