import { describe, expect, it } from 'vitest';
import { readRecords } from '../../scripts/sim/results-file.js';

// The record of issue 20's 1,000-seed run (docs/simulation.md, "The 1,000-seed run"), as the runner appended it: every
// seed 1–1000 once, each passed with no violation, all drawn with the same options on all four networks, and no record
// on a commit with uncommitted changes. A record edited by hand, a seed missing or run twice, a failure kept in, or a
// seed drawn with other options fails this.
const FILE = 'docs/sim-runs/2026-11-25-702d92c.jsonl';

describe('the recorded 1,000-seed run', () => {
  it('holds seeds 1–1000 once each, all passed with zero violations, on one set of options', () => {
    const { records, skipped } = readRecords(FILE);
    expect(skipped).toBe(0);
    expect(records.map((r) => r.seed).sort((a, b) => a - b)).toEqual(Array.from({ length: 1000 }, (_, i) => i + 1));
    expect(records.filter((r) => !r.ok || r.violations.length > 0).map((r) => r.seed)).toEqual([]);
    const configs = new Set(records.map((r) => JSON.stringify(r.config)));
    expect([...configs]).toHaveLength(1);
    expect(records[0]!.config.networks).toBe('ethereum,bsc,solana,tron');
    expect(records.filter((r) => !/^[0-9a-f]{7,40}$/.test(r.commit)).map((r) => `${r.seed}:${r.commit}`)).toEqual([]);
    // Every fault kind of the issue was injected, and many times.
    const byKind = new Map<string, number>();
    for (const r of records) for (const [k, n] of Object.entries(r.faults)) byKind.set(k, (byKind.get(k) ?? 0) + n);
    for (const kind of [
      'rpc',
      'reorg',
      'postgres.restart',
      'redis.restart',
      'solana.drop',
      'solana.blockhash-expiry',
      'kill:api',
      'kill:worker',
      'kill:watcher-a',
      'kill:watcher-b',
    ])
      expect(byKind.get(kind) ?? 0, kind).toBeGreaterThan(100);
    for (const fp of ['after_sign', 'after_broadcast', 'after_receipt', 'after_burnt_fee'])
      expect(byKind.get(`failpoint:outbound:${fp}`) ?? 0, fp).toBeGreaterThan(100);
  });
});
