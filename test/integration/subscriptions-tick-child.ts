// A scheduler process for the crash test: one tick at SUBS_NOW, SIGKILLed (like a power cut) right after the first
// charge's signed bytes were committed and before they were broadcast.
import { EvmChainAdapter } from '../../chains/evm/adapter.js';
import { createDb } from '../../src/db/database.js';
import { ManualClock } from '../../src/domain/clock.js';
import { runSchedulerTick } from '../../src/subscriptions/scheduler.js';
import { DEFAULT_SUBSCRIPTION_SETTINGS } from '../../src/domain/subscription-settings.js';
import { subscriptionEngineDeps } from '../../src/subscriptions/worker.js';
import { signer } from '../support/evm-tokens/scenario.js';
import { ChainRegistry } from '../../chains/registry.js';

const env = process.env as Record<string, string>;
const db = createDb(env.SUBS_DB_URL!, 4);
const adapter = new EvmChainAdapter({
  network: 'ethereum', mode: 'test', rpcUrl: env.SUBS_RPC_URL!, confirmation: { kind: 'depth', confirmations: 1 },
  tokens: [{ symbol: 'USDT', address: env.SUBS_USDT!, decimals: 6 }, { symbol: 'USDC', address: env.SUBS_USDC!, decimals: 6 }],
});
const deps = subscriptionEngineDeps({
  db, adapters: new ChainRegistry([adapter]), signer, settings: DEFAULT_SUBSCRIPTION_SETTINGS,
  checkoutBaseUrl: 'http://checkout.test/pay', clock: new ManualClock(new Date(Number(env.SUBS_NOW))),
});
deps.afterSign = () => process.kill(process.pid, 'SIGKILL');
await runSchedulerTick(deps, { chargeConcurrency: 1 });
process.stderr.write('tick finished without reaching a signed charge\n');
process.exit(3);
