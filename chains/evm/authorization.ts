import { getBytes, hashAuthorization, Signature, type Authorization } from 'ethers';
import type { KeyPath, TxSigner } from '../types.js';
import { evmAddressFromPublicKey } from './address.js';

// EIP-7702 authorizations: a deposit address's signed consent that its account runs `address`'s code. The digest is
// keccak256(0x05 || rlp([chain_id, address, nonce])), signed by the deposit key through the TxSigner (never in clear).

/** One authorization to sign: `authority` (the deposit address, key `key`) delegates to `address` at its `nonce`. */
export interface UnsignedAuthorization {
  authority: string;
  key: KeyPath;
  /** The delegate contract. */
  address: string;
  /** The authority's account nonce the authorization is valid at (decimal string). */
  nonce: string;
}

/**
 * Signs each authorization for `chainId` with its deposit key, in order. Deterministic (RFC 6979): the same list signs
 * to the same bytes, so a fee-bumped rebuild carries the same authorizations. Throws when a key path does not belong to
 * the authority it names (the authorization would delegate another account).
 */
export async function signAuthorizations(
  chainId: bigint,
  auths: readonly UnsignedAuthorization[],
  signer: TxSigner,
): Promise<Authorization[]> {
  const out: Authorization[] = [];
  for (const a of auths) {
    // Checked before signing, from the key's public key (cheaper than recovering each signature: a batch signs
    // hundreds): a key path that is not the authority's would delegate another account.
    if (evmAddressFromPublicKey(await signer.publicKey(a.key)) !== a.authority.toLowerCase())
      throw new Error(`authorization key does not match the deposit address ${a.authority}`);
    const unsigned = { address: a.address, nonce: BigInt(a.nonce), chainId };
    const sig = Signature.from(
      await signer.signSecp256k1Digest(a.key, getBytes(hashAuthorization(unsigned)), {
        kind: 'evm-authorization',
        chainId: chainId.toString(),
        address: a.address,
        nonce: BigInt(a.nonce).toString(),
      }),
    );
    out.push({ ...unsigned, signature: sig });
  }
  return out;
}
