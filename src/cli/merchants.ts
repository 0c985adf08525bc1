import type { Db } from '../db/database.js';
import { createApiKey, createMerchant, listApiKeys, revokeApiKey } from '../ledger/merchants.js';
import type { SecretBox } from '../security/secret-box.js';
import type { TargetPolicy } from '../webhooks/url-policy.js';
import { UsageError, options, print, required } from './args.js';
import { checkMerchantWebhookUrl } from './webhooks.js';

export interface CliContext {
  db: Db;
  box: SecretBox;
}

// Operator commands for merchants and keys. Secrets are printed once, at creation, and never again.

/** `webhookPolicy`: the endpoint rules that --webhook-url must pass (docs/webhooks.md). */
export async function merchantCli(args: string[], ctx: CliContext & { webhookPolicy: TargetPolicy }): Promise<void> {
  const [sub, ...rest] = args;
  switch (sub) {
    case 'create': {
      const { values } = options(rest, { name: { type: 'string' }, 'webhook-url': { type: 'string' }, 'test-only': { type: 'boolean' } });
      const webhookUrl = values['webhook-url'];
      const name = required(values.name, 'name');
      if (webhookUrl !== undefined) await checkMerchantWebhookUrl(webhookUrl, values['test-only'] === true, ctx.webhookPolicy);
      const m = await createMerchant(ctx.db, ctx.box, { name: name, webhookUrl: webhookUrl ?? null });
      print({
        merchant_id: m.merchantId,
        name: values.name,
        webhook_url: webhookUrl ?? null,
        webhook_secret: m.webhookSecret,
        test_key: { key: m.testKey.key, secret: m.testKey.secret, key_prefix: m.testKey.key_prefix, mode: 'test' },
      });
      return;
    }
    case 'list': {
      const rows = await ctx.db.selectFrom('merchants').select(['id', 'name', 'webhook_url', 'created_at']).orderBy('created_at').execute();
      print(rows);
      return;
    }
    default:
      throw new UsageError('merchant create --name <name> [--webhook-url <url> [--test-only]] | merchant list');
  }
}

export async function keyCli(args: string[], ctx: CliContext): Promise<void> {
  const [sub, ...rest] = args;
  switch (sub) {
    case 'create': {
      const { values } = options(rest, { merchant: { type: 'string' }, mode: { type: 'string' } });
      const mode = required(values.mode, 'mode');
      if (mode !== 'test' && mode !== 'live') throw new UsageError('--mode must be test or live');
      const merchantId = required(values.merchant, 'merchant');
      const exists = await ctx.db.selectFrom('merchants').select('id').where('id', '=', merchantId).executeTakeFirst();
      if (!exists) throw new UsageError(`no merchant ${merchantId}`);
      const k = await createApiKey(ctx.db, ctx.box, merchantId, mode);
      print({ merchant_id: k.merchant_id, mode: k.mode, key: k.key, secret: k.secret, key_prefix: k.key_prefix });
      return;
    }
    case 'revoke': {
      const { positionals } = options(rest, {});
      const prefix = positionals[0];
      if (!prefix) throw new UsageError('key revoke <key-prefix>');
      const n = await revokeApiKey(ctx.db, prefix);
      if (n === 0) throw new UsageError(`no active key with prefix ${prefix}`);
      print({ revoked: prefix });
      return;
    }
    case 'list': {
      const { values } = options(rest, { merchant: { type: 'string' } });
      print(await listApiKeys(ctx.db, values.merchant));
      return;
    }
    default:
      throw new UsageError('key create --merchant <id> --mode test|live | key revoke <key-prefix> | key list [--merchant <id>]');
  }
}
