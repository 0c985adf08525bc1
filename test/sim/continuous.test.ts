import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ReceivedDelivery, Violation } from '../../scripts/sim/contract.js';
import { checkRound, SIGNATURE, startContinuousChecks } from '../../scripts/sim/invariants/continuous.js';
import { WEBHOOKS } from '../../scripts/sim/invariants/webhooks.js';
import { expireByChainTime } from '../../scripts/sim/late.js';
import { insertOutboxEvent } from '../../src/ledger/core/outbox.js';
import { createMerchant } from '../../src/ledger/merchants/merchants.js';
import { SecretBox } from '../../src/security/secret-box.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';
import { REDIS_URL } from '../support/env.js';

// The simulator's continuous checks (scripts/sim/invariants/continuous.ts) on a real database: a round over a clean
// state reports nothing; a second body for one event id, an event the outbox lacks and an unsigned request are each
// reported, once, by the periodic checker. And "late" payments (scripts/sim/late.ts) expire by the chain's clock.

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('simulator continuous checks and chain-time expiry', () => {
  let t: TestDatabase;
  let merchantId: string;
  let eventId: string;
  let body: string;
  beforeAll(async () => {
    t = await createTestDatabase();
    merchantId = (await createMerchant(t.db, new SecretBox('b'.repeat(64)), { name: 'continuous', webhookUrl: 'http://127.0.0.1:9/' }))
      .merchantId;
    eventId = await t.db
      .transaction()
      .execute((trx) =>
        insertOutboxEvent(trx, { merchantId, mode: 'test', type: 'payment.completed', object: { id: 'cs_x' }, aggregateId: 'cs_x' }),
      );
    const row = await t.db.selectFrom('outbox_events').select('payload').where('id', '=', eventId).executeTakeFirstOrThrow();
    body = JSON.stringify(row.payload);
  });
  afterAll(async () => t?.destroy());

  const delivery = (id: string, b: string, seq: number): ReceivedDelivery => ({
    eventId: id,
    type: 'payment.completed',
    objectId: 'cs_x',
    body: b,
    answered: 200,
    seq,
  });
  const ctx = (deliveries: ReceivedDelivery[], signatureProblems: string[] = []) => ({
    db: t.db,
    chains: { evm: [] },
    deliveries,
    signatureProblems,
    redis: { url: REDIS_URL, prefix: 'unused' },
  });

  it('a clean state passes a round', async () => {
    expect(await checkRound(ctx([delivery(eventId, body, 0), delivery(eventId, body, 1)]))).toEqual([]);
  });

  it('a second body for one event, an event not in the outbox and an unsigned request are violations', async () => {
    const v = await checkRound(
      ctx([delivery(eventId, body, 0), delivery(eventId, `${body} `, 1), delivery('evt_nope', '{}', 2)], ['evt_?: no signature']),
    );
    expect(v.map((x) => x.invariant).sort()).toEqual([SIGNATURE, WEBHOOKS, WEBHOOKS].sort());
    expect(v.find((x) => x.subject === eventId)?.message).toContain('2 different bodies');
    expect(v.find((x) => x.subject === 'evt_nope')?.message).toContain('not in the outbox');
  });

  it('the periodic checker reports each violation once, after it appears', async () => {
    const deliveries = [delivery(eventId, body, 0)];
    const seen: Violation[] = [];
    const checks = startContinuousChecks(ctx(deliveries), { intervalMs: 50, onViolation: (v) => seen.push(v) });
    const until = async (f: () => boolean) => {
      for (let i = 0; i < 400 && !f(); i++) await sleep(25);
    };
    await until(() => checks.rounds() >= 3);
    expect(seen).toEqual([]);
    deliveries.push(delivery(eventId, 'changed', 1));
    await until(() => seen.length > 0);
    const at = checks.rounds();
    await until(() => checks.rounds() >= at + 3); // more rounds that find the same violation again
    const stats = await checks.stop();
    expect(stats.rounds).toBeGreaterThanOrEqual(at + 3);
    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatchObject({ invariant: WEBHOOKS, subject: eventId });
  });

  it('a late session expires one second before the chain latest block time when the chain lags the wall clock', async () => {
    const account = await t.db
      .selectFrom('merchant_hd_accounts')
      .select('account_index')
      .where('merchant_id', '=', merchantId)
      .executeTakeFirstOrThrow();
    const id = `cs_late${Date.now()}`;
    await t.db
      .insertInto('payment_sessions')
      .values({
        id,
        merchant_id: merchantId,
        mode: 'test',
        order_id: id,
        amount_minor: 100n,
        currency: 'USDC',
        metadata: JSON.stringify({}),
        target_currency: 'USDC',
        target_amount_minor: 100n,
        hd_account: account.account_index,
        expires_at: new Date(Date.now() + 1_800_000),
      })
      .execute();
    const lagging = Math.floor(Date.now() / 1000) - 40;
    expect((await expireByChainTime(t.db, id, lagging)).getTime()).toBe((lagging - 1) * 1000);
    // A chain ahead of the wall clock: the expiry is still in the past by both clocks.
    const ahead = Math.floor(Date.now() / 1000) + 40;
    const before = Date.now();
    expect((await expireByChainTime(t.db, id, ahead)).getTime()).toBeLessThan(before);
    await expect(expireByChainTime(t.db, 'cs_missing', lagging)).rejects.toThrow('not found');
  });
});
