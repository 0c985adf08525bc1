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

/**
 * What a secp256k1 digest is the hash of, so that a signer that does not trust its caller (the signer role,
 * docs/signer.md) can recompute the digest and read what it would sign. Solana needs none: ed25519 signs the message
 * itself.
 */
export type SigningPreimage =
  /** An EVM transaction's unsigned serialization (0x hex, EIP-2718 typed or legacy): digest = keccak256 of it. */
  | { kind: 'evm-transaction'; unsignedSerialized: string }
  /** An EIP-7702 authorization tuple: digest = keccak256(0x05 || rlp([chainId, address, nonce])). */
  | { kind: 'evm-authorization'; chainId: string; address: string; nonce: string }
  /** A TRON transaction's raw_data (protobuf, hex): digest = its txID, sha256 of those bytes. */
  | { kind: 'tron-transaction'; rawDataHex: string };

/** Signing by path; private keys never leave the signer. */
export interface TxSigner extends KeyDeriver {
  /** `preimage`: what `digest` hashes (every caller of ours passes it; a local signer ignores it). */
  signSecp256k1Digest(key: KeyPath, digest: Uint8Array, preimage?: SigningPreimage): Promise<Secp256k1Signature>;
  signEd25519(key: KeyPath, message: Uint8Array): Promise<Uint8Array>;
}
