import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServiceHarness, type ServiceHarness } from '../support/service-harness.js';
import { reconcile } from '../../src/reconcile/reconcile.js';
import { watcherFinalHeight } from '../../src/ledger/journal/reconcile-runs.js';

// The scheduled reconcile claims its slot and takes a per-chain PostgreSQL advisory lock (docs/journal.md, "Reconcile"):
// several workers starting it for the same slot never run it concurrently and store one run between them; the CLI's
// run waits for the lock and always runs. (Schedulers at different moments: reconcile-scheduled-slot.test.ts.)

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
  it('two scheduled runs of one slot store one run; a CLI run still runs; the same slot again is skipped, the next one runs', async () => {
    await h.until(
      async () => ((await watcherFinalHeight(h.t.db, { network: 'ethereum', mode: 'test' })) !== null ? true : undefined),
      60_000,
    );
    const deps = { db: h.t.db, adapters: h.service.adapters };
    const slot = (n: bigint) => ({ network: 'ethereum', mode: 'test' as const, scheduled: { slot: n } });
    const scheduled = slot(7n);
    const [a, b] = await Promise.all([reconcile(deps, scheduled), reconcile(deps, scheduled)]);
    const chains = [a.chains[0]!, b.chains[0]!];
    expect(chains.filter((c) => c.runId !== undefined)).toHaveLength(1);
    const other = chains.find((c) => c.runId === undefined)!;
    expect(other.skipped).toBe('another worker took this slot');
    expect(other.coordinated).toBe(true);
    expect(await runs()).toBe(1);

    // The CLI's run (not scheduled) waits for the lock and runs.
    const cli = await reconcile(deps, { network: 'ethereum', mode: 'test' });
    expect(cli.chains[0]!.runId).toBeDefined();
    expect(await runs()).toBe(2);
    // The same slot again (a worker whose tick came late): skipped, nothing stored; the next slot runs.
    const again = await reconcile(deps, scheduled);
    expect(again.chains[0]!.skipped).toBe('another worker took this slot');
    expect(await runs()).toBe(2);
    expect((await reconcile(deps, slot(8n))).chains[0]!.runId).toBeDefined();
    expect(await runs()).toBe(3);
  });
});
