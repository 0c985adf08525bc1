import { existsSync, lstatSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createPrng } from '../../scripts/sim/prng.js';
import { applyReplacements, buildMutantTree, findMutant, MUTANTS } from '../../scripts/sim/mutants.js';
import { buildSchedule } from '../../scripts/sim/schedule.js';
import { WATCHER_FAILPOINTS } from '../../src/watcher/failpoints.js';

// The simulator's deliberately broken builds (docs/simulation.md, "Broken builds it catches"): each mutant's anchors
// must still be in the code it breaks, exactly once, or the mutant would silently stop mutating anything.

const ROOT = join(import.meta.dirname, '..', '..');

describe('simulator mutants', () => {
  it('every mutant anchor is found exactly once in the current sources, and applying it changes them', () => {
    expect(MUTANTS.map((m) => m.name)).toEqual([
      'cursor-before-effects',
      'resign-without-attempt-check',
      'sweep-resign-without-attempt-check',
    ]);
    for (const m of MUTANTS) {
      for (const file of new Set(m.replacements.map((r) => r.file))) {
        const text = readFileSync(join(ROOT, file), 'utf8');
        const mutated = applyReplacements(
          file,
          text,
          m.replacements.filter((r) => r.file === file),
        );
        expect(mutated).not.toBe(text);
        for (const r of m.replacements.filter((x) => x.file === file)) expect(mutated).toContain(r.replace);
      }
    }
  });

  it('a missing or repeated anchor fails loudly; an unknown mutant name is refused', () => {
    expect(() => applyReplacements('f.ts', 'a b c', [{ file: 'f.ts', find: 'x', replace: 'y' }])).toThrow(/found 0 times/);
    expect(() => applyReplacements('f.ts', 'a a', [{ file: 'f.ts', find: 'a', replace: 'y' }])).toThrow(/found 2 times/);
    expect(applyReplacements('f.ts', 'a $& b', [{ file: 'f.ts', find: 'b', replace: '$&c' }])).toBe('a $& $&c');
    expect(() => findMutant('nope')).toThrow(/unknown mutant "nope"/);
  });

  it('builds a mutated copy of the project with node_modules linked, leaving the project untouched', () => {
    const m = findMutant('resign-without-attempt-check');
    const before = readFileSync(join(ROOT, 'src/ledger/outbound/attempt-store.ts'), 'utf8');
    const tree = buildMutantTree(ROOT, m);
    try {
      const copied = readFileSync(join(tree.dir, 'src/ledger/outbound/attempt-store.ts'), 'utf8');
      expect(copied).toContain("t.table === 'payout_attempts' ? [] :");
      expect(copied).toContain("if (t.table !== 'payout_attempts' && !(await attemptsAsSeen(");
      expect(copied).not.toBe(before);
      expect(readFileSync(join(ROOT, 'src/ledger/outbound/attempt-store.ts'), 'utf8')).toBe(before);
      expect(lstatSync(join(tree.dir, 'node_modules')).isSymbolicLink()).toBe(true);
      expect(existsSync(join(tree.dir, 'src/main.ts'))).toBe(true);
      expect(existsSync(join(tree.dir, 'docs/errors.md'))).toBe(true);
      expect(existsSync(join(tree.dir, 'test'))).toBe(false);
    } finally {
      tree.remove();
    }
    expect(existsSync(tree.dir)).toBe(false);
  });

  it("a failpoint fault arms the watchers at the watcher's crash point too, without changing the seed's draws", () => {
    const o = { activeMs: 15_000, networks: ['ethereum'], intensity: 1, confirmations: 3 };
    const failpoints = [1, 2, 3, 4, 5, 6, 7, 8].flatMap((seed) =>
      buildSchedule(createPrng(seed).fork('faults'), o).filter((f) => f.kind === 'failpoint'),
    );
    expect(failpoints.length).toBeGreaterThan(0);
    for (const f of failpoints) expect(f.params).toMatchObject({ role: 'worker', watchers: WATCHER_FAILPOINTS[0] });
    // Seeds 1 and 3 (the CI seeds) keep the outbound failpoints docs/simulation.md names for them.
    expect(buildSchedule(createPrng(1).fork('faults'), o).find((f) => f.kind === 'failpoint')?.params.point).toBe('outbound:after_sign');
    expect(buildSchedule(createPrng(3).fork('faults'), o).find((f) => f.kind === 'failpoint')?.params.point).toBe(
      'outbound:after_broadcast',
    );
  });
});
