import type { Redis } from 'ioredis';
import type { Db } from '../db/database.js';
import { rotateWebhookSecret, setWebhookUrl } from '../ledger/merchants/webhook-secrets.js';
import type { SecretBox } from '../security/secret-box.js';
import { webhookSettingsFrom } from '../webhooks/config.js';
import { ensureDeliveryRow, listFailedDeliveries, reopenDelivery } from '../webhooks/deliveries.js';
import { createDeliveryQueue, deliveryJob, type DeliveryQueue } from '../webhooks/queue.js';
import type { WebhookDb } from '../webhooks/schema.js';
import { checkWebhookTarget, checkWebhookTargetWithoutDns, type Resolver, type TargetPolicy } from '../webhooks/url-policy.js';
import { UsageError, options, print, required } from './args.js';

// Operator commands for webhooks. Output is JSON. The only secret ever printed is a freshly rotated webhook secret,
// once, for the operator to hand to the merchant.

export const WEBHOOKS_USAGE = `webhooks failed [--merchant <id>] [--since <iso>] [--limit N] [--include-skipped]
webhooks resend <evt_id>
webhooks resend-failed --since <iso> [--merchant <id>] [--include-skipped]
webhooks rotate-secret --merchant <id> [--overlap-hours N]
webhooks set-url --merchant <id> (--url <url> [--test-only] | --clear)`;

export interface WebhooksCliContext {
  db: Db | WebhookDb;
  redis: Redis;
  box: SecretBox;
  /** The service's parsed configuration: REDIS_KEY_PREFIX (the BullMQ prefix) and any WEBHOOK_* settings. */
  config: Partial<Record<string, unknown>> & { REDIS_KEY_PREFIX?: string };
  /** DNS for the endpoint rules (tests inject one). */
  resolve?: Resolver;
  /** Where JSON goes; stdout by default. */
  out?: (value: unknown) => void;
}

function since(value: string | boolean | undefined): Date | undefined {
  if (value === undefined) return undefined;
  const d = new Date(String(value));
  if (typeof value !== 'string' || Number.isNaN(d.getTime())) throw new UsageError('--since must be an ISO 8601 time');
  return d;
}

async function withQueue<T>(ctx: WebhooksCliContext, fn: (q: DeliveryQueue) => Promise<T>): Promise<T> {
  const q = createDeliveryQueue(ctx.redis, ctx.config.REDIS_KEY_PREFIX ?? 'sp');
  try {
    return await fn(q);
  } finally {
    await q.close();
  }
}

async function enqueue(q: DeliveryQueue, eventId: string, generation: number): Promise<string> {
  const j = deliveryJob({ eventId, generation });
  await q.queue.add(j.name, j.data, j.opts);
  return j.opts.jobId!;
}

/** Reopens one event's delivery in a new generation and enqueues it. */
async function resendOne(db: WebhookDb, q: DeliveryQueue, eventId: string): Promise<Record<string, unknown>> {
  const reopened = await reopenDelivery(db, eventId);
  if (!reopened) {
    const d = await db.selectFrom('webhook_deliveries').select(['status']).where('event_id', '=', eventId).executeTakeFirst();
    if (d) return { event_id: eventId, result: 'already_pending' };
    const o = await db.selectFrom('outbox_events').select(['relayed_at']).where('id', '=', eventId).executeTakeFirst();
    if (!o) return { event_id: eventId, result: 'unknown_event' };
    if (o.relayed_at === null) return { event_id: eventId, result: 'not_yet_relayed' };
    // Relayed but its delivery row lost to a crash: recreate it (pending, generation 0) and enqueue.
    await ensureDeliveryRow(db, eventId);
    return { event_id: eventId, result: 'resent', generation: 0, job_id: await enqueue(q, eventId, 0) };
  }
  return { event_id: eventId, result: 'resent', generation: reopened.generation, job_id: await enqueue(q, eventId, reopened.generation) };
}

export async function webhooksCli(args: string[], ctx: WebhooksCliContext): Promise<void> {
  const db = ctx.db;
  const out = ctx.out ?? print;
  const settings = webhookSettingsFrom(ctx.config);
  const [sub, ...rest] = args;
  switch (sub) {
    case 'failed': {
      const { values } = options(rest, {
        merchant: { type: 'string' },
        since: { type: 'string' },
        limit: { type: 'string' },
        'include-skipped': { type: 'boolean' },
      });
      const limit = values.limit === undefined ? 100 : Number(values.limit);
      if (!Number.isInteger(limit) || limit < 1 || limit > 10_000) throw new UsageError('--limit must be 1..10000');
      const rows = await listFailedDeliveries(db, {
        ...(values.merchant ? { merchantId: values.merchant } : {}),
        ...(values.since !== undefined ? { since: since(values.since) } : {}),
        includeSkipped: values['include-skipped'] === true,
        limit,
      });
      out(rows);
      return;
    }
    case 'resend': {
      const { positionals } = options(rest, {});
      const id = positionals[0];
      if (!id || positionals.length !== 1) throw new UsageError('webhooks resend <evt_id>');
      const r = await withQueue(ctx, (q) => resendOne(db, q, id));
      if (r.result === 'unknown_event') throw new Error(`no event ${id}`);
      out(r);
      return;
    }
    case 'resend-failed': {
      const { values } = options(rest, { since: { type: 'string' }, merchant: { type: 'string' }, 'include-skipped': { type: 'boolean' } });
      const from = since(required(values.since, 'since'));
      const rows = await listFailedDeliveries(db, {
        since: from!,
        ...(values.merchant ? { merchantId: values.merchant } : {}),
        includeSkipped: values['include-skipped'] === true,
      });
      const results = await withQueue(ctx, async (q) => {
        const acc: Array<Record<string, unknown>> = [];
        for (const row of rows) acc.push(await resendOne(db, q, row.event_id));
        return acc;
      });
      out({ resent: results.filter((r) => r.result === 'resent').length, events: results });
      return;
    }
    case 'rotate-secret': {
      const { values } = options(rest, { merchant: { type: 'string' }, 'overlap-hours': { type: 'string' } });
      const merchantId = required(values.merchant, 'merchant');
      const overlap = values['overlap-hours'] === undefined ? settings.secretOverlapHours : Number(values['overlap-hours']);
      if (!Number.isFinite(overlap) || overlap < 0 || overlap > 24 * 30) throw new UsageError('--overlap-hours must be 0..720');
      const r = await rotateWebhookSecret(db, ctx.box, merchantId, overlap);
      if (!r) throw new Error(`no merchant ${merchantId}`);
      out({
        merchant_id: merchantId,
        webhook_secret: r.webhookSecret,
        previous_secret_valid_until: r.previousValidUntil?.toISOString() ?? null,
      });
      return;
    }
    case 'set-url': {
      const { values } = options(rest, {
        merchant: { type: 'string' },
        url: { type: 'string' },
        'test-only': { type: 'boolean' },
        clear: { type: 'boolean' },
      });
      const merchantId = required(values.merchant, 'merchant');
      if (values.clear) {
        if (values.url !== undefined) throw new UsageError('--clear and --url exclude each other');
        if (!(await setWebhookUrl(db, merchantId, null))) throw new Error(`no merchant ${merchantId}`);
        out({ merchant_id: merchantId, webhook_url: null });
        return;
      }
      const url = required(values.url, 'url');
      const policy = { allowPrivateTargetsInTest: settings.allowPrivateTargetsInTest, ...(ctx.resolve ? { resolve: ctx.resolve } : {}) };
      const live = await checkMerchantWebhookUrl(url, values['test-only'] === true, policy);
      if (!(await setWebhookUrl(db, merchantId, url))) throw new Error(`no merchant ${merchantId}`);
      out({ merchant_id: merchantId, webhook_url: url, live_deliverable: live.ok, ...(live.ok ? {} : { live_refusal: live.reason }) });
      return;
    }
    default:
      throw new UsageError(WEBHOOKS_USAGE);
  }
}

/**
 * The endpoint rules at configuration time: a URL must pass the live-mode rules, or, when the operator says it is
 * for test-mode events only, the test-mode rules, checked without DNS (a test host need not resolve yet; every
 * attempt is checked again with DNS). Answers the live verdict so callers can report it; with `--test-only` a host
 * name is not looked up, so its live verdict is "not checked".
 */
export async function checkMerchantWebhookUrl(
  url: string,
  testOnly: boolean,
  policy: TargetPolicy,
): Promise<{ ok: true } | { ok: false; reason: string }> {
  if (!testOnly) {
    const live = await checkWebhookTarget(url, 'live', policy);
    if (!live.ok) {
      throw new UsageError(`refused for live mode: ${live.reason} (use --test-only for a URL that only test-mode events may use)`);
    }
    return live;
  }
  const test = checkWebhookTargetWithoutDns(url, 'test', policy);
  if (!test.ok) throw new UsageError(`refused: ${test.reason}`);
  const live = checkWebhookTargetWithoutDns(url, 'live', policy);
  if (live.ok && !live.resolved) return { ok: false, reason: 'not checked: --test-only does not resolve the host' };
  return live;
}
