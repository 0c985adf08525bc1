import { jsonRpc } from './rpc.js';

// Solana chain faults for the simulator (issue #20 item 2; docs/simulation.md), on the LiteSVM endpoint
// (scripts/devnet/solana-rpc/) through its `svm_*` test controls:
// - blockhash expiry: every blockhash handed out so far ages past its last valid block height, so a transaction signed
//   before it can no longer land (preflight answers BlockhashNotFound; a held one is never landed);
// - dropped transactions: the next `count` transactions sent are accepted (signature returned) and never land, as a
//   leader that forwards them nowhere; or every transaction sent during `forMs` is;
// - a stalled leader: transactions sent during `forMs` are held, then either land (their blockhash still valid) or,
//   with `expire`, their blockhashes expire first so none of them lands.
// Each function takes the endpoint's own URL (never through the fault proxy) and returns what it did, for the event log.

/** Ages every blockhash out; returns the endpoint's slot afterwards. */
export async function expireSolanaBlockhashes(rpcUrl: string): Promise<{ slot: number }> {
  const slot = await jsonRpc<number>(rpcUrl, 'svm_expireBlockhash');
  return { slot };
}

/** Loses the next `count` transactions sent to the endpoint; returns how many are still to lose. */
export async function dropNextSolanaTransactions(rpcUrl: string, params: { count: number }): Promise<{ pending: number }> {
  if (!Number.isInteger(params.count) || params.count < 0) throw new Error(`count must be a non-negative integer, got ${params.count}`);
  return { pending: await jsonRpc<number>(rpcUrl, 'svm_dropNext', [params.count]) };
}

/** Loses every transaction sent during `forMs` milliseconds, then lands again. */
export async function dropSolanaTransactionsFor(rpcUrl: string, params: { forMs: number }): Promise<void> {
  await jsonRpc(rpcUrl, 'svm_pauseLanding', ['drop']);
  try {
    await new Promise((r) => setTimeout(r, Math.max(0, params.forMs)));
  } finally {
    await jsonRpc(rpcUrl, 'svm_resumeLanding');
  }
}

/** Holds every transaction sent during `forMs`, then lands the held ones, or (with `expire`) expires their blockhashes
 * first so that none of them ever lands. Returns the signatures that landed on resume. */
export async function stallSolanaLeader(rpcUrl: string, params: { forMs: number; expire?: boolean }): Promise<{ landed: string[] }> {
  await jsonRpc(rpcUrl, 'svm_pauseLanding', ['hold']);
  try {
    await new Promise((r) => setTimeout(r, Math.max(0, params.forMs)));
    if (params.expire) await jsonRpc(rpcUrl, 'svm_expireBlockhash');
  } catch (e) {
    // Resume even when the expiry failed: a leader left paused would stall the rest of the seed.
    await jsonRpc(rpcUrl, 'svm_resumeLanding');
    throw e;
  }
  return { landed: await jsonRpc<string[]>(rpcUrl, 'svm_resumeLanding') };
}
