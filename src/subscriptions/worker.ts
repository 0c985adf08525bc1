import type { ChainRegistry } from '../../chains/chain-registry.js';
import type { TxSigner } from '../../chains/types.js';
import type { Db } from '../db/database.js';
import type { Logger } from '../logger.js';
import { pollApprovals } from './approval-poller.js';
import type { ChargeEngineDeps } from './charge-engine.js';
import { systemClock, type Clock } from '../domain/clock.js';
import { runSchedulerTick } from './scheduler.js';
import type { SubscriptionSettings } from '../domain/subscription-settings.js';
import { createWalletResolver } from './wallets.js';
import { startTickLoop, type TickLoop } from '../jobs/tick-loop.js';

// The worker role's subscription loop: approvals, due actions, charges in flight, every `intervalMs`. It is driven
// by the database alone (no Redis state), so any number of workers may run it side by side.

export interface SubscriptionWorkerOptions {
  db: Db;
  adapters: ChainRegistry;
  signer: TxSigner;
  settings: SubscriptionSettings;
  checkoutBaseUrl: string;
  intervalMs: number;
  clock?: Clock;
  /** Stuck-charge replacement (the payout settings PAYOUT_STUCK_AFTER_MS, PAYOUT_FEE_BUMP_PERCENT); defaults 180 s, 25 %. */
  stuckAfterMs?: number;
  feeBumpPercent?: number;
  /** The restore guard's first look back (OUTBOUND_WALLET_LOOKBACK_HOURS). */
  walletLookbackMs?: number;
  log?: Pick<Logger, 'info' | 'warn' | 'error'>;
}

export function subscriptionEngineDeps(o: Omit<SubscriptionWorkerOptions, 'intervalMs'>): ChargeEngineDeps {
  const walletResolver = createWalletResolver(o.db, o.adapters, o.signer);
  return {
    db: o.db,
    clock: o.clock ?? systemClock,
    settings: o.settings,
    checkoutBaseUrl: o.checkoutBaseUrl,
    adapters: o.adapters,
    signer: o.signer,
    walletResolver,
    stuckAfterMs: o.stuckAfterMs ?? 180_000,
    feeBumpPercent: o.feeBumpPercent ?? 25,
    ...(o.walletLookbackMs !== undefined ? { walletLookbackMs: o.walletLookbackMs } : {}),
    wallets: walletResolver.wallets,
    tokenDecimals: o.adapters.tokenDecimals,
    ...(o.log ? { log: o.log } : {}),
  };
}

export function startSubscriptionWorker(o: SubscriptionWorkerOptions): TickLoop {
  const deps = subscriptionEngineDeps(o);
  return startTickLoop({
    intervalMs: o.intervalMs,
    tick: async () => {
      await pollApprovals({ ...deps, walletResolver: deps.walletResolver });
      await runSchedulerTick(deps);
    },
    onError: (err) => o.log?.warn({ err }, 'subscription tick failed; retrying next interval'),
  });
}
