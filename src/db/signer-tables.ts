import type { ColumnType, Generated } from 'kysely';

// Kysely types of the tables created by migration 2026_11_29_0600_signer; src/db/schema.ts's Database includes them.

type Ts = ColumnType<Date, Date | string | undefined, Date | string>;
type Jsonb = ColumnType<unknown, string | null | undefined, string | null>;

export type SignerAuditOutcome = 'signed' | 'refused' | 'paused' | 'resumed';

export interface SignerAuditTable {
  id: Generated<bigint>;
  at: Ts;
  request_id: string | null;
  purpose: string | null;
  intent: Jsonb;
  merchant_id: string | null;
  network: string | null;
  mode: string | null;
  /** `curve:path` of the key asked for (a path, never key material). */
  key_path: string | null;
  outcome: SignerAuditOutcome;
  /** The refusal code (src/domain/signing.ts REFUSAL_CODES); null unless refused. */
  code: string | null;
  reason: string | null;
  /** The 32-byte digest asked for (0x hex), when one was. */
  digest: string | null;
  /** What the transaction does, as decoded: {to, token, amount_base}. */
  summary: Jsonb;
  amount_base: ColumnType<bigint | null, bigint | string | null | undefined, bigint | string | null>;
}

export interface SignerStateTable {
  id: Generated<boolean>;
  paused: boolean;
  changed_at: Ts;
  changed_by: string | null;
  reason: string | null;
}

export interface SignerTables {
  signer_audit: SignerAuditTable;
  signer_state: SignerStateTable;
}
