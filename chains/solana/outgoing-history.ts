import { type Connection, PublicKey } from '@solana/web3.js';
import type { OutgoingTransaction } from '../contract/sending.js';

// A wallet's recent outgoing transactions on Solana (chains/contract/sending.ts OutgoingHistory), for the outbound
// engine's restore guard: `getSignaturesForAddress` on the wallet's own address (Solana's RPC documentation: newest
// first, at most 1000 a page, `before` pages back, minimum commitment `confirmed`) lists every transaction naming it,
// incoming ones too; those the ledger does not know are read with `getTransaction` and kept only when the wallet
// signed them (one of the message's first `numRequiredSignatures` keys: the fee payer or a co-signer).

const PAGE = 1000;
/** Pages read at most (50 000 signatures) before the listing is reported truncated. */
const MAX_PAGES = 50;

export async function solanaUnknownOutgoing(
  connection: Connection,
  address: string,
  sinceMs: number,
  known: (hashes: string[]) => Promise<Set<string>>,
): Promise<{ found: OutgoingTransaction[]; truncated: boolean }> {
  const wallet = new PublicKey(address);
  const candidates: Array<{ signature: string; timeMs: number | null; failed: boolean }> = [];
  let before: string | undefined;
  let truncated = true;
  for (let page = 0; page < MAX_PAGES; page++) {
    const list = await connection.getSignaturesForAddress(wallet, { limit: PAGE, ...(before ? { before } : {}) }, 'confirmed');
    let reachedStart = false;
    for (const s of list) {
      const timeMs = s.blockTime === null || s.blockTime === undefined ? null : s.blockTime * 1000;
      if (timeMs !== null && timeMs < sinceMs) {
        reachedStart = true;
        break;
      }
      candidates.push({ signature: s.signature, timeMs, failed: s.err !== null });
    }
    if (reachedStart || list.length < PAGE) {
      truncated = false;
      break;
    }
    before = list[list.length - 1]!.signature;
  }
  const knownSet = candidates.length > 0 ? await known(candidates.map((c) => c.signature)) : new Set<string>();
  const found: OutgoingTransaction[] = [];
  for (const c of candidates) {
    if (knownSet.has(c.signature)) continue;
    if (await signedBy(connection, c.signature, address)) found.push({ hash: c.signature, timeMs: c.timeMs, failed: c.failed });
  }
  return { found, truncated };
}

/** Whether `address` is among the transaction's signers. A transaction the node no longer returns is kept (unknown). */
async function signedBy(connection: Connection, signature: string, address: string): Promise<boolean> {
  const tx = await connection.getTransaction(signature, { commitment: 'confirmed', maxSupportedTransactionVersion: 0 });
  if (!tx) return true;
  const message = tx.transaction.message;
  const signers = message.staticAccountKeys.slice(0, message.header.numRequiredSignatures);
  return signers.some((k) => k.toBase58() === address);
}
