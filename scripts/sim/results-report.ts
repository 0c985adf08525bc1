import { readRecords } from './results-file.js';
import { combineRecords, formatReport } from './run-report.js';

// `npm run sim -- --report FILE [--seeds N --seed S]`: the combined report of a results file (docs/simulation.md
// "Running 1,000+ seeds") without running a seed: what a run resumed across sessions has proven so far, for the docs
// and for an operator checking a run someone else made. Without a range, the range is the file's lowest seed to its
// highest, so a seed missing in between shows as not run.

/** Prints the report; answers the exit status: 1 when a seed of the range failed or the file holds none, else 0. */
export function reportResults(file: string, planned: number[] | undefined, say: (line: string) => void): number {
  const { records, skipped } = readRecords(file);
  if (records.length === 0) {
    say(`${file}: no seed results in it${skipped ? ` (${skipped} unreadable line(s))` : ''}`);
    return 1;
  }
  const seeds = records.map((r) => r.seed);
  const low = Math.min(...seeds);
  const high = Math.max(...seeds);
  const range = planned ?? Array.from({ length: high - low + 1 }, (_, i) => low + i);
  const c = records[0]!.config;
  say(`results: ${file}${skipped ? ` (${skipped} unreadable line(s) skipped)` : ''}`);
  say(
    `options: --active-seconds ${c.activeSeconds} --drain-seconds ${c.drainSeconds} --networks ${c.networks} ` +
      `--intensity ${c.intensity} --check-every ${c.checkEvery}`,
  );
  const report = combineRecords(range, records);
  for (const line of formatReport(report)) say(line);
  return report.failed.length > 0 ? 1 : 0;
}
