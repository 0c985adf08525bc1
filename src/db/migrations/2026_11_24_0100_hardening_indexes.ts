import type { Kysely } from 'kysely';

// Placeholder: indexes for hot lookups (issue 13 item 8).
export async function up(_db: Kysely<any>): Promise<void> {}
