import {
  HOT_WALLET_SLOT,
  OPERATOR_SLOT,
  type ChainAdapter,
  type KeyDeriver,
  type KeyPath,
  type Sweeper,
  type Wallet,
} from '../../chains/types.js';
import type { Db } from '../db/database.js';
import { currentGasStationSlot } from '../ledger/treasury/gas-station.js';

// The wallets of a sweep: the deposit addresses' keys, the merchant's refunds hot wallet, the operator's gas station
// (the ledger's current generation: docs/treasury.md, "Rotating the gas station").

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

/** The operator's wallets of `adapter`'s network and mode: the current gas station (and its generation), TRON's resources account. */
export async function operatorWallets(
  db: Db,
  adapter: Sweeper & Pick<ChainAdapter, 'network' | 'mode'>,
  keys: KeyDeriver,
): Promise<{ gasStation: Wallet; resources: Wallet; generation: number }> {
  const current = await currentGasStationSlot(db, adapter.network, adapter.mode);
  return {
    gasStation: await adapter.deriveOperatorWallet(keys, current.slot),
    resources: await adapter.deriveOperatorWallet(keys, OPERATOR_SLOT.resources),
    generation: current.generation,
  };
}
