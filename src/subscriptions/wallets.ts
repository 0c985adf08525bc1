import type { ChainRegistry } from '../../chains/chain-registry.js';
import { HOT_WALLET_SLOT, type ChainAdapter, type KeyDeriver } from '../../chains/types.js';
import type { Kysely } from 'kysely';
import type { Db } from '../db/database.js';
import type { Database, Mode } from '../db/schema.js';
import { registerWallets } from '../ledger/journal/entries.js';

// The two wallets of a merchant's BIP44 account that subscriptions use on a chain:
// - the charger (HOT_WALLET_SLOT.charges): the spender customers approve; it sends each transferFrom and pays its gas;
// - the settlement address: the refunds hot wallet (HOT_WALLET_SLOT.refunds) of the same account, so that what
//   subscriptions collect funds the refunds of subscription payments (docs/subscriptions.md, "Where charges go").
export function createWalletResolver(db: Db, adapters: ChainRegistry, keys: KeyDeriver) {
  const cache = new Map<
    string,
    { charger: string; settlement: string; chargerKey: Awaited<ReturnType<ChainAdapter['deriveHotWallet']>> }
  >();
  // `via`: the caller's transaction, so that a lookup inside a transaction never waits for a second pool connection.
  async function resolve(merchantId: string, mode: Mode, network: string, via: Kysely<Database> = db) {
    const k = `${merchantId}:${mode}:${network}`;
    const hit = cache.get(k);
    if (hit) return hit;
    const adapter = adapters.require(network, mode);
    const { account_index: account } = await via
      .selectFrom('merchant_hd_accounts')
      .select('account_index')
      .where('merchant_id', '=', merchantId)
      .where('mode', '=', mode)
      .executeTakeFirstOrThrow();
    const charger = await adapter.deriveHotWallet(keys, account, HOT_WALLET_SLOT.charges);
    const settlement = await adapter.deriveHotWallet(keys, account, HOT_WALLET_SLOT.refunds);
    // Watched from now on: what reaches them or leaves them outside the service is journaled (docs/journal.md).
    await registerWallets(via, [
      { network, mode, address: charger.address, merchantId, role: 'charges' },
      { network, mode, address: settlement.address, merchantId, role: 'refunds' },
    ]);
    const v = { charger: charger.address, settlement: settlement.address, chargerKey: charger };
    cache.set(k, v);
    return v;
  }
  return {
    resolve,
    wallets: async (merchantId: string, mode: Mode, network: string, via?: Kysely<Database>) => {
      const w = await resolve(merchantId, mode, network, via);
      return { charger: w.charger, settlement: w.settlement };
    },
  };
}

export type WalletResolver = ReturnType<typeof createWalletResolver>;
