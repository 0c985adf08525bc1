-- The signer's database role (docs/signer.md, "Its database role"): it reads the ledger to justify what it signs and
-- appends to its own audit, nothing else. It cannot change a refund, a sweep, a session or the pause switch, so a
-- compromised signer process cannot rewrite the ledger it is checked against.
-- Run as the owner of the service's database, after `migrate`, in that database:
--   psql "$DATABASE_URL" -f deploy/signer-db-role.sql
-- then give the role a password (or certificate) from your secrets manager, e.g. `\password stablepay_signer`, and
-- start the signer with DATABASE_URL=postgres://stablepay_signer:…@host/db and MIGRATE_ON_START=false.
create role stablepay_signer login;
grant usage on schema public to stablepay_signer;
grant select on all tables in schema public to stablepay_signer;
-- Tables added by later migrations are readable too (migrations run as this same owner).
alter default privileges in schema public grant select on tables to stablepay_signer;
grant insert on signer_audit to stablepay_signer;
grant usage on sequence signer_audit_id_seq to stablepay_signer;
