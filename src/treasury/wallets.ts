import {
  HOT_WALLET_SLOT,
  OPERATOR_SLOT,
  type ChainAdapter,
  type KeyDeriver,
  type KeyPath,
  type Sweeper,
  type Wallet,
} from '../../chains/types.js';

// The wallets of a sweep: the deposit addresses' keys, the merchant's refunds hot wallet, the operator's gas station.

/**
 * The key of the deposit address of `account`/`index`. A family's deposit and hot-wallet keys differ only in the
 * change level (0 deposits, 1 hot wallets; hardened on Solana), so the deposit path is the hot wallet's path with
 * change 0 and the session's index. The address is derived again from the adapter and compared with the one the
 * ledger holds: a key that does not match is never used (the address is reported, not swept).
 */
export async function depositWallet(
  adapter: ChainAdapter,
  keys: KeyDeriver,
  account: number,
  index: bigint,
  expected: string,
): Promise<Wallet | { error: string }> {
  const address = await adapter.deriveDepositAddress(keys, account, index);
  if ((adapter.normalizeAddress(address) ?? address) !== expected)
    return { error: `derived address ${address} differs from the ledger's ${expected}` };
  const hot = await adapter.deriveHotWallet(keys, account, 0);
  const m = /^(.*)\/1('?)\/0('?)$/.exec(hot.key.path);
  if (!m) return { error: `unexpected hot-wallet path shape ${hot.key.path}` };
  const key: KeyPath = { curve: hot.key.curve, path: `${m[1]}/0${m[2]}/${index}${m[3]}` };
  return { key, address: expected };
}

export function refundsHotWallet(adapter: ChainAdapter, keys: KeyDeriver, account: number): Promise<Wallet> {
  return adapter.deriveHotWallet(keys, account, HOT_WALLET_SLOT.refunds);
}

export async function operatorWallets(sweeper: Sweeper, keys: KeyDeriver): Promise<{ gasStation: Wallet; resources: Wallet }> {
  return {
    gasStation: await sweeper.deriveOperatorWallet(keys, OPERATOR_SLOT.gasStation),
    resources: await sweeper.deriveOperatorWallet(keys, OPERATOR_SLOT.resources),
  };
}
