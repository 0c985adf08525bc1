import type { ColumnType, Generated } from 'kysely';

// Kysely types of the tables created by migration 2026_11_29_0300_console; src/db/schema.ts's Database includes them.

type Ts = ColumnType<Date, Date | string | undefined, Date | string>;
type NullableTs = ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
type Jsonb = ColumnType<unknown, string | null | undefined, string | null>;

export type ConsoleRole = 'operator' | 'merchant';

export interface ConsoleUsersTable {
  id: string;
  email: string;
  role: ConsoleRole;
  merchant_id: string | null;
  password_hash: string;
  /** The TOTP secret sealed under the master key (security/sealed-column-aad.ts); null until enrolled. */
  totp_secret_enc: string | null;
  totp_enabled_at: NullableTs;
  must_change_password: Generated<boolean>;
  disabled_at: NullableTs;
  created_at: Ts;
  updated_at: Ts;
}

export interface ConsoleRecoveryCodesTable {
  user_id: string;
  code_hash: string;
  used_at: NullableTs;
  created_at: Ts;
}

export interface ConsoleSessionsTable {
  /** sha256 of the cookie's value: the cookie itself is never stored. */
  id_hash: string;
  user_id: string;
  csrf_token: string;
  /** The password was right and, where required or enrolled, the TOTP code or a recovery code too. */
  second_factor_done: Generated<boolean>;
  ip: string;
  user_agent: string | null;
  created_at: Ts;
  last_seen_at: Ts;
  /** The absolute timeout. The idle timeout is last_seen_at + CONSOLE_IDLE_TIMEOUT. */
  expires_at: Ts;
  revoked_at: NullableTs;
}

export type AuditActorKind = 'console' | 'cli' | 'system';

export interface ConsoleAuditTable {
  id: Generated<bigint>;
  at: Ts;
  actor_kind: AuditActorKind;
  actor_id: string | null;
  actor_email: string | null;
  actor_role: string | null;
  action: string;
  object_type: string;
  object_id: string | null;
  merchant_id: string | null;
  before: Jsonb;
  after: Jsonb;
  ip: string | null;
  detail: string | null;
}

export interface ConsoleTables {
  console_users: ConsoleUsersTable;
  console_recovery_codes: ConsoleRecoveryCodesTable;
  console_sessions: ConsoleSessionsTable;
  console_audit: ConsoleAuditTable;
}
