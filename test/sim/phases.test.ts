import { describe, expect, it } from 'vitest';
import { addPhases, formatPhases, phaseClock } from '../../scripts/sim/phases.js';

// Where a seed's time goes (scripts/sim/phases.ts): each mark ends the phase before it, the durations add up per seed
// and across seeds. A hand-driven clock, so the figures are exact.

describe('simulator phase clock', () => {
  it('each mark ends the running phase; end() closes the last; a phase marked twice adds up', () => {
    const clock = { now: 1000 };
    const seen: Array<[string, number]> = [];
    const p = phaseClock(
      (name, ms) => seen.push([name, ms]),
      () => clock.now,
    );
    p.mark('setup');
    clock.now += 1500;
    p.mark('roles');
    clock.now += 4000;
    p.mark('active');
    clock.now += 15_000;
    p.mark('drain');
    clock.now += 700;
    p.mark('active');
    clock.now += 300;
    expect(p.end()).toEqual({ setup: 1500, roles: 4000, active: 15_300, drain: 700 });
    expect(seen).toEqual([
      ['setup', 1500],
      ['roles', 4000],
      ['active', 15_000],
      ['drain', 700],
      ['active', 300],
    ]);
  });

  it('adds seeds into totals and prints them in phase order, as means when divided', () => {
    const total: Record<string, number> = {};
    addPhases(total, { drain: 3000, setup: 1000 });
    addPhases(total, { setup: 2000, invariants: 500 });
    expect(total).toEqual({ setup: 3000, drain: 3000, invariants: 500 });
    expect(formatPhases(total)).toBe('setup 3.0s drain 3.0s invariants 0.5s');
    expect(formatPhases(total, 2)).toBe('setup 1.5s drain 1.5s invariants 0.3s');
  });
});
