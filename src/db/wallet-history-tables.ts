import type { ColumnType, Generated } from 'kysely';
import type { Mode, NetworkId } from '../../chains/vocabulary.js';

// Kysely types of the table created by migration 2026_11_30_0100_wallet_history_guard (the restore guard of TRON and
// Solana wallets, src/ledger/outbound/wallet-history.ts); src/db/schema.ts's Database includes them.

type NullableTs = ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;

export interface HotWalletUnknownTransactionsTable {
  id: Generated<bigint>;
  network: NetworkId;
  mode: Mode;
  address: string;
  tx_hash: string;
  chain_time: NullableTs;
  failed: ColumnType<boolean, boolean | undefined, boolean>;
  seen_at: ColumnType<Date, Date | string | undefined, Date | string>;
  accepted_at: NullableTs;
  accepted_by: string | null;
  note: string | null;
}

export interface WalletHistoryTables {
  hot_wallet_unknown_transactions: HotWalletUnknownTransactionsTable;
}
