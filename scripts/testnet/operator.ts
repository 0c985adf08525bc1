import { HOT_WALLET_SLOT } from '../../chains/types.js';
import { createDb, type Db } from '../../src/db/database.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { createMerchant } from '../../src/ledger/merchants.js';
import { SecretBox } from '../../src/security/secret-box.js';
import { keyDeriverOf, keyMaterialFromEnv } from '../../src/signer/from-env.js';
import { createChainAdapter } from '../../src/watcher/adapter-factory.js';
import { loadChainSettings } from '../../src/watcher/config.js';
import type { Profile } from './profiles.js';

// What the operator of the service does for the run, with the service's own settings (its .env, or the demo's state
// file): create the merchant, and name the merchant's refund hot wallet so the run can fund it. The same calls as
// `npm run cli -- merchant create` and `payouts wallets`. Secrets stay in memory.

export interface RunMerchant {
  merchantId: string;
  key: string;
  secret: string;
  webhookSecret: string;
}

export interface Operator {
  createMerchant(name: string, webhookUrl: string): Promise<RunMerchant>;
  /** The merchant's refund hot wallet on the profile's network (test mode), as the chain displays it. */
  refundHotWallet(merchantId: string): Promise<string>;
  close(): Promise<void>;
}

export function missingOperatorSetting(env: Record<string, string | undefined>): string | null {
  for (const name of ['DATABASE_URL', 'MASTER_KEY']) if (!env[name]?.trim()) return name;
  if (!env.HD_MNEMONIC?.trim() && !env.HD_ACCOUNT_XPUBS?.trim()) return 'HD_MNEMONIC or HD_ACCOUNT_XPUBS';
  return null;
}

export async function openOperator(profile: Profile, env: Record<string, string | undefined>): Promise<Operator> {
  const db: Db = createDb(env.DATABASE_URL!, 2);
  const box = new SecretBox(env.MASTER_KEY!.trim());
  const keys = keyDeriverOf(keyMaterialFromEnv(env));
  return {
    async createMerchant(name, webhookUrl) {
      await migrateToLatest(db);
      const m = await createMerchant(db, box, { name, webhookUrl });
      return { merchantId: m.merchantId, key: m.testKey.key, secret: m.testKey.secret, webhookSecret: m.webhookSecret };
    },
    async refundHotWallet(merchantId) {
      if (!keys) throw new Error('the service settings have no HD_MNEMONIC or HD_ACCOUNT_XPUBS');
      const row = await db
        .selectFrom('merchant_hd_accounts')
        .select('account_index')
        .where('merchant_id', '=', merchantId)
        .where('mode', '=', 'test')
        .executeTakeFirstOrThrow();
      const settings = loadChainSettings(env, profile.serviceNetwork, 'test');
      if (!settings) throw new Error(`the service settings have no CHAIN_${profile.serviceNetwork.toUpperCase()}_TEST_RPC_URL`);
      const adapter = createChainAdapter(settings, env);
      const wallet = await adapter.deriveHotWallet(keys, row.account_index, HOT_WALLET_SLOT.refunds);
      return adapter.displayAddress(wallet.address);
    },
    close: () => db.destroy(),
  };
}
