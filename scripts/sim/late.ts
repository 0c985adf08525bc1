import { sql } from 'kysely';
import type { Db } from '../../src/db/database.js';

// A "late" payment of the scenario (docs/simulation.md): the session's lifetime ran out before the payer paid. Lateness
// is judged by the chain's clock, as the service and the session-paid invariant judge it (a block's timestamp against
// `expires_at`): the expiry moves to one second before the chain's latest block (or before the wall clock, when the
// chain runs ahead of it), so every block that can still include the payment is timestamped after the expiry, however
// far Anvil's block timestamps lag the wall clock on a loaded machine.

/** Moves the session's expiry before the chain's latest block time (and the wall clock); returns the new expiry. */
export async function expireByChainTime(db: Db, sessionId: string, latestBlockSeconds: number): Promise<Date> {
  const r = await sql<{ expires_at: Date }>`
    update payment_sessions set expires_at = least(now(), to_timestamp(${latestBlockSeconds})) - interval '1 second'
    where id = ${sessionId} returning expires_at`.execute(db);
  const row = r.rows[0];
  if (!row) throw new Error(`session ${sessionId} not found to expire`);
  return row.expires_at;
}
