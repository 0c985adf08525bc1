import { SigningKey, getBytes, type HDNodeWallet } from 'ethers';
import type { KeyPath, Secp256k1Signature, TxSigner } from '../../chains/types.js';
import { bip39Seed, masterNodeFromSeed } from '../../chains/hd/bip44.js';
import { deriveEd25519Seed, ed25519PrivateKey, ed25519PublicKey, ed25519Sign } from './slip10-ed25519.js';

// The local signer: holds the BIP39 seed in memory (read from the environment by from-env.ts) and signs by path.
// Invariant: no method returns or logs private material; toString/inspect are overridden to a fixed string.
export class MnemonicSigner implements TxSigner {
  readonly #master: HDNodeWallet;
  readonly #seed: Uint8Array;
  readonly #nodes = new Map<string, HDNodeWallet>();

  constructor(mnemonic: string, passphrase = '') {
    this.#seed = bip39Seed(mnemonic, passphrase);
    this.#master = masterNodeFromSeed(this.#seed);
  }

  /** Account-level xpub for watch-only processes. */
  accountXpub(coinType: number, account: number): string {
    return this.#secpNode(`m/44'/${coinType}'/${account}'`).neuter().extendedKey;
  }

  async publicKey(key: KeyPath): Promise<Uint8Array> {
    if (key.curve === 'secp256k1') return getBytes(this.#secpNode(key.path).publicKey);
    return ed25519PublicKey(ed25519PrivateKey(deriveEd25519Seed(this.#seed, key.path)));
  }

  async signSecp256k1Digest(key: KeyPath, digest: Uint8Array): Promise<Secp256k1Signature> {
    if (key.curve !== 'secp256k1') throw new Error('not a secp256k1 key path');
    if (digest.length !== 32) throw new Error('digest must be 32 bytes');
    const sig = new SigningKey(this.#secpNode(key.path).privateKey).sign(digest);
    return { r: sig.r, s: sig.s, yParity: sig.yParity };
  }

  async signEd25519(key: KeyPath, message: Uint8Array): Promise<Uint8Array> {
    if (key.curve !== 'ed25519') throw new Error('not an ed25519 key path');
    return ed25519Sign(ed25519PrivateKey(deriveEd25519Seed(this.#seed, key.path)), message);
  }

  /**
   * Derived from the cached parent node, so that keys of one account and branch (a sweep signs hundreds of deposit
   * keys) cost one derivation step each instead of five from the master.
   */
  #secpNode(path: string): HDNodeWallet {
    let node = this.#nodes.get(path);
    if (!node) {
      const cut = path.lastIndexOf('/');
      const last = path.slice(cut + 1);
      const hardened = last.endsWith("'");
      node =
        cut > 0 && /^\d+'?$/.test(last)
          ? this.#secpNode(path.slice(0, cut)).deriveChild(Number(hardened ? last.slice(0, -1) : last) + (hardened ? 0x80000000 : 0))
          : this.#master.derivePath(path);
      this.#nodes.set(path, node);
    }
    return node;
  }

  toString(): string {
    return '[MnemonicSigner]';
  }

  [Symbol.for('nodejs.util.inspect.custom')](): string {
    return '[MnemonicSigner]';
  }
}
