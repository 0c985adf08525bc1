import { hashAuthorization, keccak256, sha256 } from 'ethers';
import type { SigningPreimage } from '../../chains/types.js';

// The digest a preimage hashes to (chains/contract/keys.ts SigningPreimage): the signer signs a digest only when it
// is this, so that what it reads (the preimage) is what it signs.

export function digestOf(p: SigningPreimage): string {
  switch (p.kind) {
    case 'evm-transaction':
      return keccak256(p.unsignedSerialized).toLowerCase();
    case 'evm-authorization':
      return hashAuthorization({ chainId: BigInt(p.chainId), address: p.address, nonce: BigInt(p.nonce) }).toLowerCase();
    case 'tron-transaction':
      return sha256(`0x${p.rawDataHex}`).toLowerCase();
    default: {
      const never: never = p;
      return never;
    }
  }
}
