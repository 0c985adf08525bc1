import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import { appendSignerAudit } from './signer-audit.js';

// The signer's kill switch (docs/signer.md, "Pause"): one row. Paused, the signer refuses every signature with
// `paused` until resumed. Each change is a signer_audit row (outcome paused or resumed) in the same transaction.

export interface SignerState {
  paused: boolean;
  changedAt: Date;
  changedBy: string | null;
  reason: string | null;
}

export async function readSignerState(db: Kysely<Database>): Promise<SignerState> {
  const row = await db.selectFrom('signer_state').selectAll().executeTakeFirst();
  if (!row) return { paused: false, changedAt: new Date(0), changedBy: null, reason: null };
  return { paused: row.paused, changedAt: row.changed_at, changedBy: row.changed_by, reason: row.reason };
}

/** Sets the switch and audits the change; answers the state before it. */
export async function setSignerPausedState(
  db: Kysely<Database>,
  o: { paused: boolean; actor: string; reason: string | null },
): Promise<{ before: SignerState; after: SignerState }> {
  return db.transaction().execute(async (trx) => {
    const prior = await trx.selectFrom('signer_state').selectAll().forUpdate().executeTakeFirst();
    const before: SignerState = prior
      ? { paused: prior.paused, changedAt: prior.changed_at, changedBy: prior.changed_by, reason: prior.reason }
      : { paused: false, changedAt: new Date(0), changedBy: null, reason: null };
    const row = await trx
      .insertInto('signer_state')
      .values({ id: true, paused: o.paused, changed_at: new Date(), changed_by: o.actor, reason: o.reason })
      .onConflict((c) => c.column('id').doUpdateSet({ paused: o.paused, changed_at: new Date(), changed_by: o.actor, reason: o.reason }))
      .returningAll()
      .executeTakeFirstOrThrow();
    await appendSignerAudit(trx, {
      outcome: o.paused ? 'paused' : 'resumed',
      reason: o.reason === null ? `by ${o.actor}` : `by ${o.actor}: ${o.reason}`,
    });
    return { before, after: { paused: row.paused, changedAt: row.changed_at, changedBy: row.changed_by, reason: row.reason } };
  });
}
