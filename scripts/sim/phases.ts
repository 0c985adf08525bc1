// Where a seed's wall time goes (docs/simulation.md, "Throughput"): the runner marks the start of each phase of a seed
// (setup, roles, active, drain, invariants, teardown); each mark ends the phase before it. The seed's event log gets one
// `phase` event per finished phase with its duration, and the run's summary adds them up across seeds.

export const PHASES = ['setup', 'roles', 'active', 'drain', 'invariants', 'teardown'] as const;
export type PhaseName = (typeof PHASES)[number];

export interface PhaseClock {
  /** Ends the running phase (if any) and starts `name`. */
  mark(name: PhaseName): void;
  /** Ends the running phase; returns every finished phase's duration in ms. */
  end(): Record<string, number>;
}

export function phaseClock(onPhase: (name: PhaseName, ms: number) => void, now: () => number = Date.now): PhaseClock {
  const done: Record<string, number> = {};
  const current: { name?: PhaseName; since: number } = { since: now() };
  const close = () => {
    if (!current.name) return;
    const ms = now() - current.since;
    done[current.name] = (done[current.name] ?? 0) + ms;
    onPhase(current.name, ms);
    current.name = undefined;
  };
  return {
    mark(name) {
      close();
      current.name = name;
      current.since = now();
    },
    end() {
      close();
      return { ...done };
    },
  };
}

/** Adds one seed's phases to the run's totals. */
export function addPhases(total: Record<string, number>, seed: Record<string, number>): void {
  for (const [k, ms] of Object.entries(seed)) total[k] = (total[k] ?? 0) + ms;
}

/** `setup 2.1s roles 6.3s …` (seconds, in phase order), for a seed's line or the run's mean per seed (`divide`). */
export function formatPhases(phases: Record<string, number>, divide = 1): string {
  return PHASES.filter((p) => phases[p] !== undefined)
    .map((p) => `${p} ${(phases[p]! / divide / 1000).toFixed(1)}s`)
    .join(' ');
}
