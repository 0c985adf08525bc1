import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Transaction, Wallet } from 'ethers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { InvariantContext } from '../../scripts/sim/contract.js';
import { SIGNER_AUDIT, signerSignedOnlyJustified } from '../../scripts/sim/invariants/signer-audit.js';
import { loadConfig } from '../../src/config.js';
import { createLogger } from '../../src/logger.js';
import { start, type RunningService } from '../../src/main.js';
import { pauseSigner, resumeSigner } from '../../src/operations/signer.js';
import { TEST_MNEMONIC, fund } from '../support/evm-tokens/scenario.js';
import { approvedSubscription } from '../support/approved-subscription.js';
import { startServiceHarness, type HarnessMerchant, type ServiceHarness } from '../support/service-harness.js';
import { rolledBack, subjects } from '../support/sim-invariant-harness.js';

// The signer role end to end (docs/signer.md, issue 36): the service runs with NO key material (its workers, API and
// watcher ask the signer over SIGNER_SOCKET), a second process of the same code runs ROLES=signer with the seed. A
// refund is paid on Anvil through it: the engine asks, the signer reads the refund in the ledger, signs, and audits.
// Paused, the signer refuses and the payout waits (it neither fails nor is signed twice); resumed, it completes.
// Last, the simulator's signer-audit invariant (scripts/sim/invariants/signer-audit.ts) over that real state: it holds,
// and each corruption (in a transaction rolled back) is reported.

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

  it("the simulator's signer-audit invariant holds on that state and reports what the signer did not justify", async () => {
    const ctx = (db = h.t.db): InvariantContext => ({
      db,
      chains: { evm: [] },
      deliveries: [],
      events: [],
      redis: { url: '', prefix: '' },
      signer: 'remote',
    });
    const attempt = await h.t.db.selectFrom('payout_attempts').selectAll().where('state', '=', 'confirmed').executeTakeFirstOrThrow();
    expect((await h.t.db.selectFrom('subscription_charge_attempts').select('id').execute()).length).toBeGreaterThanOrEqual(1);
    expect(await signerSignedOnlyJustified(ctx())).toEqual([]);

    // An attempt of that refund whose bytes the signer never signed (another key signed them): a role signing alone.
    const forged = Transaction.from(attempt.signed.raw!);
    forged.nonce += 1;
    forged.signature = Wallet.createRandom().signingKey.sign(forged.unsignedHash);
    const unsigned = await rolledBack(h.t.db, async (trx) => {
      await trx
        .insertInto('payout_attempts')
        .values({
          ...attempt,
          id: undefined,
          tx_hash: forged.hash!,
          nonce: BigInt(forged.nonce),
          state: 'broadcast',
          signed: JSON.stringify({ ...attempt.signed, raw: forged.serialized, hash: forged.hash }),
        })
        .execute();
      return signerSignedOnlyJustified(ctx(trx));
    });
    expect(subjects(unsigned, SIGNER_AUDIT)).toEqual([forged.hash]);
    expect(unsigned[0]!.message).toMatch(/not a transaction the signer signed/);
    // With the roles signing in process there is no signer to have signed it: only the audit's own rows are judged.
    expect(await rolledBack(h.t.db, async (trx) => signerSignedOnlyJustified({ ...ctx(trx), signer: 'in-process' }))).toEqual([]);

    // Signatures for an object the ledger does not hold, and for the real refund as another merchant's.
    const refund = await h.t.db.selectFrom('refunds').select(['id', 'network', 'mode']).executeTakeFirstOrThrow();
    const rows = await rolledBack(h.t.db, async (trx) => {
      const row = { outcome: 'signed' as const, purpose: 'refund_payout', network: refund.network, mode: refund.mode };
      await trx
        .insertInto('signer_audit')
        .values([
          {
            ...row,
            request_id: 'sim-ghost',
            intent: JSON.stringify({ purpose: 'refund_payout', refund_id: 're_ghost' }),
            merchant_id: shop.id,
          },
          {
            ...row,
            request_id: 'sim-other',
            intent: JSON.stringify({ purpose: 'refund_payout', refund_id: refund.id }),
            merchant_id: 'mch_other',
          },
          {
            ...row,
            request_id: 'sim-mixed',
            intent: JSON.stringify({ purpose: 'sweep_step', refund_id: refund.id }),
            merchant_id: shop.id,
          },
        ])
        .execute();
      return signerSignedOnlyJustified(ctx(trx));
    });
    expect(rows.map((v) => v.message)).toEqual([
      expect.stringMatching(/refund_payout:re_ghost, which the ledger does not hold/),
      expect.stringMatching(/as merchant mch_other .*the ledger's is/),
      expect.stringMatching(/signed, but purpose refund_payout with intent/),
    ]);
  }, 60_000);

  it('answers a payer 503 signer_unavailable while the signer is down (a deposit address needs its public key), never a 5xx of its own', async () => {
    const created = await shop.client.post('/api/v1/checkout/sessions/create', {
      amount: '3.00',
      currency: 'USD',
      order_id: `o-down-${Date.now()}`,
    });
    expect(created.status).toBe(200);
    await signerProcess.stop();
    const sel = await fetch(`${h.base}/checkout/sessions/${created.json.id}/select`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ network: 'ethereum', token: 'USDT' }),
    });
    expect(sel.status).toBe(503);
    const body = (await sel.json()) as { error: { code: string; type: string } };
    expect(body.error).toMatchObject({ code: 'signer_unavailable', type: 'api_error' });
    // The hosted page's form: back to the page with its "unavailable" notice; the page itself still renders.
    const form = await fetch(`${h.base}/pay/${created.json.id}/select`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'choice=ethereum:USDT&lang=en',
      redirect: 'manual',
    });
    expect(form.status).toBe(303);
    expect(form.headers.get('location')).toMatch(/error=unavailable/);
    expect((await fetch(`${h.base}/pay/${created.json.id}?lang=en`)).status).toBe(200);
    // Nothing was changed: the session has no network yet.
    const row = await h.t.db.selectFrom('payment_sessions').select(['network']).where('id', '=', created.json.id).executeTakeFirstOrThrow();
    expect(row.network).toBeNull();
  }, 60_000);
});
