import { getAssociatedTokenAddressSync } from '@solana/spl-token';
import { Connection, PublicKey, type VersionedTransactionResponse } from '@solana/web3.js';
import type { SimChains } from '../contract.js';

// Reads of the canonical Solana ledger for the invariants, at the endpoint's own URL and the commitment the service
// requires (`SimChains.solana.confirmations`): the token-balance changes of a transaction, as the deposit scanner reads
// them (chains/solana/deposit-scanner.ts: an account owned by the owner whose balance of a registry mint grew, the
// transfer's index being that account's index in the transaction).

export type SimSolana = NonNullable<SimChains['solana']>;

export interface SolanaCredit {
  signature: string;
  /** The credited token account's index in the transaction (the deposit row's log_index). */
  accountIndex: number;
  token: string;
  owner: string;
  amount: bigint;
  slot: number;
  blockTimeMs: number;
}

/** A balance decrease of a registry mint in an account owned by `owner` (`amount` is what left, positive). */
export type SolanaDebit = SolanaCredit;

export interface SolanaReader {
  /** Every balance increase of a registry mint in an account owned by `owner`, oldest first. */
  creditsTo(owner: string): Promise<SolanaCredit[]>;
  /** Every balance decrease of a registry mint in an account owned by `owner` (closed accounts included), oldest first. */
  debitsFrom(owner: string): Promise<SolanaDebit[]>;
  /** The mint's decimals, read from the mint account on chain. */
  decimals(symbol: string): Promise<number>;
  /** The transaction at the commitment, or null when it did not land (or failed: `failed` true). */
  credits(signature: string): Promise<{ landed: boolean; failed: boolean; credits: SolanaCredit[] }>;
}

export function solanaReader(chain: SimSolana): SolanaReader {
  const conn = new Connection(chain.rpcUrl, chain.confirmations);
  const symbolOf = new Map(Object.entries(chain.mints).map(([symbol, mint]) => [mint, symbol]));
  const cache = new Map<string, Promise<VersionedTransactionResponse | null>>();
  const tx = (signature: string) => {
    let p = cache.get(signature);
    if (!p) {
      p = conn.getTransaction(signature, { commitment: chain.confirmations, maxSupportedTransactionVersion: 0 });
      cache.set(signature, p);
    }
    return p;
  };
  // What moved in a successful transaction, one side against the other: the accounts of `to` whose balance of a
  // registry mint is above the same account's in `from` (an account missing from `from`, or holding another mint
  // there, counts from zero). Credits are post against pre; debits pre against post (a closed account has no post
  // balance: all of it left).
  type Balances = NonNullable<NonNullable<VersionedTransactionResponse['meta']>['postTokenBalances']>;
  const grew =
    (side: (m: NonNullable<VersionedTransactionResponse['meta']>) => { from?: Balances | null; to?: Balances | null }) =>
    (signature: string, t: VersionedTransactionResponse): SolanaCredit[] => {
      if (!t.meta || t.meta.err !== null) return [];
      const { from, to } = side(t.meta);
      const before = new Map((from ?? []).map((b) => [b.accountIndex, b]));
      const out: SolanaCredit[] = [];
      for (const b of to ?? []) {
        const token = symbolOf.get(b.mint);
        if (!token || !b.owner) continue;
        const prev = before.get(b.accountIndex);
        const amount = BigInt(b.uiTokenAmount.amount) - (prev && prev.mint === b.mint ? BigInt(prev.uiTokenAmount.amount) : 0n);
        if (amount <= 0n) continue;
        out.push({
          signature,
          accountIndex: b.accountIndex,
          token,
          owner: b.owner,
          amount,
          slot: t.slot,
          blockTimeMs: (t.blockTime ?? 0) * 1000,
        });
      }
      return out;
    };
  const creditsOf = grew((m) => ({ from: m.preTokenBalances, to: m.postTokenBalances }));
  const debitsOf = grew((m) => ({ from: m.postTokenBalances, to: m.preTokenBalances }));
  // The successful transactions naming the owner or one of its associated token accounts of a registry mint.
  const signaturesOf = async (owner: string): Promise<Set<string>> => {
    const accounts = [
      new PublicKey(owner),
      ...Object.values(chain.mints).map((m) => getAssociatedTokenAddressSync(new PublicKey(m), new PublicKey(owner), true)),
    ];
    const signatures = new Set<string>();
    for (const a of accounts)
      for (const s of await conn.getSignaturesForAddress(a, { limit: 1000 }, chain.confirmations))
        if (s.err === null) signatures.add(s.signature);
    return signatures;
  };
  const changes = async (owner: string, of: typeof creditsOf): Promise<SolanaCredit[]> => {
    const out: SolanaCredit[] = [];
    for (const s of await signaturesOf(owner)) {
      const t = await tx(s);
      if (t) out.push(...of(s, t).filter((c) => c.owner === owner));
    }
    return out.sort((a, b) => a.slot - b.slot || a.accountIndex - b.accountIndex);
  };
  return {
    async decimals(symbol) {
      const mint = chain.mints[symbol];
      if (!mint) throw new Error(`solana: no ${symbol} mint in the simulator's chain list`);
      // An SPL mint account: decimals is the byte at offset 44 (after the authority option, key and supply).
      const info = await conn.getAccountInfo(new PublicKey(mint), chain.confirmations);
      if (!info || info.data.length < 45) throw new Error(`solana: ${symbol} mint ${mint} is not a mint account`);
      return info.data[44]!;
    },
    creditsTo: (owner) => changes(owner, creditsOf),
    debitsFrom: (owner) => changes(owner, debitsOf),
    async credits(signature) {
      const t = await tx(signature);
      if (!t) return { landed: false, failed: false, credits: [] };
      return { landed: true, failed: t.meta?.err !== null && t.meta?.err !== undefined, credits: creditsOf(signature, t) };
    },
  };
}

/**
 * The signatures among `signatures` that moved `token` to `destination` on Solana: landed at the commitment, did not
 * fail, and credited an account `destination` owns of the token's mint (a subscription charge's `TransferChecked`
 * into the settlement wallet's ATA, as refunds are judged in outbound-once.ts). Base58 signatures, compared as they are.
 */
export async function solanaCreditingSignatures(
  reader: SolanaReader,
  signatures: Iterable<string>,
  token: string,
  destination: string,
): Promise<string[]> {
  const out: string[] = [];
  for (const s of new Set(signatures)) {
    const t = await reader.credits(s);
    if (t.landed && !t.failed && t.credits.some((c) => c.token === token && c.owner === destination && c.amount > 0n)) out.push(s);
  }
  return out;
}
