// A scheduler process for the crash tests: ticks at SUBS_NOW until the failpoint that SP_FAILPOINTS names
// (src/outbound/failpoints.ts) SIGKILLs it, like a power cut, at its first charge that reaches it.
import { EvmChainAdapter } from '../../chains/evm/adapter.js';
import { createDb } from '../../src/db/database.js';
import { ManualClock } from '../../src/domain/clock.js';
import { runSchedulerTick } from '../../src/subscriptions/scheduler.js';
import { DEFAULT_SUBSCRIPTION_SETTINGS } from '../../src/domain/subscription-settings.js';
import { subscriptionEngineDeps } from '../../src/subscriptions/worker.js';
import { signer } from '../support/evm-tokens/scenario.js';
import { ChainRegistry } from '../../chains/chain-registry.js';

const env = process.env as Record<string, string>;
const db = createDb(env.SUBS_DB_URL!, 4);
const adapter = new EvmChainAdapter({
  network: 'ethereum',
  mode: 'test',
  rpcUrl: env.SUBS_RPC_URL!,
  confirmation: { kind: 'depth', confirmations: 1 },
  tokens: [
    { symbol: 'USDT', address: env.SUBS_USDT!, decimals: 6 },
    { symbol: 'USDC', address: env.SUBS_USDC!, decimals: 6 },
  ],
});
const deps = subscriptionEngineDeps({
  db,
  adapters: new ChainRegistry([adapter]),
  signer,
  settings: DEFAULT_SUBSCRIPTION_SETTINGS,
  checkoutBaseUrl: 'http://checkout.test/pay',
  clock: new ManualClock(new Date(Number(env.SUBS_NOW))),
});
for (let tick = 0; tick < 20; tick++) {
  await runSchedulerTick(deps, { chargeConcurrency: 1 });
  await new Promise((r) => setTimeout(r, 100));
}
process.stderr.write(`ticks finished without reaching ${env.SP_FAILPOINTS}\n`);
process.exit(3);
