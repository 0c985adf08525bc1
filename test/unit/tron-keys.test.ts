import { describe, expect, it } from 'vitest';
import { TronWeb } from 'tronweb';
import { tronBase58 } from '../../chains/tron/address.js';
import { tronAddressAt, tronDepositKeyPath, tronHotWalletKeyPath } from '../../chains/tron/keys.js';
import { TronChainAdapter } from '../../chains/tron/adapter.js';
import { MnemonicSigner } from '../../src/signer/mnemonic-signer.js';
import { XpubKeyDeriver } from '../../src/signer/xpub-key-deriver.js';

// m/44'/195'/account'/0/i (SLIP-0044 coin 195), secp256k1. Vectors cross-checked with tronweb's fromMnemonic.
const TEST = 'test test test test test test test test test test test junk';
const ABANDON = 'abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about';
const VECTORS: Array<[string, number, number, string]> = [
  [ABANDON, 0, 0, 'TUEZSdKsoDHQMeZwihtdoBiN46zxhGWYdH'],
  [ABANDON, 0, 1, 'TSeJkUh4Qv67VNFwY8LaAxERygNdy6NQZK'],
  [ABANDON, 1, 0, 'TLrpNTBuCpGMrB9TyVwgEhNVRhtWEQPHh4'],
  [TEST, 0, 0, 'TWer2Ygk5TEheHp3TPuYeqxmB6SsGZmaL6'],
  [TEST, 0, 1, 'TPjjvMwjPoDC32V2dGDYTkLH4E5LAtBZ6C'],
  [TEST, 1, 0, 'TCjow1qG4ZvDNj5ZRCF2RSuS2kMCGKK1JJ'],
];

const adapter = new TronChainAdapter({ mode: 'test', jsonRpcUrl: 'http://127.0.0.1:1', tokens: [] });

describe('TRON derivation', () => {
  it.each(VECTORS)('%s account %i index %i -> %s', async (mnemonic, account, index, expected) => {
    const signer = new MnemonicSigner(mnemonic);
    const canonical = await adapter.deriveDepositAddress(signer, account, BigInt(index));
    expect(canonical).toMatch(/^41[0-9a-f]{40}$/);
    expect(adapter.displayAddress(canonical)).toBe(expected);
    expect((TronWeb.fromMnemonic(mnemonic, `m/44'/195'/${account}'/0/${index}`) as { address: string }).address).toBe(expected);
  });

  it('watch-only: the account xpub derives the same deposit addresses without a private key', async () => {
    const signer = new MnemonicSigner(TEST);
    const watchOnly = new XpubKeyDeriver(new Map([['195/0', signer.accountXpub(195, 0)]]));
    for (const i of [0n, 1n, 77n]) {
      expect(await adapter.deriveDepositAddress(watchOnly, 0, i)).toBe(await adapter.deriveDepositAddress(signer, 0, i));
    }
    expect(tronBase58(await adapter.deriveDepositAddress(watchOnly, 0, 0n))).toBe('TWer2Ygk5TEheHp3TPuYeqxmB6SsGZmaL6');
    await expect(adapter.deriveDepositAddress(watchOnly, 1, 0n)).rejects.toThrow(/no xpub configured for coin 195 account 1/);
  });

  it('paths: deposits on change 0, hot wallets on change 1, indexes beyond BIP32 refused', async () => {
    expect(tronDepositKeyPath(3, 17n)).toEqual({ curve: 'secp256k1', path: "m/44'/195'/3'/0/17" });
    expect(tronHotWalletKeyPath(3)).toEqual({ curve: 'secp256k1', path: "m/44'/195'/3'/1/0" });
    const signer = new MnemonicSigner(TEST);
    expect(await tronAddressAt(signer, tronHotWalletKeyPath(0))).not.toBe(await tronAddressAt(signer, tronDepositKeyPath(0, 0)));
    await expect(adapter.deriveDepositAddress(signer, 0, 2n ** 31n)).rejects.toThrow(RangeError);
  });
});
