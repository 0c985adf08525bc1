import type { Kysely } from 'kysely';
import { ChainRegistry, type RegisteredChain } from '../../chains/chain-registry.js';
import type { Database } from '../db/schema.js';
import { chainKey } from '../ledger/core/chain-ref.js';
import { createChainAdapter, type RpcHooks } from './adapter-factory.js';
import type { WatcherSettings } from './config.js';
import { runAsLeader } from './leader-lock.js';
import { NetworkWatcher, type WatcherLogger } from './network-watcher.js';
import { sleep } from './backoff.js';
import { watcherMetricsHooks } from '../metrics/watcher.js';

export interface RunningWatchers {
  /** The configured chains, also used by the API (network selection) and payouts. */
  adapters: ChainRegistry;
  stop(): Promise<void>;
}

/**
 * The registry of every configured chain; verifies each token's on-chain decimals (throws on any mismatch). `env`
 * holds the family-only settings of TRON and Solana (src/watcher/adapter-factory.ts).
 */
export async function createVerifiedAdapters(
  settings: WatcherSettings,
  env: Record<string, string | undefined>,
  hooks: Partial<RpcHooks> = {},
): Promise<ChainRegistry> {
  const chains: RegisteredChain[] = [];
  for (const s of settings.chains) {
    const adapter = createChainAdapter(s, env, hooks);
    await adapter.verifyTokens();
    chains.push({
      adapter,
      // Solana's finality is a commitment level: the hosted page shows no "n of N" there.
      confirmations: s.confirmation.kind === 'depth' && s.family !== 'solana' ? s.confirmation.confirmations : null,
      ...(s.chainId !== undefined ? { chainId: s.chainId } : {}),
      explorerTxUrl: s.explorerTxUrl,
    });
  }
  return new ChainRegistry(chains);
}

/**
 * Starts one watcher per configured chain, each as leader or standby of its advisory lock. A watcher that fails
 * with a non-transient error (deep reorg, fenced cursor) steps down, waits, and competes for the lock again.
 */
export async function startChainWatchers(deps: {
  db: Kysely<Database>;
  settings: WatcherSettings;
  log: WatcherLogger;
  /** Absent: built from `settings` and `env`. */
  adapters?: ChainRegistry;
  env?: Record<string, string | undefined>;
}): Promise<RunningWatchers> {
  const adapters = deps.adapters ?? (await createVerifiedAdapters(deps.settings, deps.env ?? {}));
  const stop = new AbortController();
  const loops: Promise<void>[] = [];
  for (const s of deps.settings.chains) {
    const key = chainKey(s);
    const adapter = adapters.get(s.network, s.mode);
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
