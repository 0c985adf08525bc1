import type { Violation } from './contract.js';
import { formatPhases } from './phases.js';

// The results of a long simulator run (docs/simulation.md "Running 1,000+ seeds"): one record per seed, kept as a line
// of a JSONL results file as soon as the seed finishes (so a run stopped or cut short keeps what it did and can be
// resumed in another session), and the combined report made from those records: seeds passed and failed, the failing
// seeds' replay commands, the consecutive range that passed, faults by kind, the mean per phase, and which commit each
// seed ran on.

/** The options that decide what a seed does: a resumed run must use the same ones. */
export interface RunConfig {
  activeSeconds: string;
  drainSeconds: string;
  networks: string;
  intensity: string;
  checkEvery: string;
  /** `remote` (a separate signer process, the default) or `in-process` (--in-process-signer). */
  signer: 'remote' | 'in-process';
}

export interface SeedRecord {
  seed: number;
  ok: boolean;
  wallMs: number;
  phases: Record<string, number>;
  /** Faults injected, by kind (`kill:worker`, `failpoint:outbound:after_sign`, `reorg` …). */
  faults: Record<string, number>;
  /** The first violations (at most 20). */
  violations: Violation[];
  /** The shard (0-based) that ran it. */
  shard: number;
  /** `git rev-parse --short HEAD` of the tree the run started from, `-dirty` when it had uncommitted changes. */
  commit: string;
  finishedAt: string;
  /** The 1-minute load average when the seed finished. */
  load1: number;
  config: RunConfig;
  eventsFile: string;
  logFile: string;
}

export const replayCommand = (seed: number, c: RunConfig): string =>
  `npm run sim -- --seed ${seed} --active-seconds ${c.activeSeconds} --networks ${c.networks} --intensity ${c.intensity}`;

/** `1–3, 5, 7–8`: a sorted list of seeds as ranges. */
export function seedRanges(seeds: number[]): string {
  const sorted = [...new Set(seeds)].sort((a, b) => a - b);
  const parts: string[] = [];
  for (let i = 0; i < sorted.length; ) {
    let j = i;
    while (j + 1 < sorted.length && sorted[j + 1] === sorted[j]! + 1) j++;
    parts.push(i === j ? String(sorted[i]) : `${sorted[i]}–${sorted[j]}`);
    i = j + 1;
  }
  return parts.join(', ');
}

export interface CombinedReport {
  planned: number;
  run: number;
  passed: number;
  failed: SeedRecord[];
  /** Planned seeds with no record (not dealt: the deadline passed or the run was stopped). */
  notRun: number[];
  /** The longest run of planned seeds, from the first, that all passed (`count` 0: the first did not pass). */
  consecutive: { count: number; first?: number; last?: number };
  faultsByKind: Record<string, number>;
  /** Mean ms per phase over the seeds run. */
  phaseMeans: Record<string, number>;
  /** Seeds run on each commit. */
  commits: Record<string, number[]>;
  /** Records in the file for seeds outside the planned list (ignored). */
  outside: number;
  /** Sum of the seeds' own wall times, ms. */
  seedMs: number;
  load1: { min: number; max: number; mean: number } | undefined;
  /** The stretches of time the run's seeds ran in (runSpans): one per session of a run resumed across sessions. */
  spans: RunSpan[];
}

/** A stretch of time seeds ran in: from the start of its first seed to the end of its last, with no gap longer than SPAN_GAP_MS. */
export interface RunSpan {
  from: string;
  to: string;
  seeds: number;
  wallMs: number;
}

/** A pause in the records longer than this starts a new span (a run stopped and resumed later). */
export const SPAN_GAP_MS = 10 * 60_000;

/**
 * The spans of time the records were made in. A seed runs from `finishedAt − wallMs` to `finishedAt`; seeds whose
 * times overlap or follow within SPAN_GAP_MS belong to one span. A run resumed across sessions has one span per
 * session, and the sum of their wall times is the run's wall time (start-ups between the spans not counted).
 */
export function runSpans(records: readonly SeedRecord[]): RunSpan[] {
  const times = records
    .map((r) => {
      const end = Date.parse(r.finishedAt);
      return { start: end - r.wallMs, end };
    })
    .filter((t) => Number.isFinite(t.end))
    .sort((a, b) => a.start - b.start);
  const spans: Array<{ start: number; end: number; seeds: number }> = [];
  for (const t of times) {
    const last = spans.at(-1);
    if (last && t.start <= last.end + SPAN_GAP_MS) {
      last.end = Math.max(last.end, t.end);
      last.seeds++;
    } else spans.push({ ...t, seeds: 1 });
  }
  return spans.map((s) => ({
    from: new Date(s.start).toISOString(),
    to: new Date(s.end).toISOString(),
    seeds: s.seeds,
    wallMs: s.end - s.start,
  }));
}

export function combineRecords(planned: number[], records: SeedRecord[]): CombinedReport {
  const wanted = new Set(planned);
  const bySeed = new Map<number, SeedRecord>();
  for (const r of records) if (wanted.has(r.seed)) bySeed.set(r.seed, r);
  const mine = [...bySeed.values()];
  const consecutive: CombinedReport['consecutive'] = { count: 0 };
  for (const s of planned) {
    if (!bySeed.get(s)?.ok) break;
    consecutive.first ??= s;
    consecutive.last = s;
    consecutive.count++;
  }
  const faultsByKind: Record<string, number> = {};
  const phaseTotals: Record<string, number> = {};
  const commits: Record<string, number[]> = {};
  for (const r of mine) {
    for (const [k, n] of Object.entries(r.faults)) faultsByKind[k] = (faultsByKind[k] ?? 0) + n;
    for (const [k, ms] of Object.entries(r.phases)) phaseTotals[k] = (phaseTotals[k] ?? 0) + ms;
    (commits[r.commit] ??= []).push(r.seed);
  }
  const loads = mine.map((r) => r.load1);
  return {
    planned: planned.length,
    run: mine.length,
    passed: mine.filter((r) => r.ok).length,
    failed: mine.filter((r) => !r.ok).sort((a, b) => a.seed - b.seed),
    notRun: planned.filter((s) => !bySeed.has(s)),
    consecutive,
    faultsByKind,
    phaseMeans: Object.fromEntries(Object.entries(phaseTotals).map(([k, ms]) => [k, ms / Math.max(mine.length, 1)])),
    commits,
    outside: records.filter((r) => !wanted.has(r.seed)).length,
    seedMs: mine.reduce((t, r) => t + r.wallMs, 0),
    load1: loads.length
      ? { min: Math.min(...loads), max: Math.max(...loads), mean: loads.reduce((a, b) => a + b, 0) / loads.length }
      : undefined,
    spans: runSpans(mine),
  };
}

/** The combined report's lines (the session's own wall time and seed count are the caller's). */
export function formatReport(c: CombinedReport): string[] {
  const lines = [
    `seeds: ${c.run} of ${c.planned} run, ${c.passed} passed, ${c.failed.length} failed` +
      (c.failed.length ? ` (${c.failed.map((r) => r.seed).join(', ')})` : '') +
      (c.notRun.length ? `; not run: ${seedRanges(c.notRun)}` : ''),
    c.consecutive.count > 0
      ? `consecutive seeds passed: ${c.consecutive.count} (seeds ${c.consecutive.first}–${c.consecutive.last})`
      : 'consecutive seeds passed: 0 (the first seed did not pass)',
  ];
  for (const r of c.failed) {
    lines.push(`  seed ${r.seed} FAILED: ${r.violations.map((v) => v.invariant).join(', ') || '(no violation recorded)'}`);
    for (const v of r.violations.slice(0, 3)) lines.push(`      ${v.invariant}: ${v.message}${v.subject ? ` (${v.subject})` : ''}`);
    lines.push(`      replay: ${replayCommand(r.seed, r.config)}`);
    lines.push(`      event log: ${r.eventsFile}   service log: ${r.logFile}`);
  }
  if (c.run > 0) lines.push(`mean per seed: ${formatPhases(c.phaseMeans)}; sum of seed wall times ${(c.seedMs / 1000).toFixed(0)} s`);
  if (c.load1)
    lines.push(
      `load average (1 min) at each seed's end: min ${c.load1.min.toFixed(1)}, mean ${c.load1.mean.toFixed(1)}, max ${c.load1.max.toFixed(1)}`,
    );
  lines.push(
    `faults injected by kind: ${
      Object.entries(c.faultsByKind)
        .sort()
        .map(([k, n]) => `${k} ${n}`)
        .join(', ') || 'none'
    }`,
  );
  lines.push(
    `commits: ${Object.entries(c.commits)
      .map(([commit, seeds]) => `${commit} (seeds ${seedRanges(seeds)})`)
      .join('; ')}`,
  );
  if (c.spans.length) {
    const wall = c.spans.reduce((t, sp) => t + sp.wallMs, 0);
    lines.push(
      `wall time: ${(wall / 60_000).toFixed(1)} min in ${c.spans.length} span(s), ${(c.run / Math.max(wall / 60_000, 1e-9)).toFixed(2)} seeds per minute` +
        ` (${c.spans.map((sp) => `${sp.from.slice(0, 16).replace('T', ' ')}–${sp.to.slice(11, 16)} UTC: ${sp.seeds} seeds`).join('; ')})`,
    );
  }
  if (c.outside) lines.push(`(${c.outside} record(s) in the results file are for seeds outside this run's range: ignored)`);
  return lines;
}
