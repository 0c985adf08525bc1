import type { JournalKind, JournalObjectType } from '../../db/journal-tables.js';
import type { Mode } from '../../../chains/vocabulary.js';
import { chainKey, type ChainRef } from '../core/chain-ref.js';

// The journal's account and asset names, and the legs of a movement (docs/journal.md).
// Account and asset names are persisted: built here only, from the chain key (deposit-schema.ts), never elsewhere.
export const EXTERNAL_ACCOUNT = 'external';
/** What precedes the address in an `address:` account name of a chain. */
export const addressPrefix = (network: string, mode: Mode): string => `address:${chainKey({ network, mode })}:`;
export const addressAccount = (network: string, mode: Mode, address: string): string => `${addressPrefix(network, mode)}${address}`;
/** A treasury (cold wallet or multisig, keys never held): journaled, never reconciled. */
export const treasuryAccount = (network: string, mode: Mode, address: string): string =>
  `treasury:${chainKey({ network, mode })}:${address}`;
export const feesAccount = (network: string): string => `fees:${network}`;
export const journalAsset = (network: string, mode: Mode, token: string | 'native'): string => `${assetPrefix({ network, mode })}${token}`;
/** What precedes the token in an asset name of `chain`. */
export const assetPrefix = (chain: { network: string; mode: Mode }): string => `${chainKey(chain)}:`;
/** SQL LIKE pattern of every `address:` account of `chain`. */
export const addressAccountPattern = (chain: ChainRef): string => `${addressPrefix(chain.network, chain.mode)}%`;

/** The address inside an `address:` account of `chain`, or null for any other account. */
export function accountAddress(chain: ChainRef, account: string): string | null {
  const prefix = addressPrefix(chain.network, chain.mode);
  return account.startsWith(prefix) ? account.slice(prefix.length) : null;
}

export interface JournalLeg {
  account: string;
  asset: string;
  /** Signed base units: positive into the account. */
  amount: bigint;
}

export interface Movement {
  network: string;
  mode: Mode;
  txHash: string;
  /** What inside the transaction this entry records: `log:<index>` for one transfer log, `tx` for a whole transaction. */
  legKey: string;
  kind: JournalKind;
  blockHeight: bigint;
  blockHash?: string | null;
  merchantId?: string | null;
  sessionId?: string | null;
  object?: { type: JournalObjectType; id: string } | null;
  legs: readonly JournalLeg[];
}

export class UnbalancedMovementError extends Error {}

/** Legs moving `amount` of `asset` from one account to another (none for a zero amount). */
export function transferLegs(asset: string, from: string, to: string, amount: bigint): JournalLeg[] {
  if (amount === 0n) return [];
  return [
    { account: from, asset, amount: -amount },
    { account: to, asset, amount },
  ];
}

/** Legs of a network fee `fee` (native base units) paid by `payer` on `chain`. */
export function feeLegs(chain: ChainRef, payer: string, fee: bigint): JournalLeg[] {
  return transferLegs(
    journalAsset(chain.network, chain.mode, 'native'),
    addressAccount(chain.network, chain.mode, payer),
    feesAccount(chain.network),
    fee,
  );
}

/** Merges legs by (account, asset), drops zero legs, and checks that each asset sums to zero. */
export function normalizeLegs(legs: readonly JournalLeg[]): JournalLeg[] {
  const byKey = new Map<string, JournalLeg>();
  const totals = new Map<string, bigint>();
  for (const l of legs) {
    const k = `${l.account}\u0000${l.asset}`;
    const prev = byKey.get(k);
    byKey.set(k, { account: l.account, asset: l.asset, amount: (prev?.amount ?? 0n) + l.amount });
    totals.set(l.asset, (totals.get(l.asset) ?? 0n) + l.amount);
  }
  for (const [asset, total] of totals) {
    if (total !== 0n) throw new UnbalancedMovementError(`legs of ${asset} sum to ${total}, not 0`);
  }
  return [...byKey.values()].filter((l) => l.amount !== 0n);
}
