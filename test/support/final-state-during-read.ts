import type { BalanceQuery, ChainAdapter, FinalStateRead, FinalStateReader } from '../../chains/types.js';

/**
 * The real adapter, whose final state read first runs `during(minHeight)` (a deposit made and finalized while
 * reconcile reads, after it pinned its height), then reads for real. Every other member is the adapter's own.
 */
export function readingAfter(
  adapter: ChainAdapter & FinalStateReader,
  during: (minHeight: bigint, items: readonly BalanceQuery[]) => Promise<void>,
): ChainAdapter & FinalStateReader {
  return new Proxy(adapter, {
    get(target, p) {
      if (p === 'finalStateBalances')
        return async (minHeight: bigint, items: readonly BalanceQuery[]): Promise<FinalStateRead> => {
          await during(minHeight, items);
          return target.finalStateBalances(minHeight, items);
        };
      const v: unknown = Reflect.get(target, p, target);
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
}
