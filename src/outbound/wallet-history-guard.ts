import { hasOutgoingHistory, type ChainAdapter } from '../../chains/types.js';
import type { NonceRef, WalletHistoryLedger } from '../ledger/outbound/outbound-store.js';

// The outbound engine's restore guard for wallets without account nonces (TRON, Solana; docs/outbound.md
// "Transactions the ledger does not know"). On EVM the chain's pending nonce says that a wallet sent transactions the
// ledger does not know; here the engine asks the chain for the wallet's recent outgoing transactions and the ledger
// which of them it knows (every attempt of every kind is stored before its first broadcast, so the gateway's own are
// always known; the chain is read first, the ledger second). Any other is noted and the wallet's sends wait.
//
// When: before the wallet's first send after a process start (looking back WALLET_LOOKBACK, default 72 h), again at
// every send while the wallet is held or its last look is older than RECHECK_MS (each later look starts where the
// previous one ended, less MARGIN_MS), and whenever a noted transaction still holds it (a cheap ledger query on every
// send, so a note made by another process holds this one too).

/** How far back the first look after a start reads, unless configured (OUTBOUND_WALLET_LOOKBACK_HOURS, OutboundDeps). */
export const DEFAULT_WALLET_LOOKBACK_MS = 72 * 3_600_000;
/** A wallet looked at longer ago than this is looked at again before its next send. */
export const RECHECK_MS = 10 * 60_000;
/** Overlap of a later look with the previous one (block times and the local clock disagree a little). */
const MARGIN_MS = 5 * 60_000;

interface Looked {
  /** Local time the last look started: the next one reads from here (less the margin). */
  throughMs: number;
  /** Whether it left the wallet held. */
  held: boolean;
}

/** Per process (one per database handle: a restarted service in the same process starts afresh). */
const looked = new WeakMap<WalletHistoryLedger, Map<string, Looked>>();
const inFlight = new WeakMap<WalletHistoryLedger, Map<string, Promise<string[]>>>();

/**
 * The transactions holding `w`'s sends (empty: sign on), or null when the adapter's family has account nonces (the
 * nonce guard answers there). Throws when the chain cannot be read: the caller waits, never signs unchecked.
 */
export async function heldWallet(
  ledger: WalletHistoryLedger,
  adapter: ChainAdapter,
  w: NonceRef,
  log?: { warn(o: object, msg: string): void },
  lookbackMs: number = DEFAULT_WALLET_LOOKBACK_MS,
): Promise<string[] | null> {
  if (!hasOutgoingHistory(adapter)) return null;
  const key = `${w.network}/${w.mode}/${w.address}`;
  const seen = mapOf(looked, ledger).get(key);
  if (seen && !seen.held && Date.now() - seen.throughMs < RECHECK_MS) return ledger.held(w);
  const running = mapOf(inFlight, ledger);
  const pending = running.get(key);
  if (pending) return pending;
  const look = (async () => {
    const startedMs = Date.now();
    const sinceMs = seen ? seen.throughMs - MARGIN_MS : startedMs - lookbackMs;
    const r = await adapter.unknownOutgoing(w.address, sinceMs, (hashes) => ledger.known(w, hashes));
    if (r.found.length > 0) await ledger.note(w, r.found);
    if (r.truncated)
      log?.warn(
        { network: w.network, mode: w.mode, wallet: w.address, since: new Date(sinceMs).toISOString() },
        "the wallet's outgoing transactions were listed only in part (page limit); older ones were not compared",
      );
    const held = await ledger.held(w);
    mapOf(looked, ledger).set(key, { throughMs: startedMs, held: held.length > 0 });
    return held;
  })();
  running.set(key, look);
  try {
    return await look;
  } finally {
    running.delete(key);
  }
}

function mapOf<V>(m: WeakMap<WalletHistoryLedger, Map<string, V>>, ledger: WalletHistoryLedger): Map<string, V> {
  let x = m.get(ledger);
  if (!x) m.set(ledger, (x = new Map()));
  return x;
}
