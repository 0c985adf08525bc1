import { sql } from 'kysely';
import type { Redis } from 'ioredis';
import pg from 'pg';
import type { Db } from '../db/database.js';
import { errorText, silentLogger, type WebhookLogger } from './logger.js';
import { createDeliveryQueue, deliveryJob, type DeliveryJobData } from './queue.js';
import { type WebhookDb } from './schema.js';
import type { Queue } from 'bullmq';

// Outbox relay. One transaction per batch: lock unrelayed rows in seq order (SKIP LOCKED, so several relays share
// the work), freeze each body into its delivery row, enqueue one job per event with the event id as job id, mark
// the rows relayed, commit. A crash before the commit leaves the rows unrelayed and unlocked: the next pass
// enqueues them again under the same job ids (a no-op while the first job lives; the worker ignores a delivery
// that is no longer pending). Nothing ever mints a second event id, and no committed row is skipped: the relay
// scans "relayed_at is null", not "seq > last seen", so an event whose transaction commits late is still found.

export interface OutboxRelayOptions {
  db: Db | WebhookDb;
  redis: Redis;
  /** BullMQ key prefix (the service's REDIS_KEY_PREFIX). */
  prefix: string;
  logger?: WebhookLogger;
  /** Enables LISTEN/NOTIFY wake-ups; without it the relay polls only. */
  databaseUrl?: string;
  batchSize?: number;
  pollIntervalMs?: number;
  /** Test seam: runs after a batch's jobs are enqueued and before its rows are marked relayed and committed. */
  afterEnqueue?: (eventIds: string[]) => Promise<void>;
}

export interface OutboxRelay {
  /** Runs one batch now; answers how many events it relayed. */
  relayOnce(): Promise<number>;
  stop(): Promise<void>;
}

interface OutboxRow {
  seq: bigint;
  id: string;
  merchant_id: string;
  has_url: boolean;
}

export async function relayBatch(
  db: WebhookDb,
  queue: Queue<DeliveryJobData>,
  batchSize: number,
  afterEnqueue?: (eventIds: string[]) => Promise<void>,
): Promise<number> {
  return db.transaction().execute(async (trx) => {
    const { rows } = await sql<OutboxRow>`
      select o.seq, o.id, o.merchant_id, (m.webhook_url is not null) as has_url
      from outbox_events o join merchants m on m.id = o.merchant_id
      where o.relayed_at is null
      order by o.seq
      limit ${batchSize}
      for update of o skip locked`.execute(trx);
    if (rows.length === 0) return 0;
    const ids = rows.map((r) => r.id);
    // Merchants without a URL: recorded as not deliverable (skipped), with a log row; never lost, resendable later.
    await sql`
      with ins as (
        insert into webhook_deliveries (event_id, merchant_id, mode, event_type, body, status, last_error, failed_at)
        select o.id, o.merchant_id, o.mode, o.type, o.payload::text,
               case when m.webhook_url is null then 'skipped' else 'pending' end,
               case when m.webhook_url is null then 'no_webhook_url' end,
               case when m.webhook_url is null then now() end
        from outbox_events o join merchants m on m.id = o.merchant_id
        where o.id = any(${ids})
        on conflict (event_id) do nothing
        returning event_id, merchant_id, status
      )
      insert into webhook_delivery_attempts (event_id, merchant_id, generation, outcome, error)
      select event_id, merchant_id, 0, 'skipped', 'no_webhook_url' from ins where status = 'skipped'`.execute(trx);
    const deliverable = rows.filter((r) => r.has_url);
    if (deliverable.length) await queue.addBulk(deliverable.map((r) => deliveryJob({ eventId: r.id, generation: 0 })));
    await afterEnqueue?.(ids);
    await sql`update outbox_events set relayed_at = now() where seq = any(${rows.map((r) => r.seq.toString())}::bigint[])`.execute(trx);
    return rows.length;
  });
}

export function startOutboxRelay(o: OutboxRelayOptions): OutboxRelay {
  const db = o.db;
  const logger = o.logger ?? silentLogger;
  const batchSize = o.batchSize ?? 500;
  const pollMs = o.pollIntervalMs ?? 1000;
  const dq = createDeliveryQueue(o.redis, o.prefix);
  const queue = dq.queue;
  let stopped = false;
  let wake: (() => void) | undefined;
  let pending = false; // a notification arrived while a batch ran
  const nudge = () => {
    pending = true;
    wake?.();
  };

  let listener: pg.Client | undefined;
  const listen = async () => {
    if (!o.databaseUrl || stopped) return;
    const client = new pg.Client({ connectionString: o.databaseUrl });
    client.on('notification', nudge);
    client.on('error', (err) => {
      logger.warn({ err: errorText(err) }, 'outbox relay: LISTEN connection lost; polling until it is back');
      listener = undefined;
      client.end().catch(() => {});
      if (!stopped) setTimeout(() => void listen(), pollMs).unref();
    });
    try {
      await client.connect();
      await client.query('listen outbox_events');
      listener = client;
      if (stopped) await client.end();
      nudge(); // events committed while not listening
    } catch (err) {
      logger.warn({ err: errorText(err) }, 'outbox relay: LISTEN failed; polling');
      client.end().catch(() => {});
      if (!stopped) setTimeout(() => void listen(), pollMs).unref();
    }
  };
  void listen();

  const loop = (async () => {
    let failures = 0;
    while (!stopped) {
      pending = false;
      let n = 0;
      try {
        n = await relayBatch(db, queue, batchSize, o.afterEnqueue);
        failures = 0;
        if (n > 0) logger.debug?.({ relayed: n }, 'outbox relay: batch relayed');
      } catch (err) {
        failures++;
        logger.error({ err: errorText(err) }, 'outbox relay: batch failed; will retry');
      }
      if (stopped) break;
      if (n === batchSize && failures === 0) continue;
      if (pending && failures === 0) continue;
      const waitMs = failures ? Math.min(pollMs * 2 ** Math.min(failures, 5), 30_000) : pollMs;
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, waitMs);
        wake = () => {
          clearTimeout(t);
          resolve();
        };
      });
      wake = undefined;
    }
  })();

  return {
    relayOnce: () => relayBatch(db, queue, batchSize, o.afterEnqueue),
    async stop() {
      stopped = true;
      wake?.();
      await loop;
      await listener?.end().catch(() => {});
      await dq.close();
    },
  };
}
