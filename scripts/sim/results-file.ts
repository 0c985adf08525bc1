import { execFileSync } from 'node:child_process';
import { appendFileSync, existsSync, readFileSync } from 'node:fs';
import type { RunConfig, SeedRecord } from './run-report.js';

// The results file of a long simulator run (`--results FILE`, `--resume FILE`; docs/simulation.md "Running 1,000+
// seeds"): JSONL, one SeedRecord per line, appended the moment a seed finishes, so a run killed halfway keeps every seed
// it finished. A last line cut short by a crash is skipped (that seed runs again on resume).

export function readRecords(file: string): { records: SeedRecord[]; skipped: number } {
  if (!existsSync(file)) return { records: [], skipped: 0 };
  const records: SeedRecord[] = [];
  let skipped = 0;
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (!line.trim()) continue;
    try {
      const r = JSON.parse(line) as SeedRecord;
      if (Number.isInteger(r.seed) && typeof r.ok === 'boolean' && r.config) records.push(r);
      else skipped++;
    } catch {
      skipped++;
    }
  }
  return { records, skipped };
}

export function appendRecord(file: string, r: SeedRecord): void {
  appendFileSync(file, `${JSON.stringify(r)}\n`);
}

/** A resumed run must draw the same seeds the same way: the options that decide a seed must match the file's. */
export function configMismatch(records: SeedRecord[], config: RunConfig): string | undefined {
  for (const r of records)
    for (const k of Object.keys(config) as Array<keyof RunConfig>)
      if (r.config[k] !== config[k]) return `seed ${r.seed} in the results file ran with ${k} ${r.config[k]}, this run has ${config[k]}`;
  return undefined;
}

/** The commit the run starts from (`-dirty` with uncommitted changes to tracked files); `unknown` outside git. */
export function currentCommit(cwd: string): string {
  try {
    const head = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd, encoding: 'utf8' }).trim();
    const dirty = execFileSync('git', ['status', '--porcelain', '--untracked-files=no'], { cwd, encoding: 'utf8' }).trim();
    return dirty ? `${head}-dirty` : head;
  } catch {
    return 'unknown';
  }
}
