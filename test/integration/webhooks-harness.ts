import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import type { Mode } from '../../src/db/schema.js';
import { createMerchant } from '../../src/ledger/merchants/merchants.js';
import { insertOutboxEvent } from '../../src/ledger/core/outbox.js';
import { SecretBox } from '../../src/security/secret-box.js';
import type { WebhookDb } from '../../src/webhooks/schema.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';
import { REDIS_URL } from '../support/env.js';

// Shared set-up of the webhook tests: a fresh database, a Redis key prefix of their own (removed on close), merchants
// and outbox events written the way the ledger writes them.

export const MASTER_KEY = '7c'.repeat(32);

export interface WebhookHarness {
  t: TestDatabase;
  db: WebhookDb;
  redis: Redis;
  box: SecretBox;
  prefix: string;
  merchant(webhookUrl: string | null, name?: string): Promise<{ id: string; secret: string }>;
  emit(
    merchantId: string,
    n?: number,
    opts?: { mode?: Mode; type?: string; object?: (i: number) => Record<string, unknown> },
  ): Promise<string[]>;
  close(): Promise<void>;
}

export async function startWebhookHarness(): Promise<WebhookHarness> {
  const t = await createTestDatabase();
  const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
  const box = new SecretBox(MASTER_KEY);
  const prefix = `whtest_${randomBytes(5).toString('hex')}`;
  return {
    t,
    db: t.db,
    redis,
    box,
    prefix,
    async merchant(webhookUrl, name = 'Shop') {
      const m = await createMerchant(t.db, box, { name, webhookUrl });
      return { id: m.merchantId, secret: m.webhookSecret };
    },
    async emit(merchantId, n = 1, opts = {}) {
      return t.db.transaction().execute(async (trx) => {
        const ids: string[] = [];
        for (let i = 0; i < n; i++) {
          ids.push(
            await insertOutboxEvent(trx, {
              merchantId,
              mode: opts.mode ?? 'test',
              type: opts.type ?? 'payment.completed',
              object: opts.object?.(i) ?? {
                amount: `${10 + i}.00`,
                status: 'completed',
                currency: 'USDT',
                exchange_rate: '1',
                order_id: `order-${i}-${randomBytes(3).toString('hex')}`,
                session_id: `cs_${randomBytes(12).toString('hex')}`,
                source: 'api',
              },
            }),
          );
        }
        return ids;
      });
    },
    async close() {
      let cursor = '0';
      do {
        const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
        cursor = next;
        if (keys.length) await redis.del(...keys);
      } while (cursor !== '0');
      redis.disconnect();
      await t.destroy();
    },
  };
}

export async function eventually<T>(fn: () => Promise<T>, ok: (v: T) => boolean, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (ok(v)) return v;
    if (Date.now() > deadline)
      throw new Error(
        `condition not met in ${timeoutMs} ms; last value: ${JSON.stringify(v, (_k, x) => (typeof x === 'bigint' ? x.toString() : x))}`,
      );
    await new Promise((r) => setTimeout(r, 50));
  }
}
