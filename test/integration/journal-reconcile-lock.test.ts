import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServiceHarness, type ServiceHarness } from '../support/service-harness.js';
import { reconcile } from '../../src/reconcile/reconcile.js';
import { watcherFinalHeight } from '../../src/ledger/reconcile-runs.js';

// The scheduled reconcile takes a per-chain PostgreSQL advisory lock (docs/journal.md, "Reconcile"): several workers
// starting it at the same moment never run it concurrently and store one run between them; the CLI's run waits for
// the lock and always runs.

let h: ServiceHarness;
beforeAll(async () => {
  h = await startServiceHarness();
}, 120_000);
afterAll(async () => {
  await h?.close();
});

const runs = async () =>
  (await h.t.db.selectFrom('reconcile_runs').select('id').where('network', '=', 'ethereum').where('mode', '=', 'test').execute()).length;

describe('reconcile lock', () => {
  it('two scheduled runs started together store one run; a CLI run still runs; a scheduled one within the interval is skipped', async () => {
    await h.until(
      async () => ((await watcherFinalHeight(h.t.db, { network: 'ethereum', mode: 'test' })) !== null ? true : undefined),
      60_000,
    );
    const deps = { db: h.t.db, adapters: h.service.adapters };
    const scheduled = { network: 'ethereum', mode: 'test' as const, scheduled: { minIntervalMs: 600_000 } };
    const [a, b] = await Promise.all([reconcile(deps, scheduled), reconcile(deps, scheduled)]);
    const chains = [a.chains[0]!, b.chains[0]!];
    expect(chains.filter((c) => c.runId !== undefined)).toHaveLength(1);
    const other = chains.find((c) => c.runId === undefined)!;
    expect(other.skipped).toMatch(/another worker is reconciling this chain|reconciled by another worker within the interval/);
    expect(await runs()).toBe(1);

    // The CLI's run (not scheduled) waits for the lock and runs.
    const cli = await reconcile(deps, { network: 'ethereum', mode: 'test' });
    expect(cli.chains[0]!.runId).toBeDefined();
    expect(await runs()).toBe(2);
    // A scheduled run within the interval of the last stored one: skipped, nothing stored.
    const later = await reconcile(deps, scheduled);
    expect(later.chains[0]!.skipped).toBe('reconciled by another worker within the interval');
    expect(await runs()).toBe(2);
  });
});
