import type { Invariant, InvariantContext, Violation } from './contract.js';

// Runs every invariant (scripts/sim/invariants/, allInvariants) over one seed's context; a checker that throws is a
// violation of its own (an invariant that cannot be checked is not a pass).
export async function checkAll(invariants: Record<string, Invariant>, ctx: InvariantContext): Promise<Violation[]> {
  const out: Violation[] = [];
  for (const [name, inv] of Object.entries(invariants)) {
    try {
      out.push(...(await inv(ctx)));
    } catch (err) {
      out.push({ invariant: name, message: `the checker failed: ${(err as Error).message}` });
    }
  }
  return out;
}
