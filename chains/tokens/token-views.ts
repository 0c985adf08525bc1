import { Interface } from 'ethers';
import type { TokenRefusal } from '../types.js';
import type { TransferFee } from './transfer-fee.js';

// Optional views of the stablecoin contracts (EVM and TRON alike), read to explain a refusal and to foresee a
// transfer fee. `read` answers a view's first 32-byte word, or null when the token has no such view (the call reverts
// or answers nothing): "no such view", never an error. Addresses are ABI addresses (0x + 40 hex).
const VIEWS = new Interface([
  'function paused() view returns (bool)',
  'function isBlackListed(address who) view returns (bool)',
  'function isBlacklisted(address who) view returns (bool)',
  'function basisPointsRate() view returns (uint256)',
  'function maximumFee() view returns (uint256)',
]);

export type ReadView = (data: string) => Promise<bigint | null>;

async function flag(read: ReadView, fn: string, args: unknown[]): Promise<boolean> {
  return (await read(VIEWS.encodeFunctionData(fn, args))) === 1n;
}

/** Tether's `isBlackListed` or FiatToken's `isBlacklisted`, whichever the token has. */
async function blacklisted(read: ReadView, who: string): Promise<boolean> {
  const [tether, fiat] = await Promise.all([flag(read, 'isBlackListed', [who]), flag(read, 'isBlacklisted', [who])]);
  return tether || fiat;
}

/**
 * Why the token refuses to move tokens from `sender` to `recipient` (sent by `spender` for a transferFrom); null when
 * its state shows none of the known reasons. Paused first: a paused token refuses everyone.
 */
export async function readTokenRefusal(
  read: ReadView,
  parties: { sender: string; recipient: string; spender?: string },
): Promise<TokenRefusal | null> {
  if (await flag(read, 'paused', [])) return 'token_paused';
  if (await blacklisted(read, parties.sender)) return 'sender_blacklisted';
  if (await blacklisted(read, parties.recipient)) return 'recipient_blacklisted';
  if (parties.spender !== undefined && (await blacklisted(read, parties.spender))) return 'spender_blacklisted';
  return null;
}

/** Tether's announced fee on transfers, or null for a token without the views (or with the fee at zero). */
export async function readTransferFee(read: ReadView): Promise<TransferFee | null> {
  const [basisPoints, maximumFee] = await Promise.all([
    read(VIEWS.encodeFunctionData('basisPointsRate')),
    read(VIEWS.encodeFunctionData('maximumFee')),
  ]);
  if (basisPoints === null || maximumFee === null || basisPoints === 0n || maximumFee === 0n) return null;
  return { basisPoints, maximumFee };
}
