import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { HOT_WALLET_SLOT, OPERATOR_SLOT, isSweeper, type ChainAdapter } from '../../chains/types.js';
import { createDb, type Db } from '../../src/db/database.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { createMerchant } from '../../src/ledger/merchants/merchants.js';
import { SecretBox } from '../../src/security/secret-box.js';
import { keyDeriverOf, keyMaterialFromEnv } from '../../src/signer/from-env.js';
import { createChainAdapter } from '../../src/watcher/adapter-factory.js';
import { loadChainSettings } from '../../src/watcher/config.js';
import type { Profile } from './profiles.js';

// What the operator of the service does for the run, with the service's own settings (its .env, or the demo's state
// file): create the merchant, and name the merchant's refund hot wallet so the run can fund it. The same calls as
// `npm run cli -- merchant create` and `payouts wallets`; the sweep and reconciliation are the operator CLI itself
// (`npm run cli -- sweep ...`, `reconcile`, `journal ...`) run in a child process with those settings. Secrets stay in
// memory and in that child's environment.

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
  /** The operator's gas station on the profile's network (OPERATOR_SLOT.gasStation), which pays sweep fees. */
  gasStation(): Promise<string>;
  /** The address as the ledger stores it (the adapter's canonical form), null when not an address of the network. */
  canonical(address: string): Promise<string | null>;
  /** `npm run cli -- <args>` with the service's settings; never throws on a non-zero exit (the caller judges it). */
  cli(args: string[]): Promise<CliResult>;
  /** The address as the chain displays it (TRON base58, EVM checksummed). */
  display(address: string): string;
  close(): Promise<void>;
}

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

const CLI = fileURLToPath(new URL('../../src/cli/index.ts', import.meta.url));

export function missingOperatorSetting(env: Record<string, string | undefined>): string | null {
  for (const name of ['DATABASE_URL', 'MASTER_KEY']) if (!env[name]?.trim()) return name;
  // Keys, as src/signer reads them: the seed, the signer's endpoint (the run's CLI asks it), or public keys. A setting
  // it refuses is reported when the operator opens (openOperator), with src/signer's own message.
  let keys: string;
  try {
    keys = keyMaterialFromEnv(env).kind;
  } catch {
    keys = 'refused';
  }
  if (keys === 'none') return 'HD_MNEMONIC, SIGNER_SOCKET or HD_ACCOUNT_XPUBS';
  return null;
}

export async function openOperator(profile: Profile, env: Record<string, string | undefined>): Promise<Operator> {
  const db: Db = createDb(env.DATABASE_URL!, 2);
  const box = new SecretBox(env.MASTER_KEY!.trim());
  const keys = keyDeriverOf(keyMaterialFromEnv(env));
  // The run's one network: its adapter, made on first use.
  const memo: { adapter?: ChainAdapter } = {};
  const adapter = (): ChainAdapter => {
    if (memo.adapter) return memo.adapter;
    const settings = loadChainSettings(env, profile.serviceNetwork, 'test');
    if (!settings) throw new Error(`the service settings have no CHAIN_${profile.serviceNetwork.toUpperCase()}_TEST_RPC_URL`);
    memo.adapter = createChainAdapter(settings, env);
    return memo.adapter;
  };
  return {
    async createMerchant(name, webhookUrl) {
      await migrateToLatest(db);
      const m = await createMerchant(db, box, { name, webhookUrl });
      return { merchantId: m.merchantId, key: m.testKey.key, secret: m.testKey.secret, webhookSecret: m.webhookSecret };
    },
    async refundHotWallet(merchantId) {
      if (!keys) throw new Error('the service settings have no HD_MNEMONIC, SIGNER_SOCKET or HD_ACCOUNT_XPUBS');
      const row = await db
        .selectFrom('merchant_hd_accounts')
        .select('account_index')
        .where('merchant_id', '=', merchantId)
        .where('mode', '=', 'test')
        .executeTakeFirstOrThrow();
      const wallet = await adapter().deriveHotWallet(keys, row.account_index, HOT_WALLET_SLOT.refunds);
      return adapter().displayAddress(wallet.address);
    },
    async gasStation() {
      if (!keys) throw new Error('the service settings have no HD_MNEMONIC, SIGNER_SOCKET or HD_ACCOUNT_XPUBS');
      const a = adapter();
      if (!isSweeper(a)) throw new Error(`${profile.serviceNetwork} has no sweep methods in this version`);
      const wallet = await a.deriveOperatorWallet(keys, OPERATOR_SLOT.gasStation);
      return a.displayAddress(wallet.address);
    },
    canonical: async (address) => adapter().normalizeAddress(address),
    display: (canonical) => {
      const c = adapter().normalizeAddress(canonical);
      return c ? adapter().displayAddress(c) : canonical;
    },
    cli: (args) =>
      new Promise((resolve, reject) => {
        const child = spawn(process.execPath, ['--import', 'tsx', CLI, ...args], {
          env: { ...process.env, ...env, LOG_LEVEL: 'warn' },
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        let stdout = '';
        let stderr = '';
        child.stdout.on('data', (d) => (stdout += String(d)));
        child.stderr.on('data', (d) => (stderr += String(d)));
        child.on('error', reject);
        child.on('close', (code) => resolve({ code, stdout, stderr }));
      }),
    close: () => db.destroy(),
  };
}
