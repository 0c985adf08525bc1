import type { Kysely } from 'kysely';
import type { Database } from '../../src/db/schema.js';
import { watcherFinalHeight } from '../../src/ledger/journal/reconcile-runs.js';
import { type ChainReconciliation, reconcileChain } from '../../src/reconcile/reconcile.js';

type Adapter = Parameters<typeof reconcileChain>[1];

/**
 * One reconcile, made once its pinned height (the lower of the watcher's committed final height and the chain's)
 * covers `height`. Reconciling inside the wait would book outside native funding as unexplained in an earlier run,
 * leaving the judged run no difference to report.
 */
export async function reconcileOnceCovering(
  db: Kysely<Database>,
  adapter: Adapter,
  height: bigint,
  until: <T>(f: () => Promise<T | undefined>, ms?: number) => Promise<T>,
): Promise<ChainReconciliation> {
  await until(async () => {
    const committed = await watcherFinalHeight(db, { network: adapter.network, mode: adapter.mode });
    const head = await adapter.getHead();
    return committed !== null && committed >= height && head.final >= height ? true : undefined;
  }, 60_000);
  return reconcileChain(db, adapter);
}

/**
 * For fixtures that drive their own watcher (no service running one): makes what landed final (`finalize`: mine
 * blocks, advance slots), lets the watcher commit it, then reconciles once.
 */
export async function reconcileAfterWatcher(
  db: Kysely<Database>,
  adapter: Adapter,
  watcher: { step(): Promise<{ caughtUp: boolean }> },
  finalize: () => unknown,
): Promise<ChainReconciliation> {
  await finalize();
  let caughtUp = false;
  for (let i = 0; i < 100 && !caughtUp; i++) caughtUp = (await watcher.step()).caughtUp;
  if (!caughtUp) throw new Error('the watcher did not catch up');
  return reconcileChain(db, adapter);
}
