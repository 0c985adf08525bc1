import type { FastifyInstance } from 'fastify';
import type { TxSigner } from '../../chains/types.js';
import type { ChargeEngineDeps } from '../../src/subscriptions/charge-engine.js';
import { ManualClock } from '../../src/domain/clock.js';
import { registerAuthorizePage } from '../../src/subscriptions/page/plugin.js';
import { DEFAULT_SUBSCRIPTION_SETTINGS, type SubscriptionSettings } from '../../src/domain/subscription-settings.js';
import { subscriptionEngineDeps } from '../../src/subscriptions/worker.js';
import { CHECKOUT_BASE, startApiHarness, testServerDeps, type ApiHarness } from './api-harness.js';
import { SignedClient } from './signed-client.js';
import type { ChainRegistry } from '../../chains/chain-registry.js';

// The part every subscription fixture shares, whatever the chain: the API on a real server with the authorization
// page and a manual clock, one merchant with a signed client, and the engine's dependencies for driving the
// scheduler in-process. The chain fixtures (test/integration/subscriptions-*fixture.ts) add their node and wallets.

export interface SubscriptionApi {
  h: ApiHarness;
  clock: ManualClock;
  settings: SubscriptionSettings;
  deps: ChargeEngineDeps;
  base: string;
  client: SignedClient;
  merchantId: string;
  create(body: Record<string, unknown>): Promise<any>;
  /** Outbox event types of one aggregate (subscription), in the order written. */
  events(aggregateId: string): Promise<string[]>;
}

export async function serveSubscriptionApi(o: {
  adapters: ChainRegistry;
  signer: TxSigner;
  merchantName: string;
  start?: Date;
  settings?: Partial<SubscriptionSettings>;
}): Promise<SubscriptionApi> {
  const { adapters } = o;
  const clock = new ManualClock(o.start ?? new Date());
  const settings = { ...DEFAULT_SUBSCRIPTION_SETTINGS, ...o.settings };
  const h = await startApiHarness({});
  const deps = subscriptionEngineDeps({ db: h.t.db, adapters, signer: o.signer, settings, checkoutBaseUrl: CHECKOUT_BASE, clock });
  // The harness server has no page or clock; serve both from a second server on the same database.
  await h.app.close();
  const { buildServer } = await import('../../src/api/server.js');
  const app: FastifyInstance = await buildServer({
    ...testServerDeps({ db: h.t.db, redis: h.redis, box: h.box, redisPrefix: h.redisPrefix }),
    chains: adapters,
    subscriptions: { clock, settings },
    plugins: [
      (a) =>
        registerAuthorizePage(a, {
          db: h.t.db,
          adapters,
          walletResolver: deps.walletResolver,
          settings,
          clock,
          checkoutBaseUrl: CHECKOUT_BASE,
        }),
    ],
  });
  const base = await app.listen({ host: '127.0.0.1', port: 0 });
  Object.assign(h, { app, baseUrl: base });
  const m = await h.merchant(o.merchantName);
  const client = new SignedClient(base, m.test.creds);
  return {
    h,
    clock,
    settings,
    deps,
    base,
    client,
    merchantId: m.merchantId,
    async create(body) {
      const r = await client.post('/api/v1/subscriptions/create', body);
      if (r.status !== 200) throw new Error(`create: ${r.text}`);
      return r.json;
    },
    async events(aggregateId) {
      const rows = await h.t.db.selectFrom('outbox_events').select('type').where('aggregate_id', '=', aggregateId).orderBy('seq').execute();
      return rows.map((r) => r.type);
    },
  };
}
