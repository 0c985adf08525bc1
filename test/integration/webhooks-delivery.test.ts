import { plainSession } from '../support/new-session.js';
import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rotateWebhookSecret } from '../../src/ledger/merchants/webhook-secrets.js';
import { cancelSession, insertSession } from '../../src/ledger/payments/sessions.js';
import { startDeliveryWorker, startOutboxRelay, validateEventEnvelope } from '../../src/webhooks/index.js';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.js';
import { eventually, startWebhookHarness, type WebhookHarness } from './webhooks-harness.js';

// Relay and worker in this process against real Postgres, Redis, BullMQ and an HTTP receiver on 127.0.0.1.
// The spec's schedule (retries after 1, 2, 4, 8, 16 s) with its base delay shortened by configuration to 100 ms; the
// default values themselves are proven by test/unit/webhooks-config.test.ts › defaults to the spec...
const BASE_MS = 100;
const SCHEDULE = [1, 2, 4, 8, 16].map((n) => n * BASE_MS);
const JITTER = 0.1;
const TIMEOUT_MS = 400;

let h: WebhookHarness;
let relay: { stop(): Promise<void> };
let worker: { stop(): Promise<void> };
const receivers: WebhookReceiver[] = [];

async function receiver(secrets: string[] = []): Promise<WebhookReceiver> {
  const r = await startWebhookReceiver(secrets);
  receivers.push(r);
  return r;
}

async function merchantWithReceiver() {
  const r = await receiver();
  const m = await h.merchant(r.url);
  r.secrets = [m.secret];
  return { r, m };
}

const delivery = (id: string) => h.db.selectFrom('webhook_deliveries').selectAll().where('event_id', '=', id).executeTakeFirst();
const attempts = (id: string) =>
  h.db.selectFrom('webhook_delivery_attempts').selectAll().where('event_id', '=', id).orderBy('id').execute();
const finalState = async (id: string, timeoutMs = 20_000) =>
  (await eventually(
    () => delivery(id),
    (d) => d !== undefined && d.status !== 'pending',
    timeoutMs,
  ))!;

beforeAll(async () => {
  h = await startWebhookHarness();
  relay = startOutboxRelay({ db: h.db, redis: h.redis, prefix: h.prefix, databaseUrl: h.t.url, pollIntervalMs: 200 });
  worker = startDeliveryWorker({
    db: h.db,
    redis: h.redis,
    box: h.box,
    prefix: h.prefix,
    retrySchedule: SCHEDULE,
    jitterRatio: JITTER,
    timeoutMs: TIMEOUT_MS,
    concurrency: 8,
    perMerchantConcurrency: 8,
    allowPrivateTargetsInTest: true,
  });
});

afterAll(async () => {
  await relay?.stop();
  await worker?.stop();
  for (const r of receivers) await r.close();
  await h?.close();
});

describe('webhook delivery', () => {
  it('delivers a ledger event with every spec header, an independently verified signature and the exact stored body', async () => {
    const { r, m } = await merchantWithReceiver();
    const sessionId = `cs_${randomBytes(12).toString('hex')}`;
    await h.t.db.transaction().execute((trx) => insertSession(trx, plainSession({ id: sessionId, merchantId: m.id, orderId: 'order-77' })));
    expect((await cancelSession(h.t.db, m.id, 'test', sessionId)).kind).toBe('canceled');
    await r.waitFor(() => r.received.length === 1);
    const got = r.received[0]!;
    expect(got.problems).toEqual([]);
    expect(got.matchedSecret).toBe(0);
    expect(got.path).toBe('/hooks');
    expect(got.headers['x-service-event-type']).toBe('payment.cancelled');
    expect(got.headers['x-service-signature']).toMatch(/^[0-9a-f]{64}$/);
    const body = JSON.parse(got.body);
    expect(validateEventEnvelope(body)).toEqual([]);
    expect(body.data.object).toEqual({
      amount: '12.50',
      status: 'canceled',
      currency: 'USDT',
      exchange_rate: '1',
      order_id: 'order-77',
      session_id: sessionId,
      source: 'api',
    });
    const { rows } = await sql<{ text: string }>`select payload::text as text from outbox_events where id = ${body.id}`.execute(h.db);
    expect(got.body).toBe(rows[0]!.text);
    const d = await finalState(body.id);
    expect(d.status).toBe('delivered');
    expect(d.attempts).toBe(1);
    const log = await attempts(body.id);
    expect(log.map((a) => [a.attempt, a.status_code, a.outcome])).toEqual([[1, 200, 'delivered']]);
    expect(log[0]!.url).toBe(r.url);
    expect(log[0]!.latency_ms).toBeGreaterThanOrEqual(0);
  });

  it('answers 500, 500, 200: delivered on the third attempt, same id and body, fresh nonce and signature, on schedule', async () => {
    const { r, m } = await merchantWithReceiver();
    r.answer = (_req, n) => (n <= 2 ? 500 : 200);
    const [id] = await h.emit(m.id);
    const d = await finalState(id!);
    expect(d.status).toBe('delivered');
    const seen = r.forEvent(id!);
    expect(seen).toHaveLength(3);
    for (const s of seen) expect(s.problems).toEqual([]);
    expect(new Set(seen.map((s) => s.body)).size).toBe(1);
    expect(new Set(seen.map((s) => s.headers['x-service-event-id'])).size).toBe(1);
    expect(new Set(seen.map((s) => s.headers['x-service-nonce'])).size).toBe(3);
    expect(new Set(seen.map((s) => s.headers['x-service-signature'])).size).toBe(3);
    expect(seen[1]!.at - seen[0]!.at).toBeGreaterThanOrEqual(SCHEDULE[0]! - 5);
    expect(seen[2]!.at - seen[1]!.at).toBeGreaterThanOrEqual(SCHEDULE[1]! - 5);
    const log = await attempts(id!);
    expect(log.map((a) => [a.attempt, a.status_code, a.error, a.outcome])).toEqual([
      [1, 500, 'http_500', 'retrying'],
      [2, 500, 'http_500', 'retrying'],
      [3, 200, null, 'delivered'],
    ]);
  });

  it('delivers the events of one object in the order they were written, even when the first needs retries', async () => {
    const { r, m } = await merchantWithReceiver();
    const { insertOutboxEvent } = await import('../../src/ledger/core/outbox.js');
    const aggregateId = `sub_${randomBytes(12).toString('hex')}`;
    const types = ['subscription.created', 'subscription.active', 'subscription.updated', 'subscription.canceled'];
    const ids = await h.t.db.transaction().execute(async (trx) => {
      const out: string[] = [];
      for (const type of types) {
        out.push(
          await insertOutboxEvent(trx, {
            merchantId: m.id,
            mode: 'test',
            type,
            aggregateId,
            object: { subscription_id: aggregateId, status: type.split('.')[1] },
          }),
        );
      }
      return out;
    });
    // The first event fails twice before it is accepted; the others must not overtake it.
    r.answer = (req, n) => (req.eventId === ids[0] && n <= 2 ? 500 : 200);
    for (const id of ids) expect((await finalState(id)).status).toBe('delivered');
    const accepted = r.received.filter((x) => x.answeredWith === 200).map((x) => x.eventId);
    expect(accepted).toEqual(ids);
  });

  it('answers 404: one attempt only, then failed', async () => {
    const { r, m } = await merchantWithReceiver();
    r.answer = () => 404;
    const [id] = await h.emit(m.id);
    const d = await finalState(id!);
    expect(d.status).toBe('failed');
    expect(d.last_status_code).toBe(404);
    await new Promise((res) => setTimeout(res, SCHEDULE[0]! * 3));
    expect(r.forEvent(id!)).toHaveLength(1);
    expect((await attempts(id!)).map((a) => [a.attempt, a.status_code, a.outcome])).toEqual([[1, 404, 'failed']]);
  });

  it('answers 429, then hangs past the timeout, then 200: delivered on the third attempt', async () => {
    const { r, m } = await merchantWithReceiver();
    r.answer = (_req, n) => (n === 1 ? 429 : n === 2 ? 'hang' : 200);
    const [id] = await h.emit(m.id);
    const d = await finalState(id!);
    expect(d.status).toBe('delivered');
    expect(r.forEvent(id!).map((s) => s.answeredWith)).toEqual([429, 'hang', 200]);
    const log = await attempts(id!);
    expect(log.map((a) => [a.attempt, a.status_code, a.error, a.outcome])).toEqual([
      [1, 429, 'http_429', 'retrying'],
      [2, null, 'timeout', 'retrying'],
      [3, 200, null, 'delivered'],
    ]);
    expect(log[1]!.latency_ms).toBeGreaterThanOrEqual(TIMEOUT_MS - 5);
  });

  it('never answers: exactly 6 attempts (5 retries on the schedule), then failed', async () => {
    const { r, m } = await merchantWithReceiver();
    r.answer = () => 'hang';
    const [id] = await h.emit(m.id);
    const d = await finalState(id!, 30_000);
    expect(d.status).toBe('failed');
    expect(d.attempts).toBe(6);
    await new Promise((res) => setTimeout(res, 1000));
    const seen = r.forEvent(id!);
    expect(seen).toHaveLength(6);
    // A retry never comes before its scheduled delay. (The attempt's timeout starts when the sender writes the
    // request, before the receiver stamps its arrival, so the arrival gap can be shorter than timeout + delay by the
    // request's transit time on a loaded machine; that each attempt timed out is the `error` column below.)
    for (let i = 1; i < 6; i++) expect(seen[i]!.at - seen[i - 1]!.at).toBeGreaterThanOrEqual(SCHEDULE[i - 1]!);
    const log = await attempts(id!);
    expect(log.map((a) => a.attempt)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(log.map((a) => a.outcome)).toEqual(['retrying', 'retrying', 'retrying', 'retrying', 'retrying', 'failed']);
    expect(new Set(log.map((a) => a.error))).toEqual(new Set(['timeout']));
  });

  it('retries 5xx and 429 exactly 5 times, never before 1, 2, 4, 8 and 16 base delays, then fails', async () => {
    const { r, m } = await merchantWithReceiver();
    const answers = [500, 502, 503, 504, 429, 500] as const;
    r.answer = (_req, n) => answers[n - 1] ?? 200;
    const [id] = await h.emit(m.id);
    const d = await finalState(id!, 30_000);
    expect(d.status).toBe('failed');
    expect(d.attempts).toBe(6);
    await new Promise((res) => setTimeout(res, SCHEDULE.at(-1)! * 1.5));
    const seen = r.forEvent(id!);
    expect(seen.map((s) => s.answeredWith)).toEqual([...answers]);
    // Each gap is at least its scheduled delay, which doubles, in order. No upper bound on a gap: on a loaded machine an
    // attempt can start late (the jitter's ceiling is the pure retryDelayMs's, test/unit/webhooks-signing.test.ts ›
    // retry policy); what is recorded is held to it below instead.
    const gaps = seen.slice(1).map((s, i) => s.at - seen[i]!.at);
    gaps.forEach((gap, i) => {
      expect(gap, `gap ${i + 1}: ${gaps.join(', ')}`).toBeGreaterThanOrEqual(SCHEDULE[i]! - 5);
    });
    const log = await attempts(id!);
    // The attempts were recorded in order, and the last retry was scheduled (next_attempt_at, written with the attempt
    // before it) no earlier than its delay allows and no later than the delay plus 10 % jitter after that attempt's
    // record: both sides read from the stored rows, so the machine's load cannot move them.
    const at = log.map((a) => a.created_at.getTime());
    expect([...at].sort((a, b) => a - b)).toEqual(at);
    const scheduled = d.next_attempt_at.getTime() - at[4]!;
    expect(scheduled).toBeLessThanOrEqual(SCHEDULE[4]! * (1 + JITTER));
    expect(scheduled).toBeGreaterThanOrEqual(SCHEDULE[4]! - 1000);
    expect(log.map((a) => [a.attempt, a.status_code, a.outcome])).toEqual([
      [1, 500, 'retrying'],
      [2, 502, 'retrying'],
      [3, 503, 'retrying'],
      [4, 504, 'retrying'],
      [5, 429, 'retrying'],
      [6, 500, 'failed'],
    ]);
  });

  it('does not retry any other 4xx (nor 3xx): one attempt, then failed', async () => {
    const { r, m } = await merchantWithReceiver();
    const statuses = [400, 401, 403, 405, 409, 410, 413, 422, 301];
    const ids = await h.emit(m.id, statuses.length);
    const statusOf = new Map(ids.map((id, i) => [id, statuses[i]!]));
    r.answer = (req) => statusOf.get(req.eventId ?? '') ?? 200;
    for (const id of ids) {
      const d = await finalState(id);
      expect(d.status, `${statusOf.get(id)}`).toBe('failed');
      expect(d.last_status_code).toBe(statusOf.get(id));
    }
    await new Promise((res) => setTimeout(res, SCHEDULE[0]! * 4));
    for (const id of ids) {
      // The one answer the service read is final. An answer that reached the service only after its 400 ms timeout
      // (a loaded machine: the receiver runs in this process) was never read, so that attempt is a network timeout and
      // is retried like one; every attempt but the last must be such a timeout, and no request follows the last.
      const log = await attempts(id);
      expect(log.at(-1)!.status_code, `${statusOf.get(id)}`).toBe(statusOf.get(id));
      expect(log.at(-1)!.outcome).toBe('failed');
      for (const a of log.slice(0, -1))
        expect([a.status_code, a.outcome, a.error === 'timeout' || !!a.error?.startsWith('network: ')]).toEqual([null, 'retrying', true]);
      expect(r.forEvent(id).length, `${statusOf.get(id)}`).toBe(log.length);
    }
  });

  it('connection reset counts as a network error and is retried', async () => {
    const { r, m } = await merchantWithReceiver();
    r.answer = (_req, n) => (n === 1 ? 'reset' : 200);
    const [id] = await h.emit(m.id);
    expect((await finalState(id!)).status).toBe('delivered');
    const log = await attempts(id!);
    expect(log[0]!.error).toMatch(/^network: /);
    expect(log.map((a) => a.outcome)).toEqual(['retrying', 'delivered']);
  });

  it('records events of a merchant without a webhook URL as skipped, in the log, without a request', async () => {
    const m = await h.merchant(null);
    const [id] = await h.emit(m.id);
    const d = await finalState(id!);
    expect(d.status).toBe('skipped');
    expect(d.last_error).toBe('no_webhook_url');
    const log = await attempts(id!);
    expect(log.map((a) => [a.attempt, a.outcome, a.error])).toEqual([[null, 'skipped', 'no_webhook_url']]);
    const { rows } = await sql<{ relayed: boolean }>`select relayed_at is not null as relayed from outbox_events where id = ${id!}`.execute(
      h.db,
    );
    expect(rows[0]!.relayed).toBe(true);
  });

  it('refuses a live-mode event to an http loopback URL at delivery time, without a request', async () => {
    const { r, m } = await merchantWithReceiver();
    const [id] = await h.emit(m.id, 1, { mode: 'live' });
    const d = await finalState(id!);
    expect(d.status).toBe('failed');
    expect(d.last_error).toMatch(/^url_refused: live mode requires https/);
    expect(r.received).toHaveLength(0);
    // The same merchant's test-mode events still go to the loopback receiver.
    const [testId] = await h.emit(m.id, 1, { mode: 'test' });
    expect((await finalState(testId!)).status).toBe('delivered');
  });

  it('during a rotation overlap: the spec header is one HMAC with the new secret, the old secret signs X-Service-Signature-Previous; after it, only the new', async () => {
    const { r, m } = await merchantWithReceiver();
    const rotated = await rotateWebhookSecret(h.db, h.box, m.id, 1);
    expect(rotated?.webhookSecret).toMatch(/^whsec_/);
    expect(rotated!.previousValidUntil!.getTime()).toBeGreaterThan(Date.now() + 3500_000);
    // A receiver built to the spec with the new secret accepts through X-Service-Signature alone.
    r.secrets = [rotated!.webhookSecret];
    const [a] = await h.emit(m.id);
    expect((await finalState(a!)).status).toBe('delivered');
    const ra = r.forEvent(a!)[0]!;
    expect(ra.problems).toEqual([]);
    expect(ra.matchedHeader).toBe('x-service-signature');
    expect(ra.headers['x-service-signature']).toMatch(/^[0-9a-f]{64}$/);
    expect(ra.headers['x-service-signature-previous']).toMatch(/^[0-9a-f]{64}$/);
    // A receiver still on the old secret accepts only when built to check the previous-secret header too.
    r.secrets = [m.secret];
    r.acceptPrevious = true;
    const [b] = await h.emit(m.id);
    expect((await finalState(b!)).status).toBe('delivered');
    expect(r.forEvent(b!)[0]!).toMatchObject({ problems: [], matchedHeader: 'x-service-signature-previous' });
    // Overlap 0: the previous secret stops signing at once, and the extension header disappears.
    const again = await rotateWebhookSecret(h.db, h.box, m.id, 0);
    r.secrets = [rotated!.webhookSecret];
    r.answer = () => 400; // an honest receiver refuses what it cannot verify
    const [c] = await h.emit(m.id);
    expect((await finalState(c!)).status).toBe('failed');
    const rc = r.forEvent(c!)[0]!;
    expect(rc.problems).toEqual(['signature']);
    expect(rc.headers['x-service-signature-previous']).toBeUndefined();
    r.secrets = [again!.webhookSecret];
    r.acceptPrevious = false;
    r.answer = () => 200;
    const [e] = await h.emit(m.id);
    await finalState(e!);
    expect(r.forEvent(e!)[0]!.problems).toEqual([]);
  });
});

describe('per-merchant concurrency', () => {
  let h2: WebhookHarness;
  let stops: Array<{ stop(): Promise<void> }> = [];
  beforeAll(async () => {
    h2 = await startWebhookHarness();
  });
  afterAll(async () => {
    for (const s of stops) await s.stop();
    await h2?.close();
  });

  it('a merchant whose endpoint hangs holds at most its share of slots; another merchant is delivered meanwhile', async () => {
    // Structural, not timed: the slow endpoint holds its requests open until the test releases them (the worker's
    // timeout is far away), and every fast event must be delivered while both of the slow merchant's slots are held.
    const slow = await receiver();
    const fast = await receiver();
    const ms = await h2.merchant(slow.url, 'Slow');
    const mf = await h2.merchant(fast.url, 'Fast');
    slow.secrets = [ms.secret];
    fast.secrets = [mf.secret];
    let released = false;
    let maxInFlight = 0;
    slow.answer = () => {
      if (released) return 200;
      maxInFlight = Math.max(maxInFlight, slow.hanging + 1); // the hanging ones and this one
      return 'hang';
    };
    stops = [
      startOutboxRelay({ db: h2.db, redis: h2.redis, prefix: h2.prefix, databaseUrl: h2.t.url, pollIntervalMs: 200 }),
      startDeliveryWorker({
        db: h2.db,
        redis: h2.redis,
        box: h2.box,
        prefix: h2.prefix,
        retrySchedule: [60_000],
        timeoutMs: 120_000,
        concurrency: 4,
        perMerchantConcurrency: 2,
        merchantDeferMs: 50,
        allowPrivateTargetsInTest: true,
      }),
    ];
    const slowIds = await h2.emit(ms.id, 12);
    await slow.waitFor(() => slow.hanging >= 2, 60_000);
    const fastIds = await h2.emit(mf.id, 20);
    await fast.waitFor(() => fastIds.every((id) => fast.forEvent(id).length === 1), 60_000);
    // Every fast event went through while the slow merchant held its two slots, and no third slow request started.
    expect(slow.hanging).toBe(2);
    expect(slow.received.length).toBe(2);
    expect(maxInFlight).toBe(2);
    for (const id of fastIds) expect(fast.forEvent(id)[0]!.problems).toEqual([]);

    // Released, the slow merchant's events all go through, each once, never more than two at a time.
    released = true;
    slow.releaseHanging(200);
    await slow.waitFor(() => slowIds.every((id) => slow.forEvent(id).length >= 1), 60_000);
    expect(slowIds.map((id) => slow.forEvent(id).length)).toEqual(slowIds.map(() => 1));
    expect(maxInFlight).toBe(2);
  }, 180_000);
});
