import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { createLogger } from '../../src/logger.js';
import { start, type RunningService } from '../../src/main.js';
import { pauseSigner, resumeSigner } from '../../src/operations/signer.js';
import { TEST_MNEMONIC, fund } from '../support/evm-tokens/scenario.js';
import { approvedSubscription } from '../support/approved-subscription.js';
import { startServiceHarness, type HarnessMerchant, type ServiceHarness } from '../support/service-harness.js';

// The signer role end to end (docs/signer.md, issue 36): the service runs with NO key material (its workers, API and
// watcher ask the signer over SIGNER_SOCKET), a second process of the same code runs ROLES=signer with the seed. A
// refund is paid on Anvil through it: the engine asks, the signer reads the refund in the ledger, signs, and audits.
// Paused, the signer refuses and the payout waits (it neither fails nor is signed twice); resumed, it completes.

let h: ServiceHarness;
let signerProcess: RunningService;
let shop: HarnessMerchant;
let dir: string;
let miner: NodeJS.Timeout;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'sp-signer-'));
  const socket = join(dir, 'signer.sock');
  // The service first (it creates the database and the chain); the signer joins it with the seed alone.
  h = await startServiceHarness({ extraEnv: { SIGNER_SOCKET: socket, HD_MNEMONIC: '', SUBSCRIPTION_TICK_MS: '100' } });
  const env = { ...h.env, ROLES: 'signer', HD_MNEMONIC: TEST_MNEMONIC, SIGNER_SOCKET: socket, PORT: '0', METRICS_PORT: '0' };
  const config = loadConfig(env);
  signerProcess = await start(config, env, createLogger(config.LOG_LEVEL));
  shop = await h.newMerchant('Signer shop');
  miner = setInterval(() => void h.node.mine(1).catch(() => {}), 250);
}, 180_000);

afterAll(async () => {
  clearInterval(miner);
  await h?.close();
  await signerProcess?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('a refund paid through the signer role', () => {
  it('is signed by the signer (audited), while the service holds no key; paused it waits, resumed it completes', async () => {
    const paid = await h.paidSession(shop, { amount: '10.00' });
    await h.node.rpc('anvil_setBalance', [shop.hotWallet, '0xde0b6b3a7640000']);
    await fund(h.tokens.USDT, shop.hotWallet, 50_000_000n);

    await pauseSigner(h.t.db, 'cli:test', 'incident drill');
    const refund = await shop.client.post('/api/v1/refunds/create', {
      session_id: paid.id,
      refund_id: 'sig-rf-1',
      amount: 250,
      currency: 'USDT',
    });
    expect(refund.status).toBe(201);
    // Refused while paused: audited refusals, the refund still in flight, nothing on chain.
    await h.until(async () => {
      const rows = await h.t.db.selectFrom('signer_audit').select(['outcome', 'code']).where('outcome', '=', 'refused').execute();
      return rows.some((r) => r.code === 'paused') ? true : undefined;
    }, 30_000);
    expect((await shop.client.get('/api/v1/refunds/sig-rf-1')).json.status).not.toMatch(/completed|failed/);
    expect(await h.t.db.selectFrom('payout_attempts').select('id').execute()).toEqual([]);

    await resumeSigner(h.t.db, 'cli:test');
    const done = await h.until(async () => {
      const r = await shop.client.get('/api/v1/refunds/sig-rf-1');
      return r.json.status === 'completed' || r.json.status === 'failed' ? r : undefined;
    }, 60_000);
    expect(done.json.status).toBe('completed');
    const signed = await h.t.db
      .selectFrom('signer_audit')
      .selectAll()
      .where('outcome', '=', 'signed')
      .where('purpose', '=', 'refund_payout')
      .execute();
    expect(signed.length).toBeGreaterThanOrEqual(1);
    expect(new Set(signed.map((s) => s.merchant_id))).toEqual(new Set([shop.id]));
    const attempts = await h.t.db.selectFrom('payout_attempts').select(['tx_hash', 'state']).execute();
    expect(attempts.filter((a) => a.state === 'confirmed')).toHaveLength(1);
  }, 120_000);

  it('charges a subscription through the signer: the customer approved the charger, the signer justified the transferFrom', async () => {
    const subId = await approvedSubscription(h, shop, { customerIndex: 48, customer: 'cus_signer', product: 'Pro' });
    const active = await h.until(async () => {
      const sub = (await shop.client.get(`/api/v1/subscriptions/${subId}`)).json;
      return sub.status === 'active' ? sub : undefined;
    }, 60_000);
    expect(active.status).toBe('active');
    const charges = await h.t.db
      .selectFrom('signer_audit')
      .select(['outcome', 'merchant_id', 'summary'])
      .where('purpose', '=', 'subscription_charge')
      .execute();
    expect(charges.filter((c) => c.outcome === 'signed')).toHaveLength(1);
    expect(charges.filter((c) => c.outcome === 'refused')).toEqual([]);
    expect(charges[0]).toMatchObject({ merchant_id: shop.id, summary: { amount_base: '15000000' } });
  }, 120_000);
});
