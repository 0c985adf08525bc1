import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { createMerchant } from '../../src/ledger/merchants.js';
import { start, type RunningService } from '../../src/main.js';
import { createLogger } from '../../src/logger.js';
import { SecretBox } from '../../src/security/secret-box.js';
import { startAnvil, type AnvilNode } from '../support/anvil.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';
import { REDIS_URL } from '../support/env.js';
import { TEST_MNEMONIC, deployTokens, fund, payFrom, walletAt, type DeployedToken } from '../support/evm-tokens/scenario.js';
import { SignedClient } from '../support/signed-client.js';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.js';
import { TEST_MASTER_KEY } from '../support/api-harness.js';

// The whole service as main.ts starts it (all roles in one process) against an Anvil node standing in for Ethereum:
// create a session over signed HTTP, select the network as the hosted page does, pay on chain, see it paid.
let t: TestDatabase;
let node: AnvilNode;
let usdt: DeployedToken;
let service: RunningService;
let shop: SignedClient;
let base: string;
let receiver: WebhookReceiver;
const prefix = `sp_e2e_${randomBytes(4).toString('hex')}`;

beforeAll(async () => {
  [t, node] = await Promise.all([createTestDatabase(), startAnvil({ chainId: 31337 })]);
  [usdt] = (await deployTokens(node, [{ symbol: 'USDT', shape: 'tether', decimals: 6 }])) as [DeployedToken];
  const env = {
    MASTER_KEY: TEST_MASTER_KEY,
    DATABASE_URL: t.url,
    REDIS_URL,
    REDIS_KEY_PREFIX: prefix,
    PORT: '0',
    HOST: '127.0.0.1',
    LOG_LEVEL: (process.env.E2E_LOG ?? 'silent') as 'silent',
    HD_MNEMONIC: TEST_MNEMONIC,
    CHAIN_ETHEREUM_TEST_RPC_URL: node.url,
    CHAIN_ETHEREUM_TEST_CHAIN_ID: '31337',
    CHAIN_ETHEREUM_TEST_CONFIRMATIONS: '3',
    CHAIN_ETHEREUM_TEST_POLL_INTERVAL_MS: '200',
    CHAIN_ETHEREUM_TEST_USDT_CONTRACT: usdt.address,
    CHAIN_ETHEREUM_TEST_USDT_DECIMALS: '6',
  };
  service = await start(loadConfig(env), env, createLogger(env.LOG_LEVEL));
  base = `http://127.0.0.1:${service.port}`;
  receiver = await startWebhookReceiver();
  const m = await createMerchant(t.db, new SecretBox(TEST_MASTER_KEY), { name: 'E2E shop', webhookUrl: receiver.url });
  receiver.secrets.push(m.webhookSecret);
  shop = new SignedClient(base, { key: m.testKey.key, secret: m.testKey.secret });
});

afterAll(async () => {
  await service?.stop();
  await receiver?.close();
  await node?.stop();
  const redis = new Redis(REDIS_URL);
  const keys = await redis.keys(`${prefix}:*`);
  if (keys.length) await redis.del(...keys);
  redis.disconnect();
  await t?.destroy();
});

async function until<T>(f: () => Promise<T | undefined>, ms = 30_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await f();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 200));
  }
}

describe('the service, end to end on a local chain', () => {
  it('takes a USD session to paid through selection, an on-chain USDT transfer and confirmations', async () => {
    const created = await shop.post('/api/v1/checkout/sessions/create', { amount: '12.34', currency: 'USD', order_id: 'e2e-1' });
    expect(created.status).toBe(200);
    const session = created.json;

    const sel = await fetch(`${base}/checkout/sessions/${session.id}/select`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ network: 'ethereum', token: 'USDT' }),
    });
    expect(sel.status).toBe(200);
    const selection = (await sel.json()) as Record<string, string>;
    expect(selection).toMatchObject({ network: 'ethereum', token: 'USDT', amount_due: '12.34', amount_due_base: '12340000' });
    const address = selection.deposit_address!;
    expect(address).toMatch(/^0x[0-9a-fA-F]{40}$/);

    const payer = walletAt(5, node.provider);
    await fund(usdt, payer.address, 100_000_000n);
    await payFrom(payer, usdt, address, 12_340_000n);
    // Seen but not yet confirmed: still unpaid.
    await new Promise((r) => setTimeout(r, 800));
    expect((await shop.get(`/api/v1/checkout/sessions/${session.id}`)).json.payment_status).toBe('unpaid');

    await node.mine(3);
    const paid = await until(async () => {
      const r = await shop.get(`/api/v1/checkout/sessions/${session.id}`);
      return r.json.payment_status === 'paid' ? r.json : undefined;
    });
    expect(paid).toMatchObject({ id: session.id, status: 'paid', amount_total: '12.34' });
    const events = await t.db.selectFrom('outbox_events').select(['type', 'payload']).where('aggregate_id', '=', session.id).execute();
    expect(events.map((e) => e.type)).toEqual(['payment.completed']);
    expect((events[0]!.payload as any).data.object).toMatchObject({ status: 'completed', currency: 'USDT', session_id: session.id, order_id: 'e2e-1' });

    // The merchant hears about it: signed, with the outbox's event id and body.
    const delivered = await until(async () => receiver.received.find((r) => r.eventType === 'payment.completed'));
    expect(delivered.problems).toEqual([]);
    expect(delivered.eventId).toBe((events[0]!.payload as any).id);
    expect(JSON.parse(delivered.body)).toEqual(events[0]!.payload);
  });
});
