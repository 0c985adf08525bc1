import type { Kysely } from 'kysely';

// Placeholder: per-merchant session lifetime falls back to SESSION_LIFETIME_SECONDS (issue 13 item 21).
export async function up(_db: Kysely<any>): Promise<void> {}
