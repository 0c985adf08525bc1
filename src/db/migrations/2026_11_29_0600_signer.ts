import { sql, type Kysely } from 'kysely';

// The signer role (issue 36, docs/signer.md): the audit of every signature asked of it (signed or refused) and of
// every pause and resume, and its one-row kill switch. The audit is append-only for everyone who connects as the
// application: a trigger refuses UPDATE, DELETE and TRUNCATE (tested in signer-service), as console_audit's does.
// request_id is unique among the requests answered; a request refused as `replayed_request` repeats an id already
// seen, so the uniqueness leaves those rows out (the partial index below).
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table signer_audit (
      id bigserial primary key,
      at timestamptz not null default now(),
      request_id text,
      purpose text,
      intent jsonb,
      merchant_id text,
      network text,
      mode text,
      key_path text,
      outcome text not null check (outcome in ('signed', 'refused', 'paused', 'resumed')),
      code text,
      reason text,
      digest text,
      summary jsonb,
      amount_base numeric(78, 0),
      check ((outcome = 'refused') = (code is not null))
    )`.execute(db);
  await sql`
    create unique index signer_audit_request on signer_audit (request_id)
      where request_id is not null and code is distinct from 'replayed_request'`.execute(db);
  await sql`create index signer_audit_at on signer_audit (at desc, id desc)`.execute(db);
  // The limits' read: a merchant's signed refund payouts on one network in the last day.
  await sql`
    create index signer_audit_signed on signer_audit (merchant_id, network, mode, at)
      where outcome = 'signed'`.execute(db);
  await sql`
    create function signer_audit_append_only() returns trigger language plpgsql as $$
    begin
      raise exception 'signer_audit is append-only' using errcode = 'insufficient_privilege';
    end $$`.execute(db);
  await sql`
    create trigger signer_audit_no_update before update or delete on signer_audit
      for each row execute function signer_audit_append_only()`.execute(db);
  await sql`
    create trigger signer_audit_no_truncate before truncate on signer_audit
      for each statement execute function signer_audit_append_only()`.execute(db);
  await sql`
    create table signer_state (
      id boolean primary key default true check (id),
      paused boolean not null default false,
      changed_at timestamptz not null default now(),
      changed_by text,
      reason text
    )`.execute(db);
  await sql`insert into signer_state (id, paused) values (true, false)`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table signer_state`.execute(db);
  await sql`drop table signer_audit`.execute(db);
  await sql`drop function signer_audit_append_only()`.execute(db);
}
