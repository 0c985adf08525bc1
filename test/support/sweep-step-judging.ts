import { expect } from 'vitest';
import type { Kysely } from 'kysely';
import type { Database } from '../../src/db/schema.js';
import type { InvariantContext } from '../../scripts/sim/contract.js';
import { OUTBOUND_ONCE, outboundMovedMoneyAtMostOnce } from '../../scripts/sim/invariants/outbound-once.js';
import { rolledBack } from './sim-invariant-harness.js';

// How the simulator's outbound invariant judges one sweep step that really ran (test/sim/invariants-sweeps-*.test.ts):
// it holds on the real state, and each corruption, made inside a transaction that is always rolled back, is reported
// with the step as subject: the step said failed while its transaction succeeded; said succeeded with no transaction
// of its on chain; and a second landed transaction recorded as one of its attempts (say one it dropped).

export async function expectSweepStepJudged(
  db: Kysely<Database>,
  context: (db: InvariantContext['db']) => InvariantContext,
  o: { stepId: string; sweepId: string; landedElsewhere: string; unknownHash: string },
): Promise<void> {
  const subject = `sweep:${o.sweepId}/${o.stepId}`;
  const judged = async (vs: Awaited<ReturnType<typeof outboundMovedMoneyAtMostOnce>>) =>
    vs.filter((v) => v.invariant === OUTBOUND_ONCE && v.subject === subject).map((v) => v.message);

  expect(await judged(await outboundMovedMoneyAtMostOnce(context(db)))).toEqual([]);

  const saidFailed = await rolledBack(db, async (trx) => {
    await trx.updateTable('sweep_steps').set({ status: 'failed' }).where('id', '=', o.stepId).execute();
    return judged(await outboundMovedMoneyAtMostOnce(context(trx)));
  });
  expect(saidFailed).toEqual([expect.stringMatching(/is failed but its transaction \S+ succeeded on the canonical chain/)]);

  const nothingLanded = await rolledBack(db, async (trx) => {
    await trx.updateTable('sweep_step_attempts').set({ tx_hash: o.unknownHash }).where('step_id', '=', o.stepId).execute();
    return judged(await outboundMovedMoneyAtMostOnce(context(trx)));
  });
  expect(nothingLanded).toEqual([expect.stringMatching(/succeeded but none of its transactions is on the canonical chain/)]);

  // The other landed transaction among the step's attempts, as one the service dropped (a step has at most one
  // confirmed attempt): moved over when it is another step's attempt (a txID is recorded once), else a copy.
  const twice = await rolledBack(db, async (trx) => {
    const r = await trx
      .updateTable('sweep_step_attempts')
      .set({ step_id: o.stepId, state: 'dropped' })
      .where('tx_hash', '=', o.landedElsewhere)
      .executeTakeFirst();
    if (r.numUpdatedRows === 0n) {
      const a = await trx.selectFrom('sweep_step_attempts').selectAll().where('step_id', '=', o.stepId).executeTakeFirstOrThrow();
      const { id: _id, ...copy } = a;
      await trx
        .insertInto('sweep_step_attempts')
        .values({ ...copy, signed: JSON.stringify(copy.signed), state: 'dropped', tx_hash: o.landedElsewhere })
        .execute();
    }
    return judged(await outboundMovedMoneyAtMostOnce(context(trx)));
  });
  expect(twice).toEqual([expect.stringMatching(/\(succeeded\) landed 2 transactions/)]);
}
