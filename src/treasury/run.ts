import type { Mode, NetworkId } from '../../chains/vocabulary.js';
import { listSweeps, runningSweepIds } from '../ledger/treasury/sweeps.js';
import { planSweeps, type PlanFilter, type PlannerDeps, type SweepPlanReport } from './planner.js';
import { createSweeps, driveSweeps, sweepsWaitingForFeeMoney } from './runner.js';
import type { SweepEngineDeps } from './step-kind.js';

// One operator's sweep run (docs/treasury.md, "sweep run"): plan, persist the batches as sweeps, drive them and the
// sweeps an earlier run left running, and stop as soon as every sweep still running waits for fee money an operator
// must add (waiting changes nothing then). What the CLI shows is formatted there; this answers in base units.

export type SweepRows = Awaited<ReturnType<typeof listSweeps>>;

/** An operator wallet short of the native coin: what it holds and what the waiting sweeps or addresses need. */
export interface FeeMoneyNeed {
  network: NetworkId;
  mode: Mode;
  /** Which operator wallet it is, when it is one of the plan's (gas station, TRON resources account). */
  role: 'gas_station' | 'resources' | null;
  address: string;
  displayAddress: string;
  balance: bigint;
  needed: bigint;
  /** Running sweeps waiting for it. */
  sweepIds: string[];
  /** Addresses the plan left waiting for it (no sweep created for them). */
  waitingAddresses: number;
}

export interface SweepRunResult {
  report: SweepPlanReport;
  created: SweepRows;
  resumed: SweepRows;
  stillRunning: number;
  /** Wallets short of fee money; non-empty: sweeps or addresses wait for an operator to fund them. */
  feeMoney: FeeMoneyNeed[];
}

export async function runSweeps(
  engine: SweepEngineDeps,
  planner: PlannerDeps,
  filter: PlanFilter,
  o: { timeoutMs: number },
): Promise<SweepRunResult> {
  // Sweeps a crashed or timed-out run left running are driven to their end too (they resume from the tables).
  const resumedIds = new Set(await runningSweepIds(engine.db));
  const report = await planSweeps(planner, filter);
  const createdRows = await createSweeps(engine.db, report.batches);
  const stillRunning = await driveSweeps(engine, { timeoutMs: o.timeoutMs, stopWhenOnlyFeeMoney: true });
  const ids = new Set(createdRows.map((s) => s.id));
  const all = await listSweeps(engine.db, { limit: 1000 });
  const created = all.filter((s) => ids.has(s.id));
  const resumed = all.filter((s) => resumedIds.has(s.id));
  const runningNow = new Set(all.filter((s) => s.status === 'running').map((s) => s.id));
  return { report, created, resumed, stillRunning, feeMoney: feeMoneyNeeds(engine, report, runningNow) };
}

/** The wallets short of fee money: those the plan's waiting addresses need, and those running sweeps wait for. */
function feeMoneyNeeds(engine: SweepEngineDeps, report: SweepPlanReport, running: Set<string>): FeeMoneyNeed[] {
  const out = new Map<string, FeeMoneyNeed>();
  const key = (n: string, m: string, a: string) => `${n}/${m}/${a}`;
  const roleOf = (n: NetworkId, m: Mode, a: string) =>
    report.operatorWallets.find((w) => w.network === n && w.mode === m && w.address === a)?.role ?? null;
  for (const w of report.operatorWallets) {
    if (w.shortfall <= 0n || w.balance === null) continue;
    const waitingAddresses = report.skipped.filter(
      (s) => s.network === w.network && s.mode === w.mode && s.waitsFor?.wallet === w.address,
    ).length;
    if (waitingAddresses === 0) continue; // planned batches will find out for themselves (their steps wait, below)
    out.set(key(w.network, w.mode, w.address), {
      network: w.network,
      mode: w.mode,
      role: w.role,
      address: w.address,
      displayAddress: w.displayAddress,
      balance: w.balance,
      needed: w.needed,
      sweepIds: [],
      waitingAddresses,
    });
  }
  for (const f of sweepsWaitingForFeeMoney(engine)) {
    if (!running.has(f.sweepId)) continue;
    const adapter = engine.adapters.get(f.network, f.mode);
    const address = adapter?.normalizeAddress(f.address) ?? f.address;
    const k = key(f.network, f.mode, address);
    const had = out.get(k);
    if (had) {
      had.sweepIds.push(f.sweepId);
      if (f.needed > had.needed) had.needed = f.needed;
      continue;
    }
    out.set(k, {
      network: f.network,
      mode: f.mode,
      role: roleOf(f.network, f.mode, address),
      address,
      displayAddress: adapter?.displayAddress(address) ?? address,
      balance: f.balance,
      needed: f.needed,
      sweepIds: [f.sweepId],
      waitingAddresses: 0,
    });
  }
  return [...out.values()];
}
