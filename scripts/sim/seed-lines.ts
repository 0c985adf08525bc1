import { formatPhases } from './phases.js';
import type { SeedResult } from './seed.js';

// The lines a finished seed prints (docs/simulation.md): its result, what the scenario's extras did, its phases, and
// when it failed, its violations and where its logs are. The sequential runner (cli.ts) and the parallel one
// (parallel.ts) print the same lines.

/** What a seed's lines need: a SeedResult without its event list (which a parallel shard does not send back). */
export type SeedSummary = Omit<SeedResult, 'events'>;

export function seedLines(r: SeedSummary, replayArgs: string): string[] {
  const kinds = r.faults
    .map((f) => (f.kind === 'kill' ? `kill:${f.params.role}` : f.kind === 'failpoint' ? `fp:${f.params.point}` : f.kind))
    .join(' ');
  const lines = [
    `seed ${r.seed}: ${r.ok ? 'ok  ' : 'FAIL'} ${(r.wallMs / 1000).toFixed(1)}s  sessions ${r.stats.sessions} refunds ${r.stats.refunds} ` +
      `deliveries ${r.stats.deliveries} process starts ${r.stats.starts}  faults [${kinds}]`,
    `    ${r.stats.extras}`,
    `    phases: ${formatPhases(r.phases)}`,
  ];
  if (!r.ok) {
    for (const v of r.violations.slice(0, 10)) lines.push(`    ${v.invariant}: ${v.message}${v.subject ? ` (${v.subject})` : ''}`);
    lines.push(`    replay: npm run sim -- --seed ${r.seed} ${replayArgs}`);
    lines.push(`    event log: ${r.eventsFile}   service log: ${r.logFile}`);
  }
  return lines;
}
