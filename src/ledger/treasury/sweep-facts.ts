import type { Db } from '../../db/database.js';
import type { SweepRow, SweepSourceRow, SweepStepRow } from './sweeps.js';

// What the signer role reads to justify a sweep step (docs/signer.md, "Sweep steps"): the sweep, the step (only when
// it belongs to that sweep), the sweep's sources, and the merchant's treasury destination on the sweep's network with
// the time it last changed. The signer does not take the sweep's `request` JSON or the step JSON for where money goes:
// it derives the wallets itself and checks the sources' keys against the seed.

export interface SweepFacts {
  sweep: SweepRow;
  /** Undefined when no step of this id belongs to this sweep. */
  step: SweepStepRow | undefined;
  sources: SweepSourceRow[];
  treasury: {
    /** The current treasury address (treasury_destinations), as stored; null: sweeps go to the refunds hot wallet. */
    address: string | null;
    /**
     * When it was last set: the later of the newest change row's time and the destination row's `updated_at`; null
     * when the newest change row does not name the current address (a destination written without its audit row),
     * which the signer treats as changed now.
     */
    changedAt: Date | null;
  };
}

export async function sweepFacts(db: Db, sweepId: string, stepId: string): Promise<SweepFacts | undefined> {
  const sweep = await db.selectFrom('sweeps').selectAll().where('id', '=', sweepId).executeTakeFirst();
  if (!sweep) return undefined;
  const step = await db.selectFrom('sweep_steps').selectAll().where('id', '=', stepId).where('sweep_id', '=', sweepId).executeTakeFirst();
  const sources = await db.selectFrom('sweep_sources').selectAll().where('sweep_id', '=', sweepId).orderBy('address').execute();
  const destination = await db
    .selectFrom('treasury_destinations')
    .select(['treasury_address', 'updated_at'])
    .where('merchant_id', '=', sweep.merchant_id)
    .where('network', '=', sweep.network)
    .where('mode', '=', sweep.mode)
    .executeTakeFirst();
  const change = await db
    .selectFrom('treasury_destination_changes')
    .select(['new_treasury_address', 'changed_at'])
    .where('merchant_id', '=', sweep.merchant_id)
    .where('network', '=', sweep.network)
    .where('mode', '=', sweep.mode)
    .orderBy('id', 'desc')
    .limit(1)
    .executeTakeFirst();
  const address = destination?.treasury_address ?? null;
  let changedAt: Date | null = null;
  if (address !== null && change && change.new_treasury_address === address && destination)
    changedAt = new Date(Math.max(change.changed_at.getTime(), destination.updated_at.getTime()));
  return { sweep, step, sources, treasury: { address, changedAt } };
}
