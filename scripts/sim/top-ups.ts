import type { Db } from '../../src/db/database.js';
import { acknowledgeUnexplained, listUnexplained } from '../../src/ledger/journal/unexplained.js';

// The runner's own token top-ups of hot wallets (seed.ts, seed-networks.ts): real transactions that the service's
// watcher sees and journals as `unexplained` (docs/journal.md). Each is named exactly as the journal names it on its
// network: EVM the 0x hash (lowercase hex), TRON the txID (bare lowercase hex, no 0x), Solana the base58 signature
// (case-sensitive: never lowercased). The drain acknowledges exactly these, as an operator would, and waits until
// every one of them was. Native coin set directly on a node (Anvil's setBalance, the TRON fake's ledger, a Solana
// airdrop) is no transaction the watcher could see: `nativeFunded` covers it, acknowledged after reconcile books it.

export interface TopUp {
  network: string;
  txId: string;
}

export class RunnerTopUps {
  readonly #byNetwork = new Map<string, Set<string>>();

  /** Top-ups of `network`, each id as the journal records it. */
  add(network: string, txIds: Iterable<string>): void {
    let ids = this.#byNetwork.get(network);
    if (!ids) this.#byNetwork.set(network, (ids = new Set()));
    for (const id of txIds) ids.add(id);
  }

  /** Exact match: same network, same id, same case. */
  has(network: string, txId: string): boolean {
    return this.#byNetwork.get(network)?.has(txId) ?? false;
  }

  list(): TopUp[] {
    return [...this.#byNetwork].flatMap(([network, ids]) => [...ids].map((txId) => ({ network, txId })));
  }
}

/**
 * Acknowledges every journaled unexplained entry (not reversed by a reorg) that is one of `topUps`, with `note`;
 * returns the top-ups no such entry names yet (the drain waits for them).
 */
export async function acknowledgeRunnerTopUps(db: Db, topUps: RunnerTopUps, note: string): Promise<TopUp[]> {
  const journaled = new Set<string>();
  for (const u of await listUnexplained(db, { all: true, limit: 1000 })) {
    if (u.reversed || !topUps.has(u.network, u.txHash)) continue;
    if (!u.acknowledged) await acknowledgeUnexplained(db, u.entryId, note);
    journaled.add(`${u.network} ${u.txHash}`);
  }
  return topUps.list().filter((t) => !journaled.has(`${t.network} ${t.txId}`));
}
