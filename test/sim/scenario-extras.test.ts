import { describe, expect, it } from 'vitest';
import { createPrng } from '../../scripts/sim/prng.js';
import { buildScenario } from '../../scripts/sim/scenario.js';
import { planExtras } from '../../scripts/sim/scenario-extras.js';

// The scenario's subscriptions, sweeps and canceled sessions (scripts/sim/scenario-extras.ts) are drawn from forks of
// the seed's scenario stream: the same seed gives the same plan, every seed has a failing-then-recovering renewal and
// a canceled session paid anyway, and the sessions, refunds and schedule a seed drew before these parts existed are
// unchanged (so the CI seeds keep their documented scenario).

const o = { activeMs: 20_000, networks: ['ethereum', 'bsc'], merchants: 2 };

describe('simulator scenario extras', () => {
  it('same seed, same plan; another seed, another plan', () => {
    expect(planExtras(createPrng(7).fork('scenario'), o)).toEqual(planExtras(createPrng(7).fork('scenario'), o));
    const plans = [1, 2, 3, 4, 5].map((s) => JSON.stringify(planExtras(createPrng(s).fork('scenario'), o)));
    expect(new Set(plans).size).toBe(5);
  });

  it('every seed has a revoked or lowered allowance, a canceled session paid anyway, and a sweep interval', () => {
    for (let seed = 1; seed <= 50; seed++) {
      const p = planExtras(createPrng(seed).fork('scenario'), o);
      expect(p.subscriptions.length).toBeGreaterThanOrEqual(1);
      expect(p.subscriptions.some((s) => s.allowance === 'revoke' || s.allowance === 'lower')).toBe(true);
      expect(p.cancels.some((c) => c.paidAnyway)).toBe(true);
      expect([2, 3, 5]).toContain(p.sweeps.intervalSeconds);
      for (const s of [...p.subscriptions, ...p.cancels]) {
        expect(['ethereum', 'bsc']).toContain(s.network);
        expect(s.merchant).toBeLessThan(o.merchants);
        expect(s.at).toBeLessThanOrEqual(o.activeMs);
      }
    }
  });

  it('leaves the sessions and refunds a seed draws as they were', () => {
    const before = buildScenario(createPrng(3).fork('scenario'), o);
    const prng = createPrng(3);
    planExtras(prng.fork('scenario'), o);
    expect(buildScenario(prng.fork('scenario'), o)).toEqual(before);
  });

  it('draws subscriptions on Solana alone (failing and recovering delegations there too), no canceled sessions', () => {
    for (let seed = 1; seed <= 20; seed++) {
      const p = planExtras(createPrng(seed).fork('scenario'), { ...o, networks: ['solana'] });
      expect(p.subscriptions.length).toBeGreaterThanOrEqual(1);
      expect(p.subscriptions.every((s) => s.network === 'solana')).toBe(true);
      expect(p.subscriptions.some((s) => s.allowance !== 'keep')).toBe(true);
      expect(p.cancels).toEqual([]);
    }
    // Seed 2 draws a lowered and a revoked delegation (the seed that found Solana charges named by instruction index).
    expect(planExtras(createPrng(2).fork('scenario'), { ...o, networks: ['solana'] }).subscriptions.map((s) => s.allowance)).toEqual([
      'lower',
      'revoke',
    ]);
  });

  it('draws subscriptions on TRON and Solana (failing and recovering allowances there too), canceled sessions on EVM only', () => {
    for (let seed = 1; seed <= 20; seed++) {
      const p = planExtras(createPrng(seed).fork('scenario'), { ...o, networks: ['solana', 'tron'] });
      expect(p.subscriptions.length).toBeGreaterThanOrEqual(1);
      expect(p.subscriptions.every((s) => s.network === 'tron' || s.network === 'solana')).toBe(true);
      expect(p.subscriptions.some((s) => s.allowance !== 'keep')).toBe(true);
      expect(p.cancels).toEqual([]);
    }
    const networks = new Set<string>();
    for (let seed = 1; seed <= 50; seed++)
      for (const s of planExtras(createPrng(seed).fork('scenario'), { ...o, networks: ['ethereum', 'bsc', 'solana', 'tron'] })
        .subscriptions)
        networks.add(s.network);
    expect([...networks].sort()).toEqual(['bsc', 'ethereum', 'solana', 'tron']);
  });

  it("draws TRON's stake per seed (every kind appears) without changing the sweep interval a seed drew before it", () => {
    const energy = new Set<string>();
    for (let seed = 1; seed <= 30; seed++) {
      const sweeps = planExtras(createPrng(seed).fork('scenario'), o).sweeps;
      energy.add(sweeps.tronEnergy);
      // The interval is the stream's first draw, as before the stake was drawn after it.
      expect(sweeps.intervalSeconds).toBe(createPrng(seed).fork('scenario').fork('sweeps').pick([2, 3, 5]));
    }
    expect([...energy].sort()).toEqual(['ample', 'none', 'short']);
  });

  it("draws the second driver (the CLI's sweep run beside the worker) in some seeds, 1–3 runs within the active phase", () => {
    const drivers = [];
    for (let seed = 1; seed <= 30; seed++) drivers.push(planExtras(createPrng(seed).fork('scenario'), o).sweeps.secondDriver);
    const drawn = drivers.filter((d) => d !== null);
    expect(drawn.length).toBeGreaterThan(10);
    expect(drawn.length).toBeLessThan(30);
    for (const d of drawn) {
      expect(d!.at).toBeGreaterThanOrEqual(0);
      expect(d!.at).toBeLessThanOrEqual(o.activeMs - 3000);
      expect([1, 2, 3]).toContain(d!.runs);
    }
    // CI seed 8 draws it: the CLI drives the worker's sweeps on Solana and TRON.
    const ci8 = planExtras(createPrng(8).fork('scenario'), { activeMs: 15_000, networks: ['ethereum', 'solana', 'tron'], merchants: 1 });
    expect(ci8.sweeps.secondDriver).not.toBeNull();
  });

  it('CI seed 8 on three networks pays sessions on Solana and TRON and stakes energy: both chains sweep, TRON by delegation', () => {
    const networks = ['ethereum', 'solana', 'tron'];
    const scenario = buildScenario(createPrng(8).fork('scenario'), { activeMs: 15_000, networks });
    const paid = scenario.sessions.filter((s) => s.payment === 'exact' || s.payment === 'over' || s.payment === 'partial');
    expect(new Set(paid.map((s) => s.network))).toEqual(new Set(['ethereum', 'solana', 'tron']));
    const p = planExtras(createPrng(8).fork('scenario'), { activeMs: 15_000, networks, merchants: scenario.merchants });
    expect(p.sweeps.tronEnergy).not.toBe('none');
  });
});
