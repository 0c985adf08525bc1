import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';

// The webhook tables' row types live in src/db/webhook-tables.ts.
export type { AttemptOutcome, DeliveryStatus } from '../db/webhook-tables.js';

/** The project's Database (src/db/schema.ts joins this migration's tables and merchant columns into it). */
export type WebhookDb = Kysely<Database>;
