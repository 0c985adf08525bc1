import { describe, expect, it } from 'vitest';
import { TronWeb } from 'tronweb';
import { evmHexToTron, isCanonicalTronAddress, normalizeTronAddress, tronBase58, tronToEvmHex } from '../../chains/tron/address.js';

// Known mainnet addresses in both forms (TronScan shows base58; the hex form is 0x41 + the 20-byte account id).
const VECTORS: Array<[string, string]> = [
  ['TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t', '41a614f803b6fd780986a42c78ec9c7f77e6ded13c'], // USDT (TRC-20)
  ['TEkxiTehnzSmSe2XqrBj4w32RUN966rdz8', '413487b63d30b5b2c87fb7ffa8bcfade38eaac1abe'], // USDC (TRC-20, discontinued)
  ['TNUC9Qb1rRpS5CbWLmNMxXBjyFoydXjWFR', '41891cdb91d149f23b1a45d9c5ca78a88d0cb44c18'], // WTRX
  ['T9yD14Nj9j7xAB4dbGeiX9h8unkKHxuWwb', '410000000000000000000000000000000000000000'], // black hole
];

describe('TRON address forms', () => {
  it.each(VECTORS)('%s <-> %s', (b58, hex) => {
    expect(normalizeTronAddress(b58)).toBe(hex);
    expect(tronBase58(hex)).toBe(b58);
    expect(normalizeTronAddress(hex.toUpperCase())).toBe(hex);
    expect(normalizeTronAddress(`0x${hex}`)).toBe(hex);
    expect(tronToEvmHex(hex)).toBe(`0x${hex.slice(2)}`);
    expect(evmHexToTron(`0x${hex.slice(2).toUpperCase()}`)).toBe(hex);
    expect(isCanonicalTronAddress(hex)).toBe(true);
    // independent implementation
    expect(TronWeb.address.toHex(b58).toLowerCase()).toBe(hex);
    expect(TronWeb.address.fromHex(hex)).toBe(b58);
  });

  it('rejects a wrong checksum, a wrong version byte, EVM-length hex and junk', () => {
    expect(normalizeTronAddress('TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6u')).toBeNull(); // last char changed: checksum fails
    expect(normalizeTronAddress('TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6')).toBeNull();
    expect(normalizeTronAddress('42a614f803b6fd780986a42c78ec9c7f77e6ded13c')).toBeNull();
    expect(normalizeTronAddress('0xa614f803b6fd780986a42c78ec9c7f77e6ded13c')).toBeNull(); // a 20-byte EVM address is not accepted as TRON input
    expect(normalizeTronAddress('1BoatSLRHtKNngkdXEeobR76b53LETtpyT')).toBeNull();
    expect(normalizeTronAddress('')).toBeNull();
    expect(isCanonicalTronAddress('TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t')).toBe(false);
    expect(() => tronBase58('0xa614f803b6fd780986a42c78ec9c7f77e6ded13c')).toThrow(/canonical/);
  });
});
