import type { Redis } from 'ioredis';
import type { Db } from '../db/database.js';
import { judgeWebhookUrl, rotateEndpointSecret, setWebhookEndpoint } from '../operations/webhooks-endpoint.js';
import { resendEvent, resendFailedSince, withDeliveryQueue } from '../operations/webhooks-resend.js';
import type { SecretBox } from '../security/secret-box.js';
import { webhookSettingsFrom } from '../webhooks/config.js';
import { listFailedDeliveries } from '../webhooks/deliveries.js';
import type { WebhookDb } from '../webhooks/schema.js';
import type { Resolver, TargetPolicy } from '../webhooks/url-policy.js';
import { UsageError, options, print, required } from './args.js';

// Operator commands for webhooks: a face over src/operations/webhooks-*.ts (the console calls the same). Output is JSON. The only secret ever printed is a freshly rotated webhook secret,
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
      const r = await withDeliveryQueue(ctx.redis, prefixOf(ctx), (q) => resendEvent(db, q, id));
      if (r.result === 'unknown_event') throw new Error(`no event ${id}`);
      out(r);
      return;
    }
    case 'resend-failed': {
      const { values } = options(rest, { since: { type: 'string' }, merchant: { type: 'string' }, 'include-skipped': { type: 'boolean' } });
      const from = since(required(values.since, 'since'));
      const r = await withDeliveryQueue(ctx.redis, prefixOf(ctx), (q) =>
        resendFailedSince(db, q, {
          since: from!,
          merchantId: values.merchant || undefined,
          includeSkipped: values['include-skipped'] === true,
        }),
      );
      out(r);
      return;
    }
    case 'rotate-secret': {
      const { values } = options(rest, { merchant: { type: 'string' }, 'overlap-hours': { type: 'string' } });
      const merchantId = required(values.merchant, 'merchant');
      const overlap = values['overlap-hours'] === undefined ? settings.secretOverlapHours : Number(values['overlap-hours']);
      if (!Number.isFinite(overlap) || overlap < 0 || overlap > 24 * 30) throw new UsageError('--overlap-hours must be 0..720');
      const r = await rotateEndpointSecret(db, ctx.box, merchantId, overlap);
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
      const policy = { allowPrivateTargetsInTest: settings.allowPrivateTargetsInTest, ...(ctx.resolve ? { resolve: ctx.resolve } : {}) };
      if (values.clear) {
        if (values.url !== undefined) throw new UsageError('--clear and --url exclude each other');
        const r = await setWebhookEndpoint(db, merchantId, { url: null, testOnly: false }, policy);
        if (r.kind === 'no_merchant') throw new Error(`no merchant ${merchantId}`);
        out({ merchant_id: merchantId, webhook_url: null });
        return;
      }
      const url = required(values.url, 'url');
      const r = await setWebhookEndpoint(db, merchantId, { url, testOnly: values['test-only'] === true }, policy);
      if (r.kind === 'refused') throw webhookUrlRefusal(r.verdict);
      if (r.kind === 'no_merchant') throw new Error(`no merchant ${merchantId}`);
      const live = r.verdict?.ok ? r.verdict.live : { ok: true as const };
      out({ merchant_id: merchantId, webhook_url: url, live_deliverable: live.ok, ...(live.ok ? {} : { live_refusal: live.reason }) });
      return;
    }
    default:
      throw new UsageError(WEBHOOKS_USAGE);
  }
}

const prefixOf = (ctx: WebhooksCliContext): string => ctx.config.REDIS_KEY_PREFIX ?? 'sp';

/** The CLI's words for a URL the endpoint rules refuse. */
export function webhookUrlRefusal(v: { mode: 'live' | 'test'; reason: string }): UsageError {
  return v.mode === 'live'
    ? new UsageError(`refused for live mode: ${v.reason} (use --test-only for a URL that only test-mode events may use)`)
    : new UsageError(`refused: ${v.reason}`);
}

/**
 * The endpoint rules at configuration time (src/operations/webhooks-endpoint.ts judgeWebhookUrl), refusals as usage
 * errors. Answers the live verdict so callers can report it.
 */
export async function checkMerchantWebhookUrl(
  url: string,
  testOnly: boolean,
  policy: TargetPolicy,
): Promise<{ ok: true } | { ok: false; reason: string }> {
  const v = await judgeWebhookUrl(url, testOnly, policy);
  if (!v.ok) throw webhookUrlRefusal(v);
  return v.live;
}
