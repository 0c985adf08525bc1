import type { ChainRegistry } from '../../chains/chain-registry.js';
import type { Db } from '../db/database.js';
import type { Logger } from '../logger.js';
import { incompleteness, reconcile } from './reconcile.js';

/**
 * The worker role's scheduled reconcile: at every slot boundary (a multiple of `intervalMs` since the epoch, the same
 * instants in every worker process), the slot claimed per chain and one run stored between the workers
 * (reconcile's `scheduled`); the drift gauge set; differences logged as errors.
 */
export function startReconcileJob(deps: {
  db: Db;
  adapters: ChainRegistry;
  intervalMs: number;
  log: Pick<Logger, 'info' | 'warn' | 'error'>;
}): {
  stop(): Promise<void>;
} {
  let running: Promise<void> | null = null;
  const tick = (slot: bigint) => {
    if (running) return;
    running = (async () => {
      try {
        const report = await reconcile(deps, { scheduled: { slot } });
        for (const c of report.chains)
          for (const u of c.unexplainedNative ?? [])
            deps.log.error(
              {
                network: c.network,
                mode: c.mode,
                address: u.address,
                merchant_id: u.merchantId ?? undefined,
                entry_id: String(u.entryId),
                amount_base: u.amount.toString(),
                height: String(c.height),
              },
              'unexplained native movement: a native balance the journal does not explain',
            );
        for (const c of report.chains)
          for (const d of c.differences.filter((x) => x.failing))
            deps.log.error(
              {
                network: c.network,
                mode: c.mode,
                address: d.address,
                token: d.asset,
                merchant_id: d.merchantId ?? undefined,
                difference_base: d.difference.toString(),
                height: String(c.height),
              },
              'reconcile: ledger and chain differ',
            );
        // Another worker's run is the normal case (info); a chain left uncompared otherwise (its watcher behind or never
        // run, balances whose final state kept moving) is a gap in the proof an operator must see (warn).
        for (const c of report.chains)
          if (c.skipped && c.coordinated)
            deps.log.info({ network: c.network, mode: c.mode, reason: c.skipped }, 'reconcile: chain skipped');
          else for (const gap of incompleteness(c)) deps.log.warn({ network: c.network, mode: c.mode, gap }, 'reconcile: not compared');
        deps.log.info({ ok: report.ok, chains: report.chains.length }, 'reconcile run finished');
      } catch (e) {
        deps.log.error({ err: (e as Error).message }, 'reconcile run failed');
      } finally {
        running = null;
      }
    })();
  };
  // Each tick is armed for the next boundary, so the ticks neither drift nor depend on when the process started. A
  // process takes part only from the first boundary at least half an interval after its start: a worker started
  // seconds before a boundary does not reconcile at once (the slot is other workers', or waits one interval, as the
  // first run always did), and a short-lived process (a test's service) never runs one it did not ask for.
  let timer: NodeJS.Timeout | null = null;
  const earliest = Date.now() + deps.intervalMs / 2;
  const arm = () => {
    const next = Math.max(Math.floor(Date.now() / deps.intervalMs) + 1, Math.ceil(earliest / deps.intervalMs));
    timer = setTimeout(
      () => {
        arm();
        tick(BigInt(next));
      },
      next * deps.intervalMs - Date.now(),
    );
    timer.unref();
  };
  arm();
  return {
    async stop() {
      if (timer) clearTimeout(timer);
      timer = null;
      await running;
    },
  };
}
