import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { sql, type Transaction } from 'kysely';
import type { Database } from '../../src/db/schema.js';
import { acknowledgeUnexplained, listUnexplained } from '../../src/ledger/journal/unexplained.js';
import { registerWallets } from '../../src/ledger/journal/entries.js';
import type { InvariantContext, ReceivedDelivery } from '../../scripts/sim/contract.js';
import { allInvariants } from '../../scripts/sim/invariants/index.js';
import { SESSION_PAID, sessionPaidIffChain } from '../../scripts/sim/invariants/session-paid.js';
import { SINGLE_CREDIT, noTransferCreditedTwice } from '../../scripts/sim/invariants/single-credit.js';
import { OUTBOUND_ONCE, outboundMovedMoneyAtMostOnce } from '../../scripts/sim/invariants/outbound-once.js';
import { WEBHOOKS, everyEventDeliveredOnceInOrder } from '../../scripts/sim/invariants/webhooks.js';
import { JOURNAL, acknowledgeNativeFunding, journalReconcilesWithChains } from '../../scripts/sim/invariants/journal.js';
import { JOBS_INVARIANT, noJobLeftUnresumed } from '../../scripts/sim/invariants/jobs.js';
import { CHARGES } from '../../scripts/sim/invariants/charges.js';
import { CANCELED_SESSIONS } from '../../scripts/sim/invariants/canceled-sessions.js';
import { DEPOSITS_RECORDED, depositsRecordedBelowCursor } from '../../scripts/sim/invariants/deposits-recorded.js';
import { SIGNER_AUDIT, signerSignedOnlyJustified } from '../../scripts/sim/invariants/signer-audit.js';
import { startServiceHarness, type HarnessMerchant, type ServiceHarness } from '../support/service-harness.js';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.js';
import { fund, payFrom, walletAt } from '../support/evm-tokens/scenario.js';
import { REDIS_URL } from '../support/env.js';
import { rolledBack, simContext, simDeliveries, subjects } from '../support/sim-invariant-harness.js';
import { reorgEvm } from '../../scripts/sim/faults/chain-evm.js';

// The simulator's invariants (scripts/sim/invariants/) over a REAL state: the whole service on Anvil, a session paid on
// chain, a refund paid out by the outbound engine, webhooks delivered to a real receiver (the first attempt answered
// 500, so a retry is part of it). Every invariant holds on it; then each corruption (made inside a transaction that is
// rolled back, or on a copy of the deliveries, or on the chain at the end) is reported by its invariant with the right
// subject.

let h: ServiceHarness;
let receiver: WebhookReceiver;
let m: HarnessMerchant;
let session: { id: string; payer: string };
let refundId: string;
/** A session paid 3.00 of 6.00 USDC (open, credited), and one paid 2.50 for 2.00 (paid, overpaid). */
let partial: { id: string };
let overpaid: { id: string };
let miner: NodeJS.Timeout;

const deliveries = (): ReceivedDelivery[] => simDeliveries(receiver);
const context = (over: Partial<InvariantContext> = {}): InvariantContext => simContext(h, receiver, over);
const corrupted = <T>(f: (trx: Transaction<Database>) => Promise<T>): Promise<T> => rolledBack(h.t.db, f);

beforeAll(async () => {
  receiver = await startWebhookReceiver();
  h = await startServiceHarness();
  m = await h.newMerchant('Sim invariants', receiver.url);
  receiver.secrets.push(m.webhookSecret);
  // The first attempt of each event fails with a 500: the retry that follows must carry the same bytes.
  receiver.answer = (_r, n) => (n === 1 ? 500 : 200);
  miner = setInterval(() => void h.node.mine(1).catch(() => {}), 300); // confirmations keep coming

  // The refunds hot wallet, registered (as `payouts wallets` does) and then funded: the watcher journals the top-up as
  // unexplained, which the operator acknowledges, so the journal reconciles.
  await registerWallets(h.t.db, [{ network: 'ethereum', mode: 'test', address: m.hotWallet, merchantId: m.id, role: 'refunds' }]);
  await h.node.rpc('anvil_setBalance', [m.hotWallet, '0xde0b6b3a7640000']);
  await fund(h.tokens.USDT, m.hotWallet, 5_000_000n);
  const topUp = await h.until(async () => (await listUnexplained(h.t.db, { network: 'ethereum' }))[0], 60_000);
  expect(await acknowledgeUnexplained(h.t.db, topUp.entryId, 'hot wallet funded by the test')).toBe(true);

  session = await h.paidSession(m, { amount: '12.50' });
  overpaid = await h.paidSession(m, { amount: '2.00', paid: 2_500_000n });
  const created = await m.client.post('/api/v1/checkout/sessions/create', { amount: '6.00', currency: 'USD', order_id: 'o-partial' });
  const sel = await fetch(`${h.base}/checkout/sessions/${created.json.id}/select`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ network: 'ethereum', token: 'USDC' }),
  });
  const { deposit_address } = (await sel.json()) as { deposit_address: string };
  const payer = walletAt(31, h.node.provider);
  await h.node.rpc('anvil_setBalance', [payer.address, '0xde0b6b3a7640000']);
  await fund(h.tokens.USDC, payer.address, 3_000_000n);
  await payFrom(payer, h.tokens.USDC, deposit_address, 3_000_000n);
  partial = { id: created.json.id as string };
  await h.until(async () => {
    const d = await h.t.db.selectFrom('deposits').select('disposition').where('session_id', '=', partial.id).executeTakeFirst();
    return d?.disposition === 'credited' ? true : undefined;
  }, 60_000);
  const refund = await m.client.post('/api/v1/refunds/create', {
    session_id: session.id,
    refund_id: 'sim-rf-1',
    amount: 250,
    currency: 'USDT',
  });
  expect(refund.status).toBe(201);
  refundId = refund.json.id as string;
  await h.until(async () => ((await m.client.get('/api/v1/refunds/sim-rf-1')).json.status === 'completed' ? true : undefined), 90_000);
  // Drained: both events delivered (after their retry), the refund's transfer final, the watcher past it.
  await receiver.waitFor(
    () =>
      ['payment.completed', 'refund.succeeded'].every((t) => receiver.received.some((r) => r.eventType === t && r.answeredWith === 200)),
    60_000,
  );
  await h.until(async () => {
    const r = await h.t.db.selectFrom('refunds').select('transaction_hash').where('id', '=', refundId).executeTakeFirstOrThrow();
    const rc = await h.node.rpc<{ blockNumber: string } | null>('eth_getTransactionReceipt', [r.transaction_hash]);
    const cursor = await h.t.db.selectFrom('chain_cursors').select('final_height').executeTakeFirst();
    return rc && cursor && cursor.final_height >= BigInt(rc.blockNumber) ? true : undefined;
  }, 60_000);
}, 300_000);

afterAll(async () => {
  clearInterval(miner);
  await h?.close();
  await receiver?.close();
});

describe('simulator invariants on a real paid session, refund and deliveries', () => {
  it('every invariant holds on the real state', async () => {
    expect(receiver.received.filter((r) => r.answeredWith === 500).length).toBeGreaterThanOrEqual(2);
    const status = async (id: string) =>
      await h.t.db.selectFrom('payment_sessions').select(['status', 'received_base']).where('id', '=', id).executeTakeFirstOrThrow();
    expect(await status(partial.id)).toEqual({ status: 'open', received_base: 3_000_000n });
    expect(await status(overpaid.id)).toEqual({ status: 'paid', received_base: 2_500_000n });
    const ctx = context();
    // The gas the test gave the hot wallet after registering it: reconcile books exactly that as an unexplained native
    // movement, which the operator acknowledges (docs/journal.md); nothing else drifts.
    expect(await acknowledgeNativeFunding(ctx, new Map([[m.hotWallet.toLowerCase(), 10n ** 18n]]), 'gas funded by the test')).toEqual([]);
    expect(allInvariants.map((f) => f.name)).toEqual([
      SESSION_PAID,
      SINGLE_CREDIT,
      OUTBOUND_ONCE,
      WEBHOOKS,
      JOURNAL,
      JOBS_INVARIANT,
      CHARGES,
      CANCELED_SESSIONS,
      DEPOSITS_RECORDED,
      SIGNER_AUDIT,
    ]);
    const violations = (await Promise.all(allInvariants.map((f) => f(ctx)))).flat();
    expect(violations).toEqual([]);
    // The harness's service is keyless beside a signer role: the refund's attempts were signed by it, these very bytes.
    expect(await h.t.db.selectFrom('signer_audit').select('id').where('outcome', '=', 'signed').execute()).not.toEqual([]);
    expect(await signerSignedOnlyJustified(context({ signer: 'remote' }))).toEqual([]);
  });

  it('session paid iff chain: a paid session without money on chain, and an unpaid one whose money is there', async () => {
    // A second session, selected but never paid on chain, marked paid; and the real paid one set back to open.
    const created = await m.client.post('/api/v1/checkout/sessions/create', {
      amount: '3.00',
      currency: 'USD',
      order_id: `o-${randomBytes(4).toString('hex')}`,
    });
    await fetch(`${h.base}/checkout/sessions/${created.json.id}/select`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ network: 'ethereum', token: 'USDC' }),
    });
    const vs = await corrupted(async (trx) => {
      await trx.updateTable('payment_sessions').set({ status: 'paid' }).where('id', '=', created.json.id).execute();
      await trx.updateTable('payment_sessions').set({ status: 'open' }).where('id', '=', session.id).execute();
      await trx.updateTable('payment_sessions').set({ status: 'paid' }).where('id', '=', partial.id).execute();
      return sessionPaidIffChain(context({ db: trx }));
    });
    expect(subjects(vs, SESSION_PAID).sort()).toEqual([created.json.id, session.id, partial.id].sort());
    expect(vs.find((v) => v.subject === partial.id)!.message).toMatch(
      /is paid but the canonical chain holds 3000000 of 6000000 base units of USDC/,
    );
    expect(vs.find((v) => v.subject === session.id)!.message).toMatch(/is open but the canonical chain holds 12500000 of 12500000/);
    // A merchant tolerance of 50 % makes the half-paid session's money enough: now it is the open status that is wrong.
    const tolerant = await corrupted(async (trx) => {
      await trx.updateTable('merchants').set({ underpayment_tolerance_bps: 5000 }).where('id', '=', m.id).execute();
      return sessionPaidIffChain(context({ db: trx }));
    });
    expect(subjects(tolerant, SESSION_PAID)).toEqual([partial.id]);
    expect(vs.find((v) => v.subject === created.json.id)!.message).toMatch(/is paid but the canonical chain holds 0 of 3000000/);
    // Rolled back: the second session stays open and unpaid, as the chain says.
    expect(await sessionPaidIffChain(context())).toEqual([]);
  });

  it('no transfer credited twice: a duplicate credit row, and a credit of a transfer that is not on chain', async () => {
    const dep = await h.t.db.selectFrom('deposits').selectAll().where('session_id', '=', session.id).executeTakeFirstOrThrow();
    const vs = await corrupted(async (trx) => {
      // The unique key is what keeps this from happening; the invariant must still see it if the key were gone.
      await sql`alter table deposits drop constraint deposits_chain_tx_log_uq`.execute(trx);
      await trx
        .insertInto('deposits')
        .values({ ...dep, id: `dep_${randomBytes(6).toString('hex')}` })
        .execute();
      const ghost = `0x${randomBytes(32).toString('hex')}`;
      await trx
        .insertInto('deposits')
        .values({ ...dep, id: `dep_${randomBytes(6).toString('hex')}`, tx_hash: ghost })
        .execute();
      return { found: await noTransferCreditedTwice(context({ db: trx })), ghost };
    });
    const key = `ethereum/test/${dep.tx_hash.toLowerCase()}:${dep.log_index}`;
    const got = subjects(vs.found, SINGLE_CREDIT);
    expect(got).toContain(key);
    expect(got).toContain(`ethereum/test/${vs.ghost}:${dep.log_index}`);
    expect(got).toContain(session.id); // received_base no longer equals the credited sum
    expect(vs.found.find((v) => v.subject === key)!.message).toMatch(/2 live deposit rows/);
  });

  it('deposits recorded below the cursor: a transfer the cursor passed with no live deposit row (the cursor-before-effects loss)', async () => {
    const dep = await h.t.db
      .selectFrom('deposits')
      .select(['id', 'tx_hash', 'block_number'])
      .where('session_id', '=', partial.id)
      .executeTakeFirstOrThrow();
    expect(await depositsRecordedBelowCursor(context())).toEqual([]);
    // The row gone (its key no longer the chain's transfer), and the row orphaned: both are a deposit the cursor passed.
    for (const change of [{ tx_hash: `0x${randomBytes(32).toString('hex')}` }, { status: 'orphaned' as const, disposition: null }]) {
      const vs = await corrupted(async (trx) => {
        await trx.updateTable('deposits').set(change).where('id', '=', dep.id).execute();
        return depositsRecordedBelowCursor(context({ db: trx }));
      });
      expect(subjects(vs, DEPOSITS_RECORDED)).toEqual([partial.id]);
      expect(vs[0]!.message).toMatch(
        new RegExp(
          `3000000 USDC to 0x[0-9a-f]{40} \\(session ${partial.id}\\) in ${dep.tx_hash.toLowerCase()} at block ${dep.block_number} is not recorded as a deposit, but the ethereum:test watcher's committed cursor is past it`,
        ),
      );
    }
    // A cursor below the transfer's block: the watcher has not reached it, nothing to judge.
    const below = await corrupted(async (trx) => {
      await trx.updateTable('deposits').set({ status: 'orphaned', disposition: null }).where('id', '=', dep.id).execute();
      await trx
        .updateTable('chain_cursors')
        .set({ tip_height: dep.block_number - 1n })
        .execute();
      return depositsRecordedBelowCursor(context({ db: trx }));
    });
    expect(below).toEqual([]);
  });

  it('every event delivered once, in order: a missing delivery, a changed retry body, a reordered pair', async () => {
    const real = deliveries();
    const completed = real.find(
      (d) => d.type === 'payment.completed' && d.answered === 200 && JSON.parse(d.body).data.object.session_id === session.id,
    )!;
    // Missing: the receiver never accepted payment.completed.
    const missing = await everyEventDeliveredOnceInOrder(
      context({ deliveries: real.filter((d) => !(d.eventId === completed.eventId && d.answered === 200)) }),
    );
    expect(subjects(missing, WEBHOOKS)).toEqual([completed.eventId]);
    expect(missing[0]!.message).toMatch(/never reached the receiver with a 2xx/);
    // A retry whose body differs from the first attempt's.
    const changed = await everyEventDeliveredOnceInOrder(
      context({ deliveries: real.map((d) => (d.eventId === completed.eventId && d.answered === 200 ? { ...d, body: `${d.body} ` } : d)) }),
    );
    expect(subjects(changed, WEBHOOKS)).toContain(completed.eventId);
    expect(changed.map((v) => v.message).join('\n')).toMatch(/different bodies/);
    // Reordered: a later event of the same session, accepted before payment.completed.
    const vs = await corrupted(async (trx) => {
      const later = await sql<{ id: string }>`
        insert into outbox_events (id, merchant_id, mode, type, aggregate_id, payload)
        select next_event_id(), merchant_id, mode, 'payment.completed', aggregate_id, payload from outbox_events
        where id = ${completed.eventId} returning id`.execute(trx);
      const id = later.rows[0]!.id;
      const early: ReceivedDelivery = { ...completed, eventId: id, body: completed.body.replace(completed.eventId, id), seq: -1 };
      return everyEventDeliveredOnceInOrder(context({ db: trx, deliveries: [early, ...real] }));
    });
    expect(subjects(vs, WEBHOOKS)).toEqual([session.id]);
    expect(vs[0]!.message).toMatch(/was first accepted before the earlier event/);
    // The same order is fine when the earlier event was resent by the operator (generation 1): it arrives after.
    const resent = await corrupted(async (trx) => {
      const later = await sql<{ id: string }>`
        insert into outbox_events (id, merchant_id, mode, type, aggregate_id, payload)
        select next_event_id(), merchant_id, mode, 'payment.completed', aggregate_id, payload from outbox_events
        where id = ${completed.eventId} returning id`.execute(trx);
      const id = later.rows[0]!.id;
      await trx.updateTable('webhook_deliveries').set({ generation: 1 }).where('event_id', '=', completed.eventId).execute();
      const early: ReceivedDelivery = { ...completed, eventId: id, body: completed.body.replace(completed.eventId, id), seq: -1 };
      return everyEventDeliveredOnceInOrder(context({ db: trx, deliveries: [early, ...real] }));
    });
    expect(resent).toEqual([]);
  });

  it('journal reconciles: an unexplained top-up nobody acknowledged is a difference naming the hot wallet', async () => {
    const [ack] = await h.t.db.selectFrom('journal_acknowledgements').selectAll().execute();
    expect(ack).toBeDefined();
    await h.t.db.deleteFrom('journal_acknowledgements').where('entry_id', '=', ack!.entry_id).execute();
    try {
      const vs = await journalReconcilesWithChains(context());
      expect(subjects(vs, JOURNAL)).toEqual([m.hotWallet.toLowerCase()]);
      expect(vs[0]!.message).toMatch(/USDT .*unacknowledged unexplained 5000000.*difference -5000000/);
    } finally {
      await h.t.db.insertInto('journal_acknowledgements').values(ack!).execute();
    }
    expect(await journalReconcilesWithChains(context())).toEqual([]);
  });

  it('no job left unresumed: an active job without a lock, a delayed job long past due, a pending delivery with no job', async () => {
    const redis = new Redis(REDIS_URL);
    const base = `${h.env.REDIS_KEY_PREFIX}:bull:sim-probe`;
    try {
      await redis.hset(`${base}:meta`, 'opts.maxLenEvents', '10000');
      await redis.lpush(`${base}:active`, 'orphan-1');
      await redis.zadd(`${base}:delayed`, String((Date.now() - 120_000) * 0x1000), 'late-1');
      await redis.zadd(`${base}:delayed`, String((Date.now() + 600_000) * 0x1000), 'future-1');
      const event = await h.t.db.selectFrom('webhook_deliveries').select('event_id').executeTakeFirstOrThrow();
      const vs = await corrupted(async (trx) => {
        await trx.updateTable('webhook_deliveries').set({ status: 'pending' }).where('event_id', '=', event.event_id).execute();
        // A refund still processing with no job of its own is not abandoned: the payout-sweep scheduler re-adds one.
        await trx.updateTable('refunds').set({ status: 'processing' }).where('id', '=', refundId).execute();
        return noJobLeftUnresumed({ graceMs: 30_000 })(context({ db: trx }));
      });
      expect(subjects(vs, JOBS_INVARIANT).sort()).toEqual(['sim-probe/late-1', 'sim-probe/orphan-1', event.event_id].sort());
    } finally {
      await redis.del(`${base}:meta`, `${base}:active`, `${base}:delayed`);
      redis.disconnect();
    }
    expect(await noJobLeftUnresumed()(context())).toEqual([]);
  });

  // Last: it changes the chain (a second real transfer out of the hot wallet).
  it('outbound at most once: a second mined transfer for one refund is reported, as is the unrecorded transfer itself', async () => {
    const r = await h.t.db.selectFrom('refunds').selectAll().where('id', '=', refundId).executeTakeFirstOrThrow();
    const attempt = await h.t.db.selectFrom('payout_attempts').selectAll().where('refund_id', '=', refundId).executeTakeFirstOrThrow();
    expect(await outboundMovedMoneyAtMostOnce(context())).toEqual([]);
    // The hot wallet pays the same refund again (as a re-sign without the attempt check would).
    await h.node.rpc('anvil_impersonateAccount', [m.hotWallet]);
    const signer = await h.node.provider.getSigner(m.hotWallet);
    const again = await payFrom(signer as never, h.tokens.USDT, r.destination_address, r.amount_base);
    await h.node.rpc('anvil_stopImpersonatingAccount', [m.hotWallet]);
    const unrecorded = await outboundMovedMoneyAtMostOnce(context());
    expect(subjects(unrecorded, OUTBOUND_ONCE)).toEqual([again.toLowerCase()]);
    expect(unrecorded[0]!.message).toMatch(/no refund, charge or sweep recorded/);
    const vs = await corrupted(async (trx) => {
      await trx
        .insertInto('payout_attempts')
        .values({
          ...attempt,
          id: undefined,
          tx_hash: again.toLowerCase(),
          nonce: (attempt.nonce ?? 0n) + 1n,
          state: 'broadcast',
          signed: JSON.stringify(attempt.signed),
        })
        .execute();
      return outboundMovedMoneyAtMostOnce(context({ db: trx }));
    });
    expect(subjects(vs, OUTBOUND_ONCE)).toEqual([refundId]);
    expect(vs[0]!.message).toMatch(/moved money 2 times/);
  });

  // After everything else: a reorg deeper than the confirmation depth (scripts/sim/faults/chain-evm.ts) takes the
  // paying transfer off the canonical chain after it was credited; the service cannot undo a final credit (its watcher
  // stops on a deep reorg), and the invariants say what broke.
  it('a reorg below the confirmation depth that drops the paying transfer is caught by session-paid and single-credit', async () => {
    clearInterval(miner);
    const dep = await h.t.db.selectFrom('deposits').selectAll().where('session_id', '=', session.id).executeTakeFirstOrThrow();
    const head = BigInt(await h.node.rpc<string>('eth_blockNumber'));
    const r = await reorgEvm(h.node.url, { depth: Number(head - dep.block_number) + 1, drop: 'all' });
    expect(r.dropped).toContain(dep.tx_hash.toLowerCase());
    const paid = await sessionPaidIffChain(context());
    // Every paid session's transfer was in the removed blocks (the partial one's too, but it was not paid).
    expect(subjects(paid, SESSION_PAID).sort()).toEqual([session.id, overpaid.id].sort());
    expect(paid.find((v) => v.subject === session.id)!.message).toMatch(/is paid but the canonical chain holds 0 of 12500000/);
    const credit = await noTransferCreditedTwice(context());
    const credited = await h.t.db.selectFrom('deposits').select(['tx_hash', 'log_index']).where('disposition', '=', 'credited').execute();
    expect(credited).toHaveLength(3);
    expect(subjects(credit, SINGLE_CREDIT)).toEqual(
      expect.arrayContaining(credited.map((d) => `ethereum/test/${d.tx_hash.toLowerCase()}:${d.log_index}`)),
    );
  });
});
