import type { WalletShortfall } from '../../chains/types.js';
import type { Db } from '../db/database.js';
import type { Mode, NetworkId } from '../../chains/vocabulary.js';
import {
  createSweep,
  finishSweep,
  runningSweepIds,
  sweepById,
  sweepSteps,
  type SweepRow,
  type SweepStepRow,
} from '../ledger/treasury/sweeps.js';
import { withIds } from '../log-fields.js';
import { recordSweepFinished } from '../metrics/sweeps.js';
import type { StepResult } from '../outbound/kind.js';
import { requestToJson, stepFromJson, stepToJson } from './codec.js';
import type { PlannedBatch } from './planner.js';
import { advanceSweepStep, type SweepEngineDeps } from './step-kind.js';

// The sweep runner (docs/treasury.md, Runner). A planned batch becomes a sweep in one transaction (sweep, sources,
// steps) before anything is signed; then each step goes through the outbound engine, group by group: group n+1
// starts once every step of group n is settled. Everything is read from the tables, so a crash anywhere resumes
// where it stopped. A step that fails stops the sweep: steps in flight are followed to their end, clean-up steps that
// return what was lent still run (TRON undelegate), other steps not started are skipped, and the addresses not swept
// are released for a later sweep. A failed Solana `close` step is the exception: it moves no token, so it fails alone.

/**
 * Tests only: SP_FAILPOINTS_SWEEP_STEP=<purpose> (fund, transfer, ...) limits SP_FAILPOINTS to the sweep steps of that
 * purpose, so a crash test can kill the process at a top-up or at a transfer of the same sweep.
 */
const failpointPurpose = process.env.SP_FAILPOINTS_SWEEP_STEP?.trim() || null;
const noFailpoint = () => {};

/** Persists each planned batch as a running sweep. Batches whose addresses are already in a running sweep are left out. */
export async function createSweeps(db: Db, batches: readonly PlannedBatch[]): Promise<SweepRow[]> {
  const created: SweepRow[] = [];
  for (const b of batches) {
    const sweep = await createSweep(db, {
      merchantId: b.merchantId,
      network: b.network,
      mode: b.mode,
      token: b.token,
      method: b.plan.method,
      destinationKind: b.destinationKind,
      destination: b.request.destination,
      request: requestToJson(b.request),
      sources: b.request.sources.map((s) => ({ address: s.address, key: s.key, amount: s.amount })),
      steps: b.plan.steps.map((s) => ({
        group: s.group,
        purpose: s.purpose,
        from: s.from.address,
        estimatedFee: s.estimatedFee,
        json: stepToJson(s),
      })),
      estimatedFee: b.estimatedCost,
      feeShareBps: b.feeShareBps,
    });
    if (sweep) created.push(sweep);
  }
  return created;
}

/** One pass over a sweep: advances the steps of its current group; finishes it when nothing is left in flight. */
export async function advanceSweep(deps: SweepEngineDeps, sweepId: string): Promise<StepResult> {
  const sweep = await sweepById(deps.db, sweepId);
  if (!sweep || sweep.status !== 'running') return { kind: 'done', status: sweep?.status ?? 'missing' };
  const log = deps.log ? withIds(deps.log, { sweep_id: sweep.id, merchant_id: sweep.merchant_id }) : undefined;
  const stepDeps = log ? { ...deps, log } : deps;
  for (let pass = 0; pass < 100; pass++) {
    const steps = await sweepSteps(deps.db, sweepId);
    // A failed Solana `close` moved nothing but its fee (a payment reached an account after its close was built; the
    // account stays open for a later sweep): it does not stop or fail the sweep, whose tokens all moved.
    const failed = steps.find((s) => s.status === 'failed' && s.purpose !== 'close');
    const inFlight = steps.filter((s) => s.status === 'processing');
    const pending = steps.filter((s) => s.status === 'pending');
    // After a failure only the steps already in flight are followed, and the clean-up steps that give back what an
    // earlier step lent (TRON: the energy delegated to an address is taken back even when its transfer failed).
    const open = failed ? [...inFlight, ...pending.filter((s) => runsAfterFailure(s, steps))] : [...inFlight, ...pending];
    if (open.length === 0) {
      const reason = failed ? `step ${failed.seq} (${failed.purpose}) failed: ${failed.failure_reason ?? ''}` : null;
      const done = await finishSweep(deps.db, sweepId, reason);
      if (done) {
        recordSweepFinished(done, done.status);
        (done.status === 'completed' ? log?.info : log?.warn)?.call(
          log,
          {
            network: done.network,
            mode: done.mode,
            token: done.token,
            status: done.status,
            swept_base: String(done.swept_base),
            planned_base: String(done.planned_base),
            fee: String(done.actual_fee),
            ...(reason ? { reason } : {}),
          },
          'sweep finished',
        );
      }
      return { kind: 'done', status: done?.status ?? 'finished' };
    }
    const group = Math.min(...open.map((s) => s.group_no));
    let waitMs = 0;
    let shortfall: WalletShortfall | undefined;
    for (const step of open.filter((s) => s.group_no === group)) {
      if (step.status === 'pending' && step.purpose === 'deploy' && (await deployInFlight(deps.db, sweep, step))) {
        // Another sweep is deploying the same contract: wait for it (this step's builder then finds the code and the
        // step is skipped) rather than send a second deployment that would revert.
        waitMs = Math.max(waitMs, deps.pollMs);
        continue;
      }
      const d =
        failpointPurpose && step.purpose !== failpointPurpose && !deps.failpoint ? { ...stepDeps, failpoint: noFailpoint } : stepDeps;
      const r = await advanceSweepStep(d, step.id);
      if (r.kind === 'wait') waitMs = Math.max(waitMs, r.ms);
      if (r.kind === 'wait' && r.shortfall) shortfall ??= r.shortfall;
    }
    if (waitMs > 0) return { kind: 'wait', ms: waitMs, ...(shortfall ? { shortfall } : {}) };
  }
  return { kind: 'wait', ms: deps.pollMs };
}

/**
 * A pending step that still runs once another step of its sweep failed: an `undelegate` whose `delegate` (same
 * recipient) succeeded. Without it the operator's staked energy would stay lent to a deposit address.
 */
function runsAfterFailure(step: SweepStepRow, steps: readonly SweepStepRow[]): boolean {
  if (step.purpose !== 'undelegate') return false;
  const to = stepFromJson(step.step).to;
  return steps.some((d) => d.purpose === 'delegate' && d.status === 'succeeded' && stepFromJson(d.step).to === to);
}

/**
 * Whether a deploy step of the same contract, in another running sweep on the same network and mode, is being sent.
 * EIP-7702 delegates differ per merchant destinations (docs/treasury-evm-7702.md): another merchant's deployment is
 * not waited for.
 */
async function deployInFlight(db: Db, sweep: SweepRow, step: SweepStepRow): Promise<boolean> {
  const contract = stepFromJson(step.step).params['contract'];
  const rows = await db
    .selectFrom('sweep_steps as st')
    .innerJoin('sweeps as s', 's.id', 'st.sweep_id')
    .select('st.step')
    .where('st.purpose', '=', 'deploy')
    .where('st.status', '=', 'processing')
    .where('st.id', '!=', step.id)
    .where('s.network', '=', sweep.network)
    .where('s.mode', '=', sweep.mode)
    .execute();
  return rows.some((r) => contract === undefined || stepFromJson(r.step).params['contract'] === contract);
}

/**
 * When each running sweep may be advanced again (epoch ms), per driver (its deps): a step that asked to wait longer
 * than a pass (the outbound engine waits 5 s after a node refused its bytes, docs/outbound.md; a step whose build was
 * refused waits as long) is not offered again on every pass, which re-broadcast refused bytes (or rebuilt a step no
 * build could make) and logged it on every tick. `feeMoney`: the running sweeps whose current steps wait for fee money
 * an operator must add, with the wallet that lacks it.
 */
interface DriverState {
  notBefore: Map<string, number>;
  feeMoney: Map<string, FeeMoneyWait>;
}
const drivers = new WeakMap<SweepEngineDeps, DriverState>();

/** A running sweep waiting for fee money: the wallet that lacks it (canonical address), its balance and the need. */
export interface FeeMoneyWait extends WalletShortfall {
  sweepId: string;
  network: NetworkId;
  mode: Mode;
}

/** How long a sweep whose pass threw waits before it is advanced again (an RPC error, a node refusing to build). */
const FAILED_PASS_WAIT_MS = 5_000;

function stateOf(deps: SweepEngineDeps): DriverState {
  let s = drivers.get(deps);
  if (!s) drivers.set(deps, (s = { notBefore: new Map(), feeMoney: new Map() }));
  return s;
}

/** Advances every running sweep once, skipping those still waiting. Answers how many are still running. */
export async function advanceRunningSweeps(deps: SweepEngineDeps): Promise<number> {
  const { notBefore: pace, feeMoney } = stateOf(deps);
  const ids = await runningSweepIds(deps.db);
  for (const id of pace.keys()) if (!ids.includes(id)) pace.delete(id);
  for (const id of feeMoney.keys()) if (!ids.includes(id)) feeMoney.delete(id);
  let running = 0;
  for (const id of ids) {
    if ((pace.get(id) ?? 0) > Date.now()) {
      running++;
      continue;
    }
    pace.delete(id);
    try {
      const r = await advanceSweep(deps, id);
      feeMoney.delete(id);
      if (r.kind === 'wait') {
        running++;
        if (r.ms > deps.pollMs) pace.set(id, Date.now() + r.ms);
        if (r.shortfall) {
          const sweep = await sweepById(deps.db, id);
          if (sweep) feeMoney.set(id, { sweepId: id, network: sweep.network, mode: sweep.mode, ...r.shortfall });
        }
      }
    } catch (err) {
      running++;
      pace.set(id, Date.now() + Math.max(deps.pollMs, FAILED_PASS_WAIT_MS));
      deps.log?.warn({ err, sweep_id: id }, 'sweep step failed to advance; retried in 5 s');
    }
  }
  return running;
}

/** The running sweeps (of this driver's last passes) whose steps wait for fee money an operator must add. */
export function sweepsWaitingForFeeMoney(deps: SweepEngineDeps): FeeMoneyWait[] {
  return [...stateOf(deps).feeMoney.values()];
}

/**
 * Drives the running sweeps until none is left or `timeoutMs` passes; answers how many are still running.
 * `stopWhenOnlyFeeMoney`: stop as soon as every running sweep waits for fee money an operator must add (waiting longer
 * changes nothing; `sweepsWaitingForFeeMoney` names the wallets).
 */
export async function driveSweeps(
  deps: SweepEngineDeps,
  o: { timeoutMs: number; tick?: () => Promise<void>; stopWhenOnlyFeeMoney?: boolean },
): Promise<number> {
  const deadline = Date.now() + o.timeoutMs;
  for (;;) {
    const running = await advanceRunningSweeps(deps);
    if (running === 0 || Date.now() > deadline) return running;
    if (o.stopWhenOnlyFeeMoney && stateOf(deps).feeMoney.size === running) return running;
    if (o.tick) await o.tick();
    await new Promise((r) => setTimeout(r, deps.pollMs));
  }
}
