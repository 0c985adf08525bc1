import type { Kysely } from 'kysely';
import type { ChainAdapter } from '../../chains/types.js';
import type { Database } from '../db/schema.js';
import { chainKey } from '../ledger/deposit-schema.js';
import { createChainAdapter } from './adapter-factory.js';
import type { WatcherSettings } from './config.js';
import { runAsLeader } from './leader-lock.js';
import { NetworkWatcher, type WatcherLogger } from './network-watcher.js';
import { sleep } from './backoff.js';
import { watcherMetricsHooks } from '../metrics/watcher.js';

export interface RunningWatchers {
  /** Adapters by chain key ("ethereum:live"), also used by the API (network selection) and payouts. */
  adapters: Map<string, ChainAdapter>;
  stop(): Promise<void>;
}

/** Adapters of every configured chain; verifies each token's on-chain decimals (throws on any mismatch). */
export async function createVerifiedAdapters(settings: WatcherSettings): Promise<Map<string, ChainAdapter>> {
  const adapters = new Map<string, ChainAdapter>();
  for (const s of settings.chains) {
    const adapter = createChainAdapter(s);
    await adapter.verifyTokens();
    adapters.set(chainKey(s), adapter);
  }
  return adapters;
}

/**
 * Starts one watcher per configured chain, each as leader or standby of its advisory lock. A watcher that fails
 * with a non-transient error (deep reorg, fenced cursor) steps down, waits, and competes for the lock again.
 */
export async function startChainWatchers(deps: {
  db: Kysely<Database>;
  settings: WatcherSettings;
  log: WatcherLogger;
  adapters?: Map<string, ChainAdapter>;
}): Promise<RunningWatchers> {
  const adapters = deps.adapters ?? (await createVerifiedAdapters(deps.settings));
  const stop = new AbortController();
  const loops: Promise<void>[] = [];
  for (const s of deps.settings.chains) {
    const key = chainKey(s);
    const adapter = adapters.get(key);
    if (!adapter) continue;
    const loop = async () => {
      while (!stop.signal.aborted) {
        try {
          await runAsLeader(
            deps.db,
            key,
            stop.signal,
            (lost) =>
              new NetworkWatcher({
                db: deps.db,
                adapter,
                pollIntervalMs: s.pollIntervalMs,
                addressRetentionDays: deps.settings.addressRetentionDays,
                startHeight: s.startBlock,
                log: deps.log,
                ...watcherMetricsHooks(s),
              }).run(lost),
            {
              retryMs: deps.settings.standbyRetryMs,
              onWaiting: () => deps.log.info({ chain: key }, 'watcher standby: another process holds the lock'),
              onAcquired: () => deps.log.info({ chain: key }, 'watcher active'),
            },
          );
        } catch (e) {
          deps.log.error({ chain: key, err: (e as Error).message }, 'watcher stopped with an error; retrying');
          await sleep(5000, stop.signal);
        }
      }
    };
    loops.push(loop());
  }
  return {
    adapters,
    async stop() {
      stop.abort();
      await Promise.allSettled(loops);
    },
  };
}

/** For setTokenDecimalsResolver (src/ledger/sessions.ts): the registry's decimals of a session's network and token. */
export function tokenDecimalsResolver(adapters: ReadonlyMap<string, ChainAdapter>) {
  return (s: { network: string | null; mode: string; token: string | null }): number | undefined =>
    s.network && s.token ? adapters.get(`${s.network}:${s.mode}`)?.tokens.find((t) => t.symbol === s.token)?.decimals : undefined;
}
