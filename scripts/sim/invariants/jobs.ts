import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import type { Invariant, InvariantContext, Violation } from '../contract.js';

export const JOBS_INVARIANT = 'no-job-left-unresumed';

/** Queues that only carry periodic maintenance (job schedulers): their next run is always pending by design. */
const MAINTENANCE = new Set(['expiry-sweep', 'payout-sweep']);

export interface JobsInvariantOptions {
  /** How long past due a delayed or waiting job of a work queue may be before it counts as abandoned (default 30 s). */
  graceMs?: number;
  now?: () => number;
}

// No process left a job that nobody will resume (issue #20 item 3), read after the drain from the seed's Redis and
// database. BullMQ keeps each queue under `<prefix>:<queue>:…`; the service's job queues live under
// `<REDIS_KEY_PREFIX>:bull` and the webhook deliveries under `<REDIS_KEY_PREFIX>` (src/jobs/queues.ts,
// src/webhooks/queue.ts); every queue found under the prefix is checked:
// - an active job whose lock key is gone (its worker died) while no worker serves the queue: a live worker's
//   stalled-job check would take it back, so with one it is not abandoned;
// - a delayed job of a work queue more than the grace past its due time, or a waiting one enqueued more than the grace
//   ago (no worker is taking that queue);
// - in the database: a refund still pending or processing with no `payout-<id>` job and no payout-sweep scheduler to
//   re-add one; a webhook delivery still pending with no job for its generation; a subscription charge or sweep step
//   still in flight (signed or broadcast / processing) after the drain.
export function noJobLeftUnresumed(opts: JobsInvariantOptions = {}): Invariant {
  return async (ctx) => check(ctx, opts.graceMs ?? 30_000, opts.now ?? Date.now);
}

async function check(ctx: InvariantContext, graceMs: number, now: () => number): Promise<Violation[]> {
  const out: Violation[] = [];
  const v = (subject: string, message: string) => out.push({ invariant: JOBS_INVARIANT, subject, message });
  const redis = new Redis(ctx.redis.url, { lazyConnect: true, maxRetriesPerRequest: 2 });
  await redis.connect();
  try {
    const root = ctx.redis.prefix.replace(/:bull$/, '');
    const queues = new Map<string, string>(); // queue base key → queue name
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${root}:*:meta`, 'COUNT', 1000);
      cursor = next;
      for (const k of keys) {
        const base = k.slice(0, -':meta'.length);
        queues.set(base, base.slice(base.lastIndexOf(':') + 1));
      }
    } while (cursor !== '0');

    const live = new Map<string, Set<string>>(); // queue name → ids of waiting, active, delayed, prioritized jobs
    const t = now();
    for (const [base, name] of queues) {
      const ids = new Set<string>();
      live.set(name, ids);
      const unlocked: string[] = [];
      for (const id of await redis.lrange(`${base}:active`, 0, -1)) {
        ids.add(id);
        if (!(await redis.exists(`${base}:${id}:lock`))) unlocked.push(id);
      }
      // A live worker's stalled-job check takes an unlocked active job back; only with none is it abandoned.
      if (unlocked.length > 0 && (await workersOf(redis, base, name)) === 0)
        for (const id of unlocked)
          v(`${name}/${id}`, `job ${id} of queue ${name} is active, no worker holds its lock and no worker serves the queue`);
      const delayed = await redis.zrange(`${base}:delayed`, '0', '-1', 'WITHSCORES');
      for (let i = 0; i < delayed.length; i += 2) {
        const id = delayed[i]!;
        ids.add(id);
        const due = Math.floor(Number(delayed[i + 1]) / 0x1000);
        if (!MAINTENANCE.has(name) && due + graceMs < t)
          v(`${name}/${id}`, `delayed job ${id} of queue ${name} was due ${t - due} ms ago and nobody ran it`);
      }
      const waiting = [...(await redis.lrange(`${base}:wait`, 0, -1)), ...(await redis.zrange(`${base}:prioritized`, '0', '-1'))];
      for (const id of waiting) {
        ids.add(id);
        const ts = Number(await redis.hget(`${base}:${id}`, 'timestamp'));
        if (!MAINTENANCE.has(name) && Number.isFinite(ts) && ts + graceMs < t)
          v(`${name}/${id}`, `job ${id} of queue ${name} has waited ${t - ts} ms and no worker took it`);
      }
    }

    const payoutJobs = live.get('payouts') ?? new Set<string>();
    const sweepScheduled =
      [...queues.entries()].some(([, n]) => n === 'payout-sweep') && (await schedulerExists(redis, queues, 'payout-sweep'));
    const openRefunds = await ctx.db
      .selectFrom('refunds')
      .select(['id', 'status'])
      .where('status', 'in', ['pending', 'processing'])
      .execute();
    for (const r of openRefunds)
      if (!payoutJobs.has(`payout-${r.id}`) && !sweepScheduled)
        v(r.id, `refund ${r.id} is ${r.status} with no payout job and no payout-sweep scheduler to give it one`);

    const deliveryJobs = live.get('webhook-deliveries') ?? new Set<string>();
    const pending = await ctx.db
      .selectFrom('webhook_deliveries')
      .select(['event_id', 'generation'])
      .where('status', '=', 'pending')
      .execute();
    for (const d of pending) {
      const id = d.generation === 0 ? d.event_id : `${d.event_id}-r${d.generation}`;
      if (!deliveryJobs.has(id))
        v(d.event_id, `webhook delivery ${d.event_id} (generation ${d.generation}) is pending with no job to send it`);
    }

    const charges = await ctx.db
      .selectFrom('subscription_charges')
      .select(['id', 'state'])
      .where('state', 'in', ['signed', 'broadcast'])
      .execute();
    for (const c of charges) v(`charge:${c.id}`, `subscription charge ${c.id} is still ${c.state} after the drain`);
    const steps = await ctx.db.selectFrom('sweep_steps').select(['id', 'sweep_id', 'status']).where('status', '=', 'processing').execute();
    for (const s of steps) v(`sweep:${s.sweep_id}/${s.id}`, `sweep step ${s.id} of ${s.sweep_id} is still processing after the drain`);
  } finally {
    redis.disconnect();
  }
  return out;
}

/** Workers connected to the queue (BullMQ names their Redis connections after it). */
async function workersOf(redis: Redis, base: string, name: string): Promise<number> {
  const queue = new Queue(name, { connection: redis, prefix: base.slice(0, base.length - name.length - 1) });
  try {
    return await queue.getWorkersCount();
  } finally {
    await queue.close();
  }
}

async function schedulerExists(redis: Redis, queues: Map<string, string>, name: string): Promise<boolean> {
  for (const [base, n] of queues) if (n === name && (await redis.zcard(`${base}:repeat`)) > 0) return true;
  return false;
}
