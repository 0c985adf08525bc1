import type { KeyDeriver, KeyPath } from '../types.js';
import { CHANGE_DEPOSIT, CHANGE_HOT_WALLET, COIN_TYPE_TRON, addressPath } from '../hd/bip44.js';
import { tronAddressFromPublicKey } from './address.js';

// TRON keys: BIP44 coin type 195 (SLIP-0044), secp256k1 like Ethereum, so an account-level xpub
// (m/44'/195'/account') derives every deposit address without a private key. One account per merchant and mode;
// change 0 = deposit addresses (one index per session), change 1 = the merchant's reserved hot wallets.

export function tronDepositKeyPath(account: number, index: bigint | number): KeyPath {
  return { curve: 'secp256k1', path: addressPath(COIN_TYPE_TRON, account, CHANGE_DEPOSIT, index) };
}

export function tronHotWalletKeyPath(account: number, n = 0): KeyPath {
  return { curve: 'secp256k1', path: addressPath(COIN_TYPE_TRON, account, CHANGE_HOT_WALLET, n) };
}

/** Canonical (`41...`) address of a key path. */
export async function tronAddressAt(keys: KeyDeriver, key: KeyPath): Promise<string> {
  return tronAddressFromPublicKey(await keys.publicKey(key));
}
