import { computeAddress, decodeBase58, encodeBase58, hexlify, sha256 } from 'ethers';

// TRON addresses come in three spellings of the same 21 bytes (0x41 prefix + the 20-byte account id that an EVM
// address also is):
//   base58check  T...                                          shown to payers, merchants and in every API answer
//   hex          41 + 40 hex digits (lowercase, no 0x)          canonical: stored in the database and matched
//   EVM hex      0x + 40 hex digits                             what java-tron's Ethereum-compatible JSON-RPC speaks
// Invariant: canonical form is always /^41[0-9a-f]{40}$/; conversions never accept a base58 string whose 4-byte
// checksum (double SHA-256) does not match, nor a version byte other than 0x41.

const PREFIX = 0x41;
const CANONICAL = /^41[0-9a-f]{40}$/;
const BASE58 = /^T[1-9A-HJ-NP-Za-km-z]{33}$/;

/** Canonical `41...` hex, or null. Accepts base58check `T...` or 21-byte hex `41...` (any case, optional 0x). */
export function normalizeTronAddress(text: string): string | null {
  const t = text.trim();
  if (BASE58.test(t)) return base58ToCanonical(t);
  const hex = t.replace(/^0x/i, '').toLowerCase();
  return CANONICAL.test(hex) ? hex : null;
}

export function isCanonicalTronAddress(text: string): boolean {
  return CANONICAL.test(text);
}

function base58ToCanonical(b58: string): string | null {
  let n: bigint;
  try {
    n = decodeBase58(b58);
  } catch {
    return null;
  }
  const hex = n.toString(16).padStart(50, '0');
  if (hex.length !== 50) return null;
  const payload = hex.slice(0, 42);
  const checksum = hex.slice(42);
  if (!payload.startsWith('41')) return null;
  return checksumOf(payload) === checksum ? payload : null;
}

function checksumOf(payloadHex: string): string {
  return sha256(sha256(`0x${payloadHex}`)).slice(2, 10);
}

/** `41...` -> `T...` (base58check). Throws on anything that is not canonical. */
export function tronBase58(canonical: string): string {
  if (!CANONICAL.test(canonical)) throw new Error(`not a canonical TRON address: ${canonical}`);
  return encodeBase58(`0x${canonical}${checksumOf(canonical)}`);
}

/** `41...` -> `0x...` (the 20-byte form of the Ethereum-compatible JSON-RPC and of ABI-encoded arguments). */
export function tronToEvmHex(canonical: string): string {
  if (!CANONICAL.test(canonical)) throw new Error(`not a canonical TRON address: ${canonical}`);
  return `0x${canonical.slice(2)}`;
}

/** `0x...` (20 bytes) -> `41...`. */
export function evmHexToTron(evmHex: string): string {
  const h = evmHex.replace(/^0x/i, '').toLowerCase();
  if (!/^[0-9a-f]{40}$/.test(h)) throw new Error(`not a 20-byte hex address: ${evmHex}`);
  return `${PREFIX.toString(16)}${h}`;
}

/** Canonical TRON address of a secp256k1 public key (compressed or not): 0x41 + last 20 bytes of keccak256(X||Y). */
export function tronAddressFromPublicKey(publicKey: Uint8Array): string {
  return evmHexToTron(computeAddress(hexlify(publicKey)));
}
