import { openChargeIds } from '../ledger/subscriptions/charges.js';
import { processOneDue } from '../ledger/subscriptions/lifecycle.js';
import { advanceCharge, type ChargeEngineDeps } from './charge-engine.js';
import { withIds } from '../log-fields.js';

// The subscription scheduler. The database holds every subscription's next action and time (next_action_at); a
// tick claims due rows one by one with FOR UPDATE SKIP LOCKED and performs them, then drives every charge in
// flight one step. Nothing lives only in Redis: a tick after a crash, a restart or a Redis flush finds all work in
// the tables. Ticks may run concurrently in several processes; see docs/subscriptions.md for why each
// (subscription, period) is still charged at most once.

export interface TickOptions {
  /** Due subscriptions handled per tick at most (the rest wait for the next tick). */
  maxDue?: number;
  /** Charges advanced in parallel. */
  chargeConcurrency?: number;
  /** Due subscriptions claimed in parallel (SKIP LOCKED keeps the claimers apart). */
  dueConcurrency?: number;
}

export interface TickResult {
  due: number;
  chargesOpen: number;
  chargesSettled: number;
}

export async function runSchedulerTick(deps: ChargeEngineDeps, o: TickOptions = {}): Promise<TickResult> {
  const maxDue = o.maxDue ?? 500;
  let due = 0;
  let drained = false;
  await Promise.all(
    Array.from({ length: o.dueConcurrency ?? 4 }, async () => {
      while (!drained && due < maxDue) {
        const r = await processOneDue(deps);
        if (r.kind === 'none') drained = true;
        else due++;
      }
    }),
  );
  const ids = await openChargeIds(deps.db, 5000);
  let settled = 0;
  let next = 0;
  const workers = Array.from({ length: Math.min(o.chargeConcurrency ?? 8, ids.length) }, async () => {
    while (next < ids.length) {
      const id = ids[next++]!;
      try {
        const step = await advanceCharge(deps.log ? { ...deps, log: withIds(deps.log, { charge_id: String(id) }) } : deps, id);
        if (step.kind === 'done') settled++;
      } catch (err) {
        deps.log?.warn({ err, charge_id: String(id) }, 'charge step failed; the next tick retries it');
      }
    }
  });
  await Promise.all(workers);
  return { due, chargesOpen: ids.length - settled, chargesSettled: settled };
}
