import { sql, type Kysely } from 'kysely';

// The web console (issue 35, docs/console.md): its users, their sign-in sessions and one-time recovery codes, and the
// audit log of every mutation made through the console or the CLI. The audit log is append-only for everyone who
// connects as the application: a trigger refuses UPDATE, DELETE and TRUNCATE (tested in console-audit).
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table console_users (
      id text primary key,
      email text not null,
      role text not null check (role in ('operator', 'merchant')),
      merchant_id text references merchants(id),
      password_hash text not null,
      totp_secret_enc text,
      totp_enabled_at timestamptz,
      must_change_password boolean not null default false,
      disabled_at timestamptz,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now(),
      check ((role = 'merchant') = (merchant_id is not null))
    )`.execute(db);
  await sql`create unique index console_users_email on console_users (lower(email))`.execute(db);
  await sql`create index console_users_created on console_users (created_at desc, id desc)`.execute(db);
  await sql`
    create table console_recovery_codes (
      user_id text not null references console_users(id),
      code_hash text not null,
      used_at timestamptz,
      created_at timestamptz not null default now(),
      primary key (user_id, code_hash)
    )`.execute(db);
  await sql`
    create table console_sessions (
      id_hash text primary key,
      user_id text not null references console_users(id),
      csrf_token text not null,
      second_factor_done boolean not null default false,
      ip text not null,
      user_agent text,
      created_at timestamptz not null default now(),
      last_seen_at timestamptz not null default now(),
      expires_at timestamptz not null,
      revoked_at timestamptz
    )`.execute(db);
  await sql`create index console_sessions_user on console_sessions (user_id) where revoked_at is null`.execute(db);
  await sql`
    create table console_audit (
      id bigserial primary key,
      at timestamptz not null default now(),
      actor_kind text not null check (actor_kind in ('console', 'cli', 'system')),
      actor_id text,
      actor_email text,
      actor_role text,
      action text not null,
      object_type text not null,
      object_id text,
      merchant_id text,
      before jsonb,
      after jsonb,
      ip text,
      detail text
    )`.execute(db);
  await sql`create index console_audit_at on console_audit (at desc, id desc)`.execute(db);
  await sql`create index console_audit_merchant on console_audit (merchant_id, at desc, id desc)`.execute(db);
  await sql`create index console_audit_actor on console_audit (actor_id, at desc, id desc)`.execute(db);
  await sql`
    create function console_audit_append_only() returns trigger language plpgsql as $$
    begin
      raise exception 'console_audit is append-only' using errcode = 'insufficient_privilege';
    end $$`.execute(db);
  await sql`
    create trigger console_audit_no_update before update or delete on console_audit
      for each row execute function console_audit_append_only()`.execute(db);
  await sql`
    create trigger console_audit_no_truncate before truncate on console_audit
      for each statement execute function console_audit_append_only()`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table console_audit`.execute(db);
  await sql`drop function console_audit_append_only()`.execute(db);
  await sql`drop table console_sessions`.execute(db);
  await sql`drop table console_recovery_codes`.execute(db);
  await sql`drop table console_users`.execute(db);
}
