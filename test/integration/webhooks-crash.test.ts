import { spawn, type ChildProcess } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { sql } from 'kysely';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startDeliveryWorker, startOutboxRelay } from '../../src/webhooks/index.js';
import { REDIS_URL } from '../support/env.js';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.js';
import { eventually, MASTER_KEY, startWebhookHarness, type WebhookHarness } from './webhooks-harness.js';

// A real relay or worker process is SIGKILLed with 500 events pending. Afterwards every event is delivered, and no
// event id ever reaches the receiver under two different bodies.

const CHILD = join(dirname(fileURLToPath(import.meta.url)), 'webhooks-child-process.ts');
const N = 500;

interface Child {
  proc: ChildProcess;
  output: string[];
  waitForLine(pred: (line: string) => boolean, timeoutMs?: number): Promise<void>;
}

function spawnChild(h: WebhookHarness, role: 'relay' | 'worker', extra: Record<string, string> = {}): Child {
  const proc = spawn(process.execPath, ['--import', 'tsx', CHILD], {
    env: {
      ...process.env,
      WH_ROLE: role,
      WH_DATABASE_URL: h.t.url,
      WH_REDIS_URL: REDIS_URL,
      WH_PREFIX: h.prefix,
      WH_MASTER_KEY: MASTER_KEY,
      ...extra,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output: string[] = [];
  let err = '';
  proc.stdout!.on('data', (d) => output.push(...String(d).split('\n').filter(Boolean)));
  proc.stderr!.on('data', (d) => (err += String(d)));
  return {
    proc,
    output,
    async waitForLine(pred, timeoutMs = 30_000) {
      const deadline = Date.now() + timeoutMs;
      while (!output.some(pred)) {
        if (proc.exitCode !== null) throw new Error(`child exited ${proc.exitCode}: ${err}`);
        if (Date.now() > deadline) throw new Error(`child: no matching line; stderr: ${err}`);
        await new Promise((r) => setTimeout(r, 10));
      }
    },
  };
}

async function kill(c: Child): Promise<void> {
  if (c.proc.exitCode !== null || c.proc.signalCode !== null) return;
  await new Promise<void>((resolve) => {
    c.proc.once('exit', () => resolve());
    c.proc.kill('SIGKILL');
  });
}

async function assertAllDeliveredOnce(h: WebhookHarness, r: WebhookReceiver, ids: string[]): Promise<void> {
  await eventually(
    async () =>
      (await sql<{ n: number }>`select count(*)::int as n from webhook_deliveries where status = 'delivered'`.execute(h.db)).rows[0]!.n,
    (n) => n === N,
    90_000,
  );
  const { rows } = await sql<{ id: string; text: string }>`select id, payload::text as text from outbox_events`.execute(h.db);
  const stored = new Map(rows.map((x) => [x.id, x.text]));
  const bodies = new Map<string, Set<string>>();
  for (const rec of r.received) {
    expect(rec.problems).toEqual([]);
    const set = bodies.get(rec.eventId!) ?? new Set<string>();
    set.add(rec.body);
    bodies.set(rec.eventId!, set);
  }
  for (const id of ids) {
    const set = bodies.get(id);
    expect(set, `event ${id} delivered`).toBeDefined();
    expect(set!.size, `event ${id} under one body`).toBe(1);
    expect([...set!][0]).toBe(stored.get(id));
  }
  // No event id was minted twice: the outbox has exactly the events written.
  expect(rows.length).toBe(N);
  const unrelayed = await sql<{ n: number }>`select count(*)::int as n from outbox_events where relayed_at is null`.execute(h.db);
  expect(unrelayed.rows[0]!.n).toBe(0);
}

describe('SIGKILL with 500 events pending', () => {
  let h: WebhookHarness;
  let r: WebhookReceiver;
  const children: Child[] = [];
  const stops: Array<{ stop(): Promise<void> }> = [];

  beforeAll(async () => {
    r = await startWebhookReceiver();
  });
  afterEach(async () => {
    for (const c of children.splice(0)) await kill(c);
    for (const s of stops.splice(0)) await s.stop();
    await h?.close();
    r.received.length = 0;
  });
  afterAll(async () => r?.close());

  it('kills the relay between enqueue and commit: every event delivered, one body per id', async () => {
    h = await startWebhookHarness();
    const m = await h.merchant(r.url);
    r.secrets = [m.secret];
    r.answer = () => 200;
    const ids = await h.emit(m.id, N);
    stops.push(
      startDeliveryWorker({
        db: h.db,
        redis: h.redis,
        box: h.box,
        prefix: h.prefix,
        retrySchedule: [100, 200, 300, 400, 500],
        timeoutMs: 2000,
        concurrency: 20,
        perMerchantConcurrency: 20,
        allowPrivateTargetsInTest: true,
      }),
    );
    const relay = spawnChild(h, 'relay', { WH_BATCH_SIZE: '25', WH_AFTER_ENQUEUE_DELAY_MS: '150' });
    children.push(relay);
    // Let a few batches through, then kill while a batch sits enqueued but uncommitted.
    await relay.waitForLine((l) => l.startsWith('enqueued'));
    await eventually(
      async () => relay.output.filter((l) => l.startsWith('enqueued')).length,
      (n) => n >= 4,
    );
    await new Promise((res) => setTimeout(res, 40));
    await kill(relay);
    const { rows } = await sql<{ relayed: number; unrelayed: number }>`
      select count(*) filter (where relayed_at is not null)::int as relayed, count(*) filter (where relayed_at is null)::int as unrelayed
      from outbox_events`.execute(h.db);
    expect(rows[0]!.relayed).toBeGreaterThan(0);
    expect(rows[0]!.unrelayed).toBeGreaterThan(0);
    // The killed batch was enqueued but never marked: those jobs exist (or already ran) while the rows stay unrelayed.
    const enqueuedBatches = relay.output.filter((l) => l.startsWith('enqueued')).length;
    expect(enqueuedBatches * 25).toBeGreaterThan(rows[0]!.relayed);
    // A new relay process finishes the work.
    const second = spawnChild(h, 'relay', { WH_BATCH_SIZE: '100' });
    children.push(second);
    await assertAllDeliveredOnce(h, r, ids);
  });

  it('kills the worker mid-flight: every event delivered, one body per id', async () => {
    h = await startWebhookHarness();
    const m = await h.merchant(r.url);
    r.secrets = [m.secret];
    r.answer = () => ({ status: 200, delayMs: 15 });
    const ids = await h.emit(m.id, N);
    stops.push(startOutboxRelay({ db: h.db, redis: h.redis, prefix: h.prefix, databaseUrl: h.t.url, batchSize: 100, pollIntervalMs: 100 }));
    const worker = spawnChild(h, 'worker');
    children.push(worker);
    await worker.waitForLine((l) => l === 'ready');
    await r.waitFor(() => r.received.length >= 100, 60_000);
    await kill(worker);
    const deliveredBefore = r.received.length;
    expect(deliveredBefore).toBeLessThan(N);
    children.push(spawnChild(h, 'worker'));
    await assertAllDeliveredOnce(h, r, ids);
  });
});
