import type { Db } from '../db/database.js';
import {
  SESSION_LIFETIME_RANGE,
  UNDERPAYMENT_TOLERANCE_BPS_RANGE,
  listApiKeys,
  listMerchantSettings,
  type MerchantSettings,
  type MerchantSettingsUpdate,
} from '../ledger/merchants/merchants.js';
import { issueApiKey, revokeApiKeyByPrefix } from '../operations/api-keys.js';
import { createMerchantAccount, effectiveSettings, findMerchant, updateMerchant } from '../operations/merchants.js';
import type { SecretBox } from '../security/secret-box.js';
import type { TargetPolicy } from '../webhooks/url-policy.js';
import { UsageError, options, print, required } from './args.js';
import { webhookUrlRefusal } from './webhooks.js';

export interface CliContext {
  db: Db;
  box: SecretBox;
}

// Operator commands for merchants and keys: a face over src/operations/merchants.ts and api-keys.ts. Secrets are printed once, at creation, and never again.

export const MERCHANT_USAGE = `merchant create --name <name> [--webhook-url <url> [--test-only]]
merchant list
merchant show <merchant_id>
merchant update <merchant_id> [--session-lifetime-seconds N|default] [--underpayment-tolerance-bps N]`;

/**
 * `webhookPolicy`: the endpoint rules that --webhook-url must pass (docs/webhooks.md).
 * `defaultSessionLifetimeSeconds`: the deployment's SESSION_LIFETIME_SECONDS, shown as the effective lifetime of
 * merchants without their own.
 */
export async function merchantCli(
  args: string[],
  ctx: CliContext & { webhookPolicy: TargetPolicy; defaultSessionLifetimeSeconds: number },
): Promise<void> {
  const effective = (m: MerchantSettings) => effectiveSettings(m, ctx.defaultSessionLifetimeSeconds);
  const [sub, ...rest] = args;
  switch (sub) {
    case 'create': {
      const { values } = options(rest, { name: { type: 'string' }, 'webhook-url': { type: 'string' }, 'test-only': { type: 'boolean' } });
      const webhookUrl = values['webhook-url'];
      const name = required(values.name, 'name');
      const m = await createMerchantAccount(
        ctx.db,
        ctx.box,
        { name, webhookUrl: webhookUrl ?? null, testOnly: values['test-only'] === true },
        ctx.webhookPolicy,
      );
      if (m.kind === 'refused') throw webhookUrlRefusal(m.verdict);
      print({
        merchant_id: m.merchant.merchant_id,
        name: values.name,
        webhook_url: webhookUrl ?? null,
        webhook_secret: m.webhookSecret,
        test_key: { key: m.testKey.key, secret: m.testKey.secret, key_prefix: m.testKey.key_prefix, mode: 'test' },
      });
      return;
    }
    case 'list': {
      const { positionals } = options(rest, {});
      if (positionals.length > 0) throw new UsageError(MERCHANT_USAGE);
      print((await listMerchantSettings(ctx.db)).map(effective));
      return;
    }
    case 'show': {
      const { positionals } = options(rest, {});
      if (positionals.length !== 1) throw new UsageError('merchant show <merchant_id>');
      const m = await findMerchant(ctx.db, positionals[0]!);
      if (!m) throw new UsageError(`no merchant ${positionals[0]}`);
      print(effective(m));
      return;
    }
    case 'update': {
      const { values, positionals } = options(rest, {
        'session-lifetime-seconds': { type: 'string' },
        'underpayment-tolerance-bps': { type: 'string' },
      });
      if (positionals.length !== 1)
        throw new UsageError('merchant update <merchant_id> [--session-lifetime-seconds N|default] [--underpayment-tolerance-bps N]');
      const update: MerchantSettingsUpdate = {};
      const lifetime = values['session-lifetime-seconds'];
      if (lifetime !== undefined) {
        update.sessionLifetimeSeconds =
          lifetime === 'default' ? null : integerIn(lifetime, '--session-lifetime-seconds', SESSION_LIFETIME_RANGE, ' or default');
      }
      const bps = values['underpayment-tolerance-bps'];
      if (bps !== undefined)
        update.underpaymentToleranceBps = integerIn(bps, '--underpayment-tolerance-bps', UNDERPAYMENT_TOLERANCE_BPS_RANGE);
      if (Object.keys(update).length === 0)
        throw new UsageError('merchant update needs --session-lifetime-seconds or --underpayment-tolerance-bps');
      const m = await updateMerchant(ctx.db, positionals[0]!, update);
      if (!m) throw new UsageError(`no merchant ${positionals[0]}`);
      print(effective(m));
      return;
    }
    default:
      throw new UsageError(MERCHANT_USAGE);
  }
}

/** A decimal integer within the range, else a usage error naming the option. */
function integerIn(text: string, option: string, range: { min: number; max: number }, alternative = ''): number {
  const n = /^\d{1,9}$/.test(text) ? Number(text) : Number.NaN;
  if (!(n >= range.min && n <= range.max))
    throw new UsageError(`${option} must be an integer ${range.min}..${range.max}${alternative}, not ${text}`);
  return n;
}

export async function keyCli(args: string[], ctx: CliContext): Promise<void> {
  const [sub, ...rest] = args;
  switch (sub) {
    case 'create': {
      const { values } = options(rest, { merchant: { type: 'string' }, mode: { type: 'string' } });
      const mode = required(values.mode, 'mode');
      if (mode !== 'test' && mode !== 'live') throw new UsageError('--mode must be test or live');
      const merchantId = required(values.merchant, 'merchant');
      const r = await issueApiKey(ctx.db, ctx.box, merchantId, mode);
      if (r.kind === 'no_merchant') throw new UsageError(`no merchant ${merchantId}`);
      const k = r.key;
      print({ merchant_id: k.merchant_id, mode: k.mode, key: k.key, secret: k.secret, key_prefix: k.key_prefix });
      return;
    }
    case 'revoke': {
      const { positionals } = options(rest, {});
      const prefix = positionals[0];
      if (!prefix) throw new UsageError('key revoke <key-prefix>');
      const revoked = await revokeApiKeyByPrefix(ctx.db, prefix);
      if (!revoked) throw new UsageError(`no active key with prefix ${prefix}`);
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
