import type { Kysely } from 'kysely';

// Placeholder: amounts actually delivered by payouts and charges (issue 13 item 18).
export async function up(_db: Kysely<any>): Promise<void> {}
