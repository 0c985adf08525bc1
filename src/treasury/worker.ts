import type { Logger } from '../logger.js';
import { planSweeps, type PlannerDeps } from './planner.js';
import { advanceOpenDrains } from './gas-station-drain.js';
import { advanceRunningSweeps, createSweeps } from './runner.js';
import type { SweepEngineDeps } from './step-kind.js';
import { startTickLoop, type TickLoop } from '../jobs/tick-loop.js';

// The worker role's sweeps: every tick advances the sweeps running, whoever started them (this schedule or an
// operator's `sweep run` that was interrupted or timed out, e.g. waiting for fee money); with SWEEP_INTERVAL_SECONDS
// set (0, the default, leaves planning to the operator's `sweep run`), every interval a plan of every merchant also
// becomes sweeps; the drains of rotated gas stations are advanced too. Driven by the database alone, so a restart resumes every sweep where it stopped.

export interface SweepWorkerOptions {
  engine: SweepEngineDeps;
  planner: PlannerDeps;
  /** Planning interval; 0: never plans, only advances the running sweeps. */
  intervalMs: number;
  tickMs: number;
  log?: Pick<Logger, 'info' | 'warn' | 'error'>;
}

export function startSweepWorker(o: SweepWorkerOptions): TickLoop {
  let nextPlanAt = Date.now();
  return startTickLoop({
    intervalMs: o.tickMs,
    tick: async () => {
      if (o.intervalMs > 0 && Date.now() >= nextPlanAt) {
        nextPlanAt = Date.now() + o.intervalMs;
        const report = await planSweeps(o.planner);
        const created = await createSweeps(o.engine.db, report.batches);
        if (created.length || report.skipped.length)
          o.log?.info({ sweeps: created.length, skipped_addresses: report.skipped.length }, 'sweeps planned');
      }
      await advanceRunningSweeps(o.engine);
      // A rotated gas station's drain (docs/treasury.md, "Rotating the gas station") left open by its command.
      await advanceOpenDrains(o.engine);
    },
    onError: (err) => o.log?.warn({ err }, 'sweep tick failed; retrying next tick'),
  });
}
