import type { ChainAdapter } from '../../chains/types.js';

// Reconcile's chain reads (docs/journal.md, "Reconcile": "A node that does not answer"): the head, and the balances at a
// height or in the final state. Each carries the chain's RPC timeout (CHAIN_<NET>_<MODE>_RPC_TIMEOUT_MS, in the
// adapters' RPC clients); a read that fails is the node's failure, told apart from the ledger's by its type, so the run
// leaves that chain uncompared, names the reason, and goes on with the other chains.

/** A chain read of reconcile failed (a timeout, a refused connection, an error answer): the chain is not compared. */
export class ChainReadError extends Error {
  constructor(
    readonly network: string,
    cause: unknown,
  ) {
    super(cause instanceof Error ? cause.message : String(cause), { cause });
  }
}

const READS = new Set<PropertyKey>(['getHead', 'balancesAt', 'finalStateBalances']);

/** `adapter` with its chain reads' failures thrown as ChainReadError; everything else is the adapter itself. */
export function guardedReads<A extends ChainAdapter>(adapter: A): A {
  return new Proxy(adapter, {
    get(target, p) {
      const v = Reflect.get(target, p, target) as unknown;
      if (typeof v !== 'function') return v;
      if (!READS.has(p)) return v.bind(target);
      return async (...args: unknown[]) => {
        try {
          return await (v as (...a: unknown[]) => Promise<unknown>).apply(target, args);
        } catch (e) {
          throw new ChainReadError(target.network, e);
        }
      };
    },
  });
}
