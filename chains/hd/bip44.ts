import { HDNodeWallet, Mnemonic, getBytes } from 'ethers';

// BIP44 paths for secp256k1 families: m/44'/coin'/account'/change/index. One account per merchant and mode; the
// account level is hardened, the change/index tail is not, so an account-level xpub derives every deposit key.

export const COIN_TYPE_EVM = 60;
export const COIN_TYPE_TRON = 195;
/** BIP32 child indexes below 2^31 are the non-hardened ones. */
const MAX_CHILD_INDEX = 2n ** 31n - 1n;

/** Change 0 holds deposit addresses; change 1 holds the account's reserved hot-wallet keys (refund payouts, charges). */
export const CHANGE_DEPOSIT = 0;
export const CHANGE_HOT_WALLET = 1;

export function assertChildIndex(index: bigint | number, what: string): number {
  const n = BigInt(index);
  if (n < 0n || n > MAX_CHILD_INDEX) throw new RangeError(`${what} ${n} is outside 0..2^31-1`);
  return Number(n);
}

function accountPath(coinType: number, account: number): string {
  assertChildIndex(coinType, 'coin type');
  assertChildIndex(account, 'account');
  return `m/44'/${coinType}'/${account}'`;
}

export function addressPath(coinType: number, account: number, change: number, index: bigint | number): string {
  return `${accountPath(coinType, account)}/${assertChildIndex(change, 'change')}/${assertChildIndex(index, 'index')}`;
}

/** Validates a BIP39 English mnemonic (word list and checksum) and returns its 64-byte seed. */
export function bip39Seed(phrase: string, passphrase = ''): Uint8Array {
  return getBytes(Mnemonic.fromPhrase(phrase.trim().split(/\s+/).join(' '), passphrase).computeSeed());
}

export function masterNodeFromSeed(seed: Uint8Array): HDNodeWallet {
  return HDNodeWallet.fromSeed(seed);
}

/** Account-level extended public key (xpub...), safe to give to processes that must not hold private keys. */
export function accountXpub(master: HDNodeWallet, coinType: number, account: number): string {
  return master.derivePath(accountPath(coinType, account)).neuter().extendedKey;
}

/** Compressed public key of change/index below an account xpub. */
export function publicKeyFromAccountXpub(xpub: string, change: number, index: bigint | number): Uint8Array {
  const node = HDNodeWallet.fromExtendedKey(xpub);
  if (node.depth !== 3) throw new Error("expected an account-level xpub (depth 3, m/44'/coin'/account')");
  const child = node.deriveChild(assertChildIndex(change, 'change')).deriveChild(assertChildIndex(index, 'index'));
  return getBytes(child.publicKey);
}

/** Parses m/44'/coin'/account'/change/index into its numbers; null for any other shape. */
export function parseBip44Path(path: string): { coinType: number; account: number; change: number; index: number } | null {
  const m = /^m\/44'\/(\d+)'\/(\d+)'\/(\d+)\/(\d+)$/.exec(path);
  if (!m) return null;
  const [coinType, account, change, index] = m.slice(1).map(Number) as [number, number, number, number];
  return { coinType, account, change, index };
}
