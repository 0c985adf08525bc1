import { computeAddress, getAddress, hexlify, isHexString } from 'ethers';

// EVM addresses: canonical form is lowercase 0x-hex (storage and matching); display form is EIP-55 checksummed.

/** Lowercase 0x-hex, or null. Mixed-case input must carry a valid EIP-55 checksum (a typo must not pass). */
export function normalizeEvmAddress(text: string): string | null {
  if (!isHexString(text, 20)) return null;
  try {
    return getAddress(text).toLowerCase();
  } catch {
    return null;
  }
}

export function checksumEvmAddress(canonical: string): string {
  return getAddress(canonical);
}

export function evmAddressFromPublicKey(publicKey: Uint8Array): string {
  return computeAddress(hexlify(publicKey)).toLowerCase();
}
