import { describe, expect, it } from 'vitest';
import { hexlify } from 'ethers';
import { accountXpub, addressPath, bip39Seed, masterNodeFromSeed, publicKeyFromAccountXpub } from '../../chains/hd/bip44.js';
import { evmAddressFromPublicKey, checksumEvmAddress } from '../../chains/evm/address.js';
import { EvmChainAdapter } from '../../chains/evm/adapter.js';
import { MnemonicSigner } from '../../src/signer/mnemonic-signer.js';
import { XpubKeyDeriver, parseAccountXpubs } from '../../src/signer/xpub-key-deriver.js';
import { keyMaterialFromEnv } from '../../src/signer/from-env.js';
import { deriveEd25519Seed, ed25519PrivateKey, ed25519PublicKey } from '../../src/signer/slip10-ed25519.js';

const TEST_JUNK = 'test test test test test test test test test test test junk';
const ABANDON = 'abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about';

const adapter = new EvmChainAdapter({
  network: 'ethereum',
  mode: 'test',
  rpcUrl: 'http://127.0.0.1:1',
  tokens: [],
  confirmation: { kind: 'depth', confirmations: 1 },
});

describe('BIP39 / BIP44 derivation vectors', () => {
  it('BIP39 seed of "abandon ... about" (empty and TREZOR passphrase)', () => {
    expect(hexlify(bip39Seed(ABANDON))).toBe(
      '0x5eb00bbddcf069084889a8ab9155568165f5c453ccb85e70811aaed6f6da5fc19a5ac40b389cd370d086206dec8aa6c43daea6690f20ad3d8d48b2d2ce9e38e4',
    );
    expect(hexlify(bip39Seed(ABANDON, 'TREZOR'))).toBe(
      '0xc55257c360c07c72029aebc1b53c05ed0362ada38ead3e3e9efa3708e53495531f09a6987599d18264c1e1c92f2cf141630c7a3c4ab7c81b2f001698e7463b04',
    );
  });

  it("m/44'/60'/0'/0/i of the standard test mnemonic are the Hardhat/Anvil accounts", async () => {
    const signer = new MnemonicSigner(TEST_JUNK);
    const expected = [
      '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266',
      '0x70997970C51812dc3A010C7d01b50e0d17dc79C8',
      '0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC',
    ];
    for (const [i, addr] of expected.entries()) {
      const canonical = await adapter.deriveDepositAddress(signer, 0, BigInt(i));
      expect(checksumEvmAddress(canonical)).toBe(addr);
    }
  });

  it("m/44'/60'/0'/0/0 of \"abandon ... about\"", async () => {
    const canonical = await adapter.deriveDepositAddress(new MnemonicSigner(ABANDON), 0, 0n);
    expect(checksumEvmAddress(canonical)).toBe('0x9858EfFD232B4033E47d90003D41EC34EcaEda94');
  });

  it('watch-only: the account xpub derives the same addresses as the mnemonic, for several accounts', async () => {
    const signer = new MnemonicSigner(TEST_JUNK);
    const master = masterNodeFromSeed(bip39Seed(TEST_JUNK));
    const xpubs = new Map([
      ['60/0', accountXpub(master, 60, 0)],
      ['60/7', signer.accountXpub(60, 7)],
    ]);
    expect(xpubs.get('60/0')!.startsWith('xpub')).toBe(true);
    const watch = new XpubKeyDeriver(xpubs);
    for (const account of [0, 7]) {
      for (const index of [0n, 1n, 1234n, 2n ** 31n - 1n]) {
        expect(await adapter.deriveDepositAddress(watch, account, index)).toBe(await adapter.deriveDepositAddress(signer, account, index));
      }
    }
    await expect(adapter.deriveDepositAddress(watch, 3, 0n)).rejects.toThrow(/no xpub/);
    expect(evmAddressFromPublicKey(publicKeyFromAccountXpub(xpubs.get('60/0')!, 0, 1))).toBe('0x70997970c51812dc3a010c7d01b50e0d17dc79c8');
  });

  it('merchants never share addresses: distinct accounts give distinct addresses at the same index', async () => {
    const signer = new MnemonicSigner(TEST_JUNK);
    const a = await adapter.deriveDepositAddress(signer, 1, 5n);
    const b = await adapter.deriveDepositAddress(signer, 2, 5n);
    expect(a).not.toBe(b);
  });

  it('refuses indexes outside the non-hardened range and malformed mnemonics', async () => {
    expect(() => addressPath(60, 0, 0, 2n ** 31n)).toThrow(RangeError);
    expect(() => addressPath(60, -1, 0, 0n)).toThrow(RangeError);
    expect(() => new MnemonicSigner('test test test test test test test test test test test test')).toThrow();
    expect(() => keyMaterialFromEnv({ HD_MNEMONIC: 'not a mnemonic at all' })).toThrow(/not a valid BIP39/);
  });

  it('parses HD_ACCOUNT_XPUBS and env key material without echoing secrets', () => {
    const signer = new MnemonicSigner(TEST_JUNK);
    const x = signer.accountXpub(60, 0);
    expect(parseAccountXpubs(`60/0=${x}, 195/2=${x}`).size).toBe(2);
    expect(() => parseAccountXpubs('60/0=zzz')).toThrow();
    expect(keyMaterialFromEnv({ HD_MNEMONIC: TEST_JUNK }).kind).toBe('signer');
    expect(keyMaterialFromEnv({ HD_ACCOUNT_XPUBS: `60/0=${x}` }).kind).toBe('watch-only');
    expect(keyMaterialFromEnv({}).kind).toBe('none');
    expect(String(signer)).toBe('[MnemonicSigner]');
    expect(JSON.stringify(signer)).not.toContain('test');
  });

  it('signs an EVM digest that recovers to the derived address', async () => {
    const { SigningKey, Signature, keccak256, toUtf8Bytes, computeAddress } = await import('ethers');
    const signer = new MnemonicSigner(TEST_JUNK);
    const digest = keccak256(toUtf8Bytes('hello'));
    const sig = await signer.signSecp256k1Digest({ curve: 'secp256k1', path: "m/44'/60'/0'/0/1" }, Buffer.from(digest.slice(2), 'hex'));
    const recovered = computeAddress(SigningKey.recoverPublicKey(digest, Signature.from(sig)));
    expect(recovered).toBe('0x70997970C51812dc3A010C7d01b50e0d17dc79C8');
  });

  it('derives each path from its cached parent to the same key as from the master (hardened and not, any order)', async () => {
    const signer = new MnemonicSigner(TEST_JUNK);
    const master = masterNodeFromSeed(bip39Seed(TEST_JUNK));
    const paths = ["m/44'/60'/200'/0/7", "m/44'/60'/200'/0/2147483647", "m/44'/60'/200'", "m/44'/60'/0'/1/0", "m/44'/195'/3'/0/5"];
    for (const path of [...paths, ...paths.reverse()])
      expect(hexlify(await signer.publicKey({ curve: 'secp256k1', path }))).toBe(master.derivePath(path).publicKey);
  });
});

describe('SLIP-0010 ed25519 (test vector 1)', () => {
  const seed = Buffer.from('000102030405060708090a0b0c0d0e0f', 'hex');
  it("m and m/0'", () => {
    expect(deriveEd25519Seed(seed, 'm').toString('hex')).toBe('2b4be7f19ee27bbf30c667b642d5f4aa69fd169872f8fc3059c08ebae2eb19e7');
    expect(Buffer.from(ed25519PublicKey(ed25519PrivateKey(deriveEd25519Seed(seed, 'm')))).toString('hex')).toBe(
      'a4b2856bfec510abab89753fac1ac0e1112364e7d250545963f135f2a33188ed',
    );
    expect(deriveEd25519Seed(seed, "m/0'").toString('hex')).toBe('68e0fe46dfb67e368c75379acec591dad19df3cde26e63b93a8e704f1dade7a3');
    expect(() => deriveEd25519Seed(seed, 'm/0')).toThrow(/hardened/);
  });
});
