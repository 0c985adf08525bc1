import type { Kysely } from 'kysely';

// Placeholder: per-merchant underpayment tolerance and sub-unit shortfall (issue 13 items 13, 19).
export async function up(_db: Kysely<any>): Promise<void> {}
