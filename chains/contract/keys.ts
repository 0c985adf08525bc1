// Keys as chains see them: paths and public keys; the signer holds the secrets and signs by path.

/** A BIP32/SLIP-0010 key location: the signer holds the secret, chains only name it. */
export interface KeyPath {
  curve: 'secp256k1' | 'ed25519';
  /** e.g. m/44'/60'/3'/0/17 */
  path: string;
}

/** Public keys by path. Backed by a mnemonic or, watch-only, by account-level xpubs (secp256k1 non-hardened tails). */
export interface KeyDeriver {
  /** secp256k1: 33-byte compressed key; ed25519: 32-byte key. */
  publicKey(key: KeyPath): Promise<Uint8Array>;
}

export interface Secp256k1Signature {
  r: string;
  s: string;
  yParity: 0 | 1;
}

/** Signing by path; private keys never leave the signer. */
export interface TxSigner extends KeyDeriver {
  signSecp256k1Digest(key: KeyPath, digest: Uint8Array): Promise<Secp256k1Signature>;
  signEd25519(key: KeyPath, message: Uint8Array): Promise<Uint8Array>;
}
