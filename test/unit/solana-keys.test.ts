// Solana key paths and addresses: SLIP-0010 ed25519 vectors, the wallets' standard vector, the per-merchant branch,
// and watch-only pre-derived batches.
import { describe, expect, it } from 'vitest';
import { Keypair } from '@solana/web3.js';
import { MnemonicSigner } from '../../src/signer/mnemonic-signer.js';
import { deriveEd25519Seed, ed25519PrivateKey, ed25519PublicKey } from '../../src/signer/slip10-ed25519.js';
import {
  exportPrederivedBatch,
  normalizeSolanaAddress,
  PrederivedEd25519Keys,
  solanaAddressAt,
  solanaDepositKeyPath,
  solanaHotWalletKeyPath,
} from '../../chains/solana/keys.js';
import { SolanaChainAdapter } from '../../chains/solana/adapter.js';

const ABANDON = 'abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about';

describe('SLIP-0010 ed25519 test vector 1', () => {
  const seed = Buffer.from('000102030405060708090a0b0c0d0e0f', 'hex');
  const hex = (path: string) => deriveEd25519Seed(seed, path).toString('hex');
  const pub = (path: string) => Buffer.from(ed25519PublicKey(ed25519PrivateKey(deriveEd25519Seed(seed, path)))).toString('hex');

  it('derives the chain m/0H/1H/2H/2H/1000000000H', () => {
    expect(hex("m/0'")).toBe('68e0fe46dfb67e368c75379acec591dad19df3cde26e63b93a8e704f1dade7a3');
    expect(pub("m/0'")).toBe('8c8a13df77a28f3445213a0f432fde644acaa215fc72dcdf300d5efaa85d350c');
    expect(hex("m/0'/1'")).toBe('b1d0bad404bf35da785a64ca1ac54b2617211d2777696fbffaf208f746ae84f2');
    expect(pub("m/0'/1'")).toBe('1932a5270f335bed617d5b935c80aedb1a35bd9fc1e31acafd5372c30f5c1187');
    expect(hex("m/0'/1'/2'")).toBe('92a5b23c0b8a99e37d07df3fb9966917f5d06e02ddbd909c7e184371463e9fc9');
    expect(hex("m/0'/1'/2'/2'")).toBe('30d1dc7e5fc04c31219ab25a27ae00b50f6fd66622f6e9c913253d6511d1e662');
    expect(hex("m/0'/1'/2'/2'/1000000000'")).toBe('8f94d394a8e8fd6b1bc2f3f49f5c47e385281d5c17e65324b0f62483e37e8793');
    expect(pub("m/0'/1'/2'/2'/1000000000'")).toBe('3c24da049451555d51a7014a37337aa4e12d41e485abccfa46b47dfb2af54b7a');
  });

  it('refuses non-hardened levels', () => {
    expect(() => deriveEd25519Seed(seed, "m/0'/1")).toThrow(/hardened/);
  });
});

describe('Solana addresses from the mnemonic', () => {
  const signer = new MnemonicSigner(ABANDON);

  it("matches Phantom / Solana CLI for m/44'/501'/0'/0'", async () => {
    expect(await solanaAddressAt(signer, { curve: 'ed25519', path: "m/44'/501'/0'/0'" })).toBe(
      'HAgk14JpMQLgt6rVgv7cBQFJWFto5Dqxi472uT3DKpqk',
    );
  });

  it('gives each merchant-and-mode account its own hardened branch, deposits and hot wallets apart', async () => {
    expect(solanaDepositKeyPath(3, 17n).path).toBe("m/44'/501'/3'/0'/17'");
    expect(solanaHotWalletKeyPath(3).path).toBe("m/44'/501'/3'/1'/0'");
    const adapter = new SolanaChainAdapter({ mode: 'test', rpcUrl: 'http://127.0.0.1:1', tokens: [] });
    const a0 = await adapter.deriveDepositAddress(signer, 0, 0n);
    const a1 = await adapter.deriveDepositAddress(signer, 1, 0n);
    const a0i1 = await adapter.deriveDepositAddress(signer, 0, 1n);
    const hot0 = await solanaAddressAt(signer, solanaHotWalletKeyPath(0));
    expect(new Set([a0, a1, a0i1, hot0, 'HAgk14JpMQLgt6rVgv7cBQFJWFto5Dqxi472uT3DKpqk']).size).toBe(5);
    const seed = deriveEd25519Seed(
      Buffer.from((await import('ethers')).Mnemonic.fromPhrase(ABANDON).computeSeed().slice(2), 'hex'),
      "m/44'/501'/0'/0'/0'",
    );
    expect(Keypair.fromSeed(seed).publicKey.toBase58()).toBe(a0);
    await expect(adapter.deriveDepositAddress(signer, 0, 2n ** 31n)).rejects.toThrow(RangeError);
    expect(() => solanaDepositKeyPath(-1, 0n)).toThrow(RangeError);
  });

  it('lets a watch-only process use a batch pre-derived by the signer, and nothing beyond it', async () => {
    const batch = await exportPrederivedBatch(signer, 2, 10n, 3);
    expect(batch.trim().split('\n')).toHaveLength(3);
    expect(batch).not.toMatch(/abandon/);
    const watchOnly = PrederivedEd25519Keys.parse(`# account 2\n${batch}`);
    expect(watchOnly.size).toBe(3);
    const adapter = new SolanaChainAdapter({ mode: 'test', rpcUrl: 'http://127.0.0.1:1', tokens: [] });
    expect(await adapter.deriveDepositAddress(watchOnly, 2, 11n)).toBe(await adapter.deriveDepositAddress(signer, 2, 11n));
    await expect(adapter.deriveDepositAddress(watchOnly, 2, 13n)).rejects.toThrow(/no pre-derived key/);
    expect(() => PrederivedEd25519Keys.parse('m/44/501=abc')).toThrow();
  });

  it('normalizes addresses strictly', () => {
    expect(normalizeSolanaAddress('EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v')).toBe('EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v');
    expect(normalizeSolanaAddress('0xdAC17F958D2ee523a2206206994597C13D831ec7')).toBeNull();
    expect(normalizeSolanaAddress('1'.repeat(31))).toBeNull(); // 31 bytes
    expect(normalizeSolanaAddress('EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1O')).toBeNull(); // O is not base58
    expect(normalizeSolanaAddress('EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1vv')).toBeNull();
  });
});
