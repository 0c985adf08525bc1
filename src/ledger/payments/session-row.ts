import type { Selectable } from 'kysely';
import type { PaymentSessionsTable } from '../../db/schema.js';

/** A payment_sessions row as the ledger reads it. */
export type SessionRow = Selectable<PaymentSessionsTable>;
