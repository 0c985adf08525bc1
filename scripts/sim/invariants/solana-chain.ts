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
  const creditsOf = (signature: string, t: VersionedTransactionResponse): SolanaCredit[] => {
    const meta = t.meta;
    if (!meta || meta.err !== null) return [];
    const pre = new Map((meta.preTokenBalances ?? []).map((b) => [b.accountIndex, b]));
    const out: SolanaCredit[] = [];
    for (const post of meta.postTokenBalances ?? []) {
      const token = symbolOf.get(post.mint);
      if (!token || !post.owner) continue;
      const before = pre.get(post.accountIndex);
      const amount = BigInt(post.uiTokenAmount.amount) - (before && before.mint === post.mint ? BigInt(before.uiTokenAmount.amount) : 0n);
      if (amount <= 0n) continue;
      out.push({
        signature,
        accountIndex: post.accountIndex,
        token,
        owner: post.owner,
        amount,
        slot: t.slot,
        blockTimeMs: (t.blockTime ?? 0) * 1000,
      });
    }
    return out;
  };
  // The decreases: an account's pre balance above its post balance (a closed account has no post balance: all of it left).
  const debitsOf = (signature: string, t: VersionedTransactionResponse): SolanaDebit[] => {
    const meta = t.meta;
    if (!meta || meta.err !== null) return [];
    const post = new Map((meta.postTokenBalances ?? []).map((b) => [b.accountIndex, b]));
    const out: SolanaDebit[] = [];
    for (const pre of meta.preTokenBalances ?? []) {
      const token = symbolOf.get(pre.mint);
      if (!token || !pre.owner) continue;
      const after = post.get(pre.accountIndex);
      const amount = BigInt(pre.uiTokenAmount.amount) - (after && after.mint === pre.mint ? BigInt(after.uiTokenAmount.amount) : 0n);
      if (amount <= 0n) continue;
      out.push({
        signature,
        accountIndex: pre.accountIndex,
        token,
        owner: pre.owner,
        amount,
        slot: t.slot,
        blockTimeMs: (t.blockTime ?? 0) * 1000,
      });
    }
    return out;
  };
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
