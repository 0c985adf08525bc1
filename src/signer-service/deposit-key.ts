import type { ChainAdapter, KeyDeriver, KeyPath } from '../../chains/types.js';
import type { SweepSourceRow } from '../ledger/treasury/sweeps.js';

// Whether a sweep source's deposit key is what it claims (docs/signer.md, "Sweep steps"): the key the ledger stores
// for a deposit address is a path, written by a worker the signer does not trust. The signer derives it again: the
// deposit path of the merchant's own HD account (the refunds hot wallet's path with change 0 and the address's index,
// as src/treasury/wallets.ts builds it) must be exactly the stored path, and derive, with the seed, to the stored
// address. A key of another merchant's account, or of an address that is not this sweep's, is never used.

/** The index at the end of a key path (`…/17` or `…/17'`); null when the path does not end in one. */
function indexOf(path: string): bigint | null {
  const m = /\/(\d{1,10})'?$/.exec(path);
  return m ? BigInt(m[1]!) : null;
}

/** The source's key when it derives, under `account`, to the source's address; null otherwise. */
export async function verifiedDepositKey(
  adapter: ChainAdapter,
  keys: KeyDeriver,
  account: number,
  source: Pick<SweepSourceRow, 'address' | 'key'>,
): Promise<KeyPath | null> {
  const stored = source.key as { curve?: unknown; path?: unknown };
  if (typeof stored?.path !== 'string' || (stored.curve !== 'secp256k1' && stored.curve !== 'ed25519')) return null;
  const index = indexOf(stored.path);
  if (index === null) return null;
  const hot = await adapter.deriveHotWallet(keys, account, 0);
  const m = /^(.*)\/1('?)\/0('?)$/.exec(hot.key.path);
  if (!m) return null;
  const expected: KeyPath = { curve: hot.key.curve, path: `${m[1]}/0${m[2]}/${index}${m[3]}` };
  if (expected.curve !== stored.curve || expected.path !== stored.path) return null;
  const derived = await adapter.deriveDepositAddress(keys, account, index);
  const canon = (a: string) => adapter.normalizeAddress(a) ?? a;
  return canon(derived) === canon(source.address) ? expected : null;
}
